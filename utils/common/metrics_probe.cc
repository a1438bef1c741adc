#include "utils/common/metrics_probe.h"

#include <optional>

#include <asio.hpp>

#include "shared/proto/mds.capnp.h"
#include "shared/proto/storage.capnp.h"
#include "shared/rpc/connection.h"
#include "shared/rpc/metrics_wire.h"

namespace pvfs {

namespace {

// Runs one request on a connection of its own, in an io_context of its own.
// `fill` builds the request body; `read` turns the reply into the result.
template <typename T, typename Fill, typename Read>
Result<T> call(const Endpoint& at, const Secret& key, std::chrono::milliseconds timeout, Fill fill, Read read) {
  asio::io_context io(1);
  std::optional<Result<T>> out;
  auto task = [&]() -> asio::awaitable<Result<T>> {
    rpc::OutMessage request;
    fill(request);
    auto conn = co_await rpc::Connection::connect(at, key, timeout);
    if (!conn) co_return conn.status();
    (*conn)->start({});
    auto reply = co_await (*conn)->call(request, {}, timeout);
    (*conn)->close();
    if (!reply) co_return reply.status();
    try {
      co_return read(**reply);
    } catch (const kj::Exception& e) {
      co_return Status(Errc::io, std::string("malformed reply: ") + e.getDescription().cStr());
    }
  };
  asio::co_spawn(io, task(), [&](std::exception_ptr e, Result<T> value) {
    if (e) out.emplace(Status(Errc::io, "internal error"));
    else out.emplace(std::move(value));
    io.stop();
  });
  io.run();
  return std::move(*out);
}

}  // namespace

Result<metrics::Families> fetch_metrics(DaemonKind kind, const Endpoint& at, const Secret& key,
                                        std::chrono::milliseconds timeout) {
  return call<metrics::Families>(
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
  auto done = call<bool>(
      at, key, timeout,
      [&](rpc::OutMessage& m) {
        if (kind == DaemonKind::mds) m.init_body<proto::mds::Request>().setSetLogLevel(level);
        else m.init_body<proto::storage::Request>().setSetLogLevel(level);
      },
      [](rpc::InMessage&) -> Result<bool> { return true; });
  return done.status();
}

}  // namespace pvfs
