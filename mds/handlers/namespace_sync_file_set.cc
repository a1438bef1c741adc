// syncFileSet (fsync): replies once every change to the file set made before
// the request arrived is on disk.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> sync_file_set(Call& c) {
  const InodeId ino(c.req.getSyncFileSet().getIno());
  if (auto s = c.at(ino.value); !s) co_return s.status();
  co_return c.none_or(co_await c.mds.sync_fileset(ino.fileset()));
}

}  // namespace pvfs::mds::handlers
