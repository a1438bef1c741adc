// qosTrain: (pvfs-ctl qos train) trains a job's model from its profile (mds/qos_host.h).
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> qos_train(Call& c) { co_return co_await c.mds.qos().train(c.req.getQosTrain(), c.reply); }

}  // namespace pvfs::mds::handlers
