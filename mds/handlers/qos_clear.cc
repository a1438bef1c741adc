// qosClear: (pvfs-ctl qos clear) drops a job's goal (mds/qos_host.h).
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> qos_clear(Call& c) {
  co_return co_await c.mds.qos().clear_goal(text(c.req.getQosClear()), c.reply);
}

}  // namespace pvfs::mds::handlers
