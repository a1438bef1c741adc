#include "utils/common/metrics_probe.h"

#include "shared/proto/mds.capnp.h"
#include "shared/proto/storage.capnp.h"
#include "shared/rpc/metrics_wire.h"
#include "utils/common/call_once.h"

namespace pvfs {

Result<metrics::Families> fetch_metrics(DaemonKind kind, const Endpoint& at, const Secret& key,
                                        std::chrono::milliseconds timeout) {
  return call_once<metrics::Families>(
      at, key, timeout,
      [&](rpc::OutMessage& m) {
        if (kind == DaemonKind::mds) m.init_body<proto::mds::Request>().setMetrics();
        else m.init_body<proto::storage::Request>().setMetrics();
      },
      [&](rpc::InMessage& reply) -> Result<metrics::Families> {
        if (kind == DaemonKind::mds) {
          auto body = reply.body<proto::mds::Reply>();
          if (!body.isMetrics()) return Status(Errc::io, "unexpected reply to metrics");
          return rpc::from_wire(body.getMetrics());
        }
        auto body = reply.body<proto::storage::Reply>();
        if (!body.isMetrics()) return Status(Errc::io, "unexpected reply to metrics");
        return rpc::from_wire(body.getMetrics());
      });
}

Status send_log_level(DaemonKind kind, const Endpoint& at, const Secret& key,
                      std::chrono::milliseconds timeout, const std::string& level) {
  return call_once(at, key, timeout, [&](rpc::OutMessage& m) {
    if (kind == DaemonKind::mds) m.init_body<proto::mds::Request>().setSetLogLevel(level);
    else m.init_body<proto::storage::Request>().setSetLogLevel(level);
  });
}

}  // namespace pvfs
