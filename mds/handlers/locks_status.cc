// lockStatus: pvfs-ctl locks, the holders and waiters of one inode or of
// every file set this member holds (mds/lock_host.h).
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> lock_status(Call& c) {
  co_return c.mds.locks().status(c.req.getLockStatus(), c.reply);
}

}  // namespace pvfs::mds::handlers
