// clusterStatus (pvfs-ctl mds): the cluster as this member sees it.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> cluster_status(Call& c) {
  c.mds.cluster().fill_status(c.reply.initCluster());
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
