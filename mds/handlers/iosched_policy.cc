// ioschedPolicy: (pvfs-ctl iosched policy) switches the scheduler's policy (mds/iosched_host.h).
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> iosched_policy(Call& c) {
  co_return c.mds.iosched().set_policy(text(c.req.getIoschedPolicy()), c.reply);
}

}  // namespace pvfs::mds::handlers
