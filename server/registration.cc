#include "server/registration.h"

#include "shared/log.h"
#include "shared/proto/mds.capnp.h"
#include "shared/rpc/blocking.h"

namespace pvfs {

Registration::Registration(asio::any_io_executor ex, const Config& config, const Secret& key,
                           uint32_t id, Endpoint advertised, ObjectStore& store,
                           asio::thread_pool& disk_pool)
    : ex_(ex),
      config_(config),
      id_(id),
      advertised_(std::move(advertised)),
      store_(store),
      disk_pool_(disk_pool),
      mds_(ex, config.mds.front().address, key, std::chrono::milliseconds(config.connect_timeout_ms)),
      timer_(ex) {}

void Registration::start() { asio::co_spawn(ex_, loop(), asio::detached); }

void Registration::stop() {
  stopped_ = true;
  timer_.cancel();
  mds_.close();
}

asio::awaitable<void> Registration::loop() {
  bool registered = false;
  bool reachable = true;
  while (!stopped_) {
    auto space = co_await rpc::run_blocking(disk_pool_, [this] { return store_.space(); });
    rpc::OutMessage out;
    auto req = out.init_body<proto::mds::Request>();
    auto info = registered ? req.initHeartbeat() : req.initRegisterServer();
    info.setId(id_);
    info.setAddress(advertised_.to_string());
    if (space) {
      info.setCapacityBytes(space->capacity_bytes);
      info.setFreeBytes(space->free_bytes);
    }
    info.setAlive(true);
    auto reply = co_await mds_.call(out, {}, std::chrono::milliseconds(config_.rpc_timeout_ms));
    if (reply) {
      if (!registered) spdlog::info("registered with metadata server {}", mds_.address().to_string());
      if (!reachable) spdlog::info("metadata server {} is reachable again", mds_.address().to_string());
      registered = true;
      reachable = true;
    } else {
      if (reachable)
        spdlog::warn("cannot reach metadata server {}: {} (retrying)", mds_.address().to_string(),
                     reply.status().to_string());
      reachable = false;
      registered = false;  // the MDS may have restarted: register again
    }
    timer_.expires_after(std::chrono::milliseconds(config_.heartbeat_interval_ms));
    asio::error_code ec;
    co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

}  // namespace pvfs
