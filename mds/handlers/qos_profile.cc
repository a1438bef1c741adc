// qosProfile: (pvfs-ctl qos profile) starts or ends a job's profiling run (mds/qos_host.h).
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> qos_profile(Call& c) {
  co_return co_await c.mds.qos().profile(c.req.getQosProfile(), c.reply);
}

}  // namespace pvfs::mds::handlers
