// qosReport: a storage server's period, answered with the plan (mds/qos_host.h).
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> qos_report(Call& c) { co_return c.mds.qos().report(c.req.getQosReport(), c.reply); }

}  // namespace pvfs::mds::handlers
