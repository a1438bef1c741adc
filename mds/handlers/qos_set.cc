// qosSet: (pvfs-ctl qos set, a client's PVFS_QOS_RUNTIME) a job's goal (mds/qos_host.h).
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> qos_set(Call& c) { co_return co_await c.mds.qos().set_goal(c.req.getQosSet(), c.reply); }

}  // namespace pvfs::mds::handlers
