// Keeps this storage server known to the metadata server: registers at
// start, then heartbeats every heartbeat_interval_ms with its capacity.
// Logs once when the MDS becomes unreachable and once when it is back.
// Runs on the daemon's network thread.
#pragma once

#include <memory>

#include <asio.hpp>

#include "server/object_store.h"
#include "shared/config.h"
#include "shared/rpc/peer.h"

namespace pvfs {

class Registration {
 public:
  Registration(asio::any_io_executor ex, const Config& config, const Secret& key, uint32_t id,
               Endpoint advertised, ObjectStore& store, asio::thread_pool& disk_pool);
  // Starts the heartbeat loop; returns at once.
  void start();
  void stop();

 private:
  asio::awaitable<void> loop();

  asio::any_io_executor ex_;
  const Config& config_;
  uint32_t id_;
  Endpoint advertised_;
  ObjectStore& store_;
  asio::thread_pool& disk_pool_;
  rpc::Peer mds_;
  asio::steady_timer timer_;
  bool stopped_ = false;
};

}  // namespace pvfs
