// qosPolicy: (pvfs-ctl qos policy) switches the QoS policy at run time (mds/qos_host.h).
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> qos_policy(Call& c) {
  co_return co_await c.mds.qos().set_policy(text(c.req.getQosPolicy()), c.reply);
}

}  // namespace pvfs::mds::handlers
