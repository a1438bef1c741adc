// qosReport: a storage server's period, answered with the plan (mds/qos_host.h).
// Only a storage server reports, and only as itself.
#include <fmt/format.h>

#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> qos_report(Call& c) {
  const auto who = c.conn->peer_identity();
  const auto r = c.req.getQosReport();
  if (who.kind != rpc::Kind::server || who.id != r.getServer())
    co_return Status(Errc::access_denied,
                     fmt::format("a QoS report comes from storage server {} itself", r.getServer()));
  co_return c.mds.qos().report(r, c.reply);
}

}  // namespace pvfs::mds::handlers
