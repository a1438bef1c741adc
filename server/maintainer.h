// The metadata maintainer of the two-choice paper (Dai et al., §V-C): on a
// home server, workers pull redirected ranges back from the servers holding
// them whenever both ends are idle, copying only the bytes the entry still
// answers for; then they record a local entry stamped right after the pulled
// entry, so every newer redirect or write, including one made while the
// pull ran, still wins. (The paper stamps it with the pull's start time,
// which would also erase a newer redirect that lies inside the pulled range
// but was made before the pull began, and lose its data.) A collector then
// tells the other servers to drop fragments nothing refers to any more.
// After a burst the redirect tables drain to empty. When this server's disk
// is full, pulls wait (1 s, doubling up to a minute) instead of reading the
// same fragments every round to fail writing them.
// Runs on the daemon's network thread, through the StorageService. Its
// rounds are public so in-process tests run them one at a time; start()
// paces them with asio timers on the steady clock (not the injected one),
// and the garbage grace and the wait for room are measured on the
// service's clock.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>

#include <asio.hpp>

#include "server/storage_service.h"
#include "config/config.h"
#include "shared/rpc/network.h"
#include "shared/rpc/origin.h"
#include "shared/rpc/peer.h"

namespace pvfs {

class Maintainer {
 public:
  // Reaches the other servers through `network` (which must outlive it).
  Maintainer(asio::any_io_executor ex, const Config& config, const Secret& key, uint32_t id,
             StorageService& service, rpc::Network& network = rpc::tcp_network());
  // Starts config.maintainer_threads pull workers and the collector.
  void start();
  void stop();

  // One pull worker's round: while this server is idle, pulls one entry of
  // each redirected object home (oldest first) from servers that are idle
  // too. Returns the entries pulled.
  asio::awaitable<unsigned> pull_round();
  // One collector round: tells each server holding garbage older than the
  // grace to drop it, and forgets what was dropped.
  asio::awaitable<void> collect_round();

 private:
  asio::awaitable<void> pull_worker();
  asio::awaitable<void> collector();
  // Pulls entry `e` of `object` home. False when it had to stop (a server
  // got busy or unreachable); the entry stays for a later round.
  asio::awaitable<bool> pull(ObjectId object, redirect::Entry e);
  // A pull found this server's disk full (`why`): pulls wait, longer each
  // time it stays full, and the first time says so in the log.
  void no_room(const Status& why);
  // Whether `server` has no data request outstanding (a probe without a round).
  asio::awaitable<bool> remote_idle(ServerId server);
  asio::awaitable<Result<std::unique_ptr<rpc::InMessage>>> call(ServerId server, rpc::OutMessage& out);
  asio::awaitable<void> pause(std::chrono::milliseconds d);

  asio::any_io_executor ex_;
  const Config& config_;
  uint32_t id_;
  StorageService& service_;
  std::map<uint32_t, std::unique_ptr<rpc::Peer>> peers_;
  std::set<std::pair<ObjectId, uint64_t>> in_progress_;  // (object, entry seq)
  std::mt19937_64 request_ids_{std::random_device{}()};  // of pull-backs, for the logs
  bool stopped_ = false;
  // While set, and until then on the service's clock, pull rounds do
  // nothing: the last pull found no room on the disk (no_room()).
  std::optional<TimePoint> no_room_until_;
  std::chrono::milliseconds no_room_wait_{1000};
};

}  // namespace pvfs
