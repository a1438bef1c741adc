// metrics (pvfs-ctl stats and top): this daemon's counters and gauges.
#include "mds/handlers/call.h"

#include "shared/rpc/metrics_wire.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> metrics(Call& c) {
  const auto families = c.mds.metrics();
  rpc::to_wire(families, c.reply.initMetrics(static_cast<unsigned>(families.size())));
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
