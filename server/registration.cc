#include "server/registration.h"

#include "shared/log.h"
#include "shared/proto/mds.capnp.h"
#include "shared/rpc/blocking.h"
#include "shared/rpc/convert.h"

namespace pvfs {

Registration::Registration(asio::any_io_executor ex, const Config& config, const Secret& key,
                           uint32_t id, Endpoint advertised, ObjectStore& store,
                           asio::thread_pool& disk_pool)
    : ex_(ex),
      config_(config),
      id_(id),
      advertised_(std::move(advertised)),
      store_(store),
      disk_pool_(disk_pool) {
  for (const auto& m : config.mds)
    members_.push_back(
        std::make_unique<Member>(ex, m, rpc::Auth(key, {rpc::Kind::server, id}, config.encrypt),
                                 std::chrono::milliseconds(config.connect_timeout_ms)));
}

void Registration::start() {
  for (auto& m : members_) asio::co_spawn(ex_, loop(*m), asio::detached);
}

void Registration::stop() {
  stopped_ = true;
  for (auto& m : members_) {
    m->timer.cancel();
    m->peer.close();
  }
}

asio::awaitable<void> Registration::loop(Member& member) {
  const std::string name = fmt::format("metadata server {} ({})", member.id, member.peer.address().to_string());
  bool registered = false;
  bool reachable = true;
  while (!stopped_) {
    auto space = co_await rpc::run_blocking(disk_pool_, [this] { return store_.space(); });
    rpc::OutMessage out;
    auto req = out.init_body<proto::mds::Request>();
    ServerInfo info{ServerId(id_), advertised_.to_string(), 0, 0, true};
    if (space) {
      info.capacity_bytes = space->capacity_bytes;
      info.free_bytes = space->free_bytes;
    }
    rpc::to_wire(info, registered ? req.initHeartbeat() : req.initRegisterServer());
    auto reply = co_await member.peer.call(out, {}, std::chrono::milliseconds(config_.rpc_timeout_ms));
    if (reply) {
      if (!registered) spdlog::info("registered with {}", name);
      if (!reachable) spdlog::info("{} is reachable again", name);
      registered = true;
      reachable = true;
    } else {
      if (reachable) spdlog::warn("cannot reach {}: {} (retrying)", name, reply.status().to_string());
      reachable = false;
      registered = false;  // the MDS may have restarted: register again
      // After a partition heals, TCP resends on the old connection only
      // when its back-off (seconds, doubling while cut off) runs out; the
      // MDS counts this server dead until then. Connect afresh instead.
      if (reply.code() == Errc::timeout) member.peer.close();
    }
    member.timer.expires_after(std::chrono::milliseconds(config_.heartbeat_interval_ms));
    asio::error_code ec;
    co_await member.timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

}  // namespace pvfs
