// qosStatus: (pvfs-ctl qos status, qos list) the coordinator's view (mds/qos_host.h).
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> qos_status(Call& c) { co_return c.mds.qos().status(c.reply); }

}  // namespace pvfs::mds::handlers
