// setLogLevel (pvfs-ctl loglevel): this daemon's log level.
#include "mds/handlers/call.h"

#include "shared/log_level.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> set_log_level(Call& c) {
  co_return c.none_or(pvfs::set_log_level(text(c.req.getSetLogLevel())));
}

}  // namespace pvfs::mds::handlers
