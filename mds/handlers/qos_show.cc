// qosShow: (pvfs-ctl qos show) a job's profile and model (mds/qos_host.h).
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> qos_show(Call& c) { co_return c.mds.qos().show(text(c.req.getQosShow()), c.reply); }

}  // namespace pvfs::mds::handlers
