// lock: one client's fcntl/flock lock operation, on the lock table of the
// inode's file set (mds/lock_host.h).
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> lock(Call& c) {
  co_return co_await c.mds.locks().lock(c.req.getLock(), c.reply);
}

}  // namespace pvfs::mds::handlers
