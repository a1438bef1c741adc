// ioschedStatus: (pvfs-ctl iosched) the delegate's I/O-step scheduler (mds/iosched_host.h).
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> iosched_status(Call& c) {
  co_return c.mds.iosched().status(c.reply);
}

}  // namespace pvfs::mds::handlers
