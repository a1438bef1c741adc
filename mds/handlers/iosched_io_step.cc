// ioStep: the client's steps (claims and ends), answered by the delegate's scheduler (mds/iosched_host.h).
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> io_step(Call& c) {
  co_return c.mds.iosched().io_step(c.req.getIoStep(), c.reply);
}

}  // namespace pvfs::mds::handlers
