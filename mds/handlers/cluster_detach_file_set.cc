// detachFileSet: the owner of a file set's root entry removes it (rmdir).
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> detach_file_set(Call& c) {
  co_return c.none_or(c.mds.cluster().detach_request(FileSetId(c.req.getDetachFileSet())));
}

}  // namespace pvfs::mds::handlers
