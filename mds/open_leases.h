// Which clients have had a file open lately. Every open (and create) a
// client sends the MDS starts a lease on that file for that client, and the
// client renews the leases of the files it has open every third of `lease`
// (openFiles). When another client removes a file's last name while some
// client's lease on it runs, the MDS keeps the file's data (a held orphan,
// mds/orphan_holds.h) for as long as that client keeps renewing: a process
// on one node reads and writes a file another node deleted until it closes
// it, as on a local file system (and as Lustre does). A client that closed
// the file stops renewing, so the data goes at most one lease after its
// last close. Pure: time comes in as an argument; clients are opaque keys
// (the MDS uses its connections' addresses; a reused address only makes a
// file kept a lease longer). Each open costs one map update; expired leases
// are dropped in the order they were given (prune()).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <unordered_map>
#include <utility>
#include <vector>

#include "shared/clock.h"
#include "shared/ids.h"

namespace pvfs::mds {

class OpenLeases {
 public:
  using Holder = uintptr_t;

  explicit OpenLeases(std::chrono::milliseconds lease) : lease_(lease) {}

  std::chrono::milliseconds lease() const { return lease_; }
  // `holder` opened `ino`, or still has it open: a lease from `now`.
  void opened(InodeId ino, Holder holder, TimePoint now) {
    const TimePoint until = now + lease_;
    auto& holders = by_file_[ino.value];
    bool found = false;
    for (auto& [h, expiry] : holders) {
      if (h != holder) continue;
      expiry = until;
      found = true;
    }
    if (!found) holders.emplace_back(holder, until);
    given_.emplace_back(until, ino.value);
  }
  // When the last lease on `ino` held by anyone but `except` runs out (a
  // time not after `now`: none).
  TimePoint open_elsewhere_until(InodeId ino, Holder except, TimePoint now) const {
    TimePoint last = now;
    auto it = by_file_.find(ino.value);
    if (it == by_file_.end()) return last;
    for (const auto& [h, expiry] : it->second)
      if (h != except && expiry > last) last = expiry;
    return last;
  }
  // Forgets the leases that ran out at or before `now`.
  void prune(TimePoint now) {
    while (!given_.empty() && given_.front().first <= now) {
      const uint64_t ino = given_.front().second;
      given_.pop_front();
      auto it = by_file_.find(ino);
      if (it == by_file_.end()) continue;
      std::erase_if(it->second, [now](const auto& h) { return h.second <= now; });
      if (it->second.empty()) by_file_.erase(it);
    }
  }
  // Files with a lease (not yet pruned).
  size_t files() const { return by_file_.size(); }

 private:
  std::chrono::milliseconds lease_;
  std::unordered_map<uint64_t, std::vector<std::pair<Holder, TimePoint>>> by_file_;
  // (expiry, file) in the order given: expiries only grow, as the lease is fixed.
  std::deque<std::pair<TimePoint, uint64_t>> given_;
};

}  // namespace pvfs::mds
