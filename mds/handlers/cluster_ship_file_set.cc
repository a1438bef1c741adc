// shipFileSet: one piece of a file set moving here.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> ship_file_set(Call& c) {
  co_return c.none_or(co_await c.mds.cluster().receive_chunk(c.req.getShipFileSet(), c.msg.data().span()));
}

}  // namespace pvfs::mds::handlers
