// Keeps this storage server known to every metadata server of the cluster
// (each member chooses layouts for the files it creates and deletes the
// objects of files unlinked there): registers with each at start, then
// heartbeats every heartbeat_interval_ms with its capacity, one loop and one
// connection per member, so a member that is down delays no other. Logs
// once when a member becomes unreachable and once when it is back.
// Runs on the daemon's network thread.
#pragma once

#include <memory>
#include <vector>

#include <asio.hpp>

#include "server/object_store.h"
#include "config/config.h"
#include "shared/rpc/peer.h"

namespace pvfs {

class Registration {
 public:
  Registration(asio::any_io_executor ex, const Config& config, const Secret& key, uint32_t id,
               Endpoint advertised, ObjectStore& store, asio::thread_pool& disk_pool);
  // Starts one heartbeat loop per [[mds]] of the config; returns at once.
  void start();
  void stop();

 private:
  // One metadata server and the loop that keeps us registered with it.
  struct Member {
    Member(asio::any_io_executor ex, const DaemonEntry& entry, const rpc::Auth& key,
           std::chrono::milliseconds connect_timeout)
        : id(entry.id), peer(ex, entry.address, key, connect_timeout), timer(ex) {}
    uint32_t id;
    rpc::Peer peer;
    asio::steady_timer timer;
  };
  asio::awaitable<void> loop(Member& member);

  asio::any_io_executor ex_;
  const Config& config_;
  uint32_t id_;
  Endpoint advertised_;
  ObjectStore& store_;
  asio::thread_pool& disk_pool_;
  std::vector<std::unique_ptr<Member>> members_;
  bool stopped_ = false;
};

}  // namespace pvfs
