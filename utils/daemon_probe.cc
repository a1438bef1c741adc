#include "utils/daemon_probe.h"

#include <asio.hpp>

#include "shared/proto/mds.capnp.h"
#include "shared/proto/storage.capnp.h"
#include "shared/rpc/connection.h"

namespace pvfs {

namespace {

template <typename T>
T run(asio::awaitable<T> task) {
  asio::io_context io(1);
  std::optional<T> out;
  asio::co_spawn(io, std::move(task), [&](std::exception_ptr e, T value) {
    if (e) out.emplace(Status(Errc::io, "internal error"));
    else out.emplace(std::move(value));
    io.stop();
  });
  io.run();
  return std::move(*out);
}

DaemonReport from_wire(proto::DaemonStatus::Reader s) {
  DaemonReport r;
  r.kind = s.getKind();
  r.id = s.getId();
  r.version = s.getVersion();
  r.uptime_ms = s.getUptimeMs();
  r.requests = s.getRequests();
  for (auto j : s.getJobs())
    r.jobs.push_back({j.getJobId(), j.getOps(), j.getBytesRead(), j.getBytesWritten()});
  return r;
}

asio::awaitable<Result<std::unique_ptr<rpc::InMessage>>> ask(const Endpoint& at, const Secret& key,
                                                             std::chrono::milliseconds timeout,
                                                             rpc::OutMessage& out) {
  auto conn = co_await rpc::Connection::connect(at, key, timeout);
  if (!conn) co_return conn.status();
  (*conn)->start({});
  auto reply = co_await (*conn)->call(out, {}, timeout);
  (*conn)->close();
  co_return reply;
}

}  // namespace

Result<DaemonReport> probe_daemon(DaemonKind kind, const Endpoint& at, const Secret& key,
                                  std::chrono::milliseconds timeout) {
  return run([&]() -> asio::awaitable<Result<DaemonReport>> {
    rpc::OutMessage out;
    if (kind == DaemonKind::mds) out.init_body<proto::mds::Request>().setStatus();
    else out.init_body<proto::storage::Request>().setStatus();
    auto reply = co_await ask(at, key, timeout, out);
    if (!reply) co_return reply.status();
    if (kind == DaemonKind::mds)
      co_return from_wire((*reply)->body<proto::mds::Reply>().getStatus());
    co_return from_wire((*reply)->body<proto::storage::Reply>().getStatus());
  }());
}

Result<std::vector<ServerView>> list_servers(const Endpoint& mds, const Secret& key,
                                             std::chrono::milliseconds timeout) {
  return run([&]() -> asio::awaitable<Result<std::vector<ServerView>>> {
    rpc::OutMessage out;
    out.init_body<proto::mds::Request>().setGetServers();
    auto reply = co_await ask(mds, key, timeout, out);
    if (!reply) co_return reply.status();
    std::vector<ServerView> servers;
    for (auto s : (*reply)->body<proto::mds::Reply>().getServers())
      servers.push_back({s.getId(), s.getAddress(), s.getCapacityBytes(), s.getFreeBytes(),
                         s.getAlive()});
    co_return servers;
  }());
}

}  // namespace pvfs
