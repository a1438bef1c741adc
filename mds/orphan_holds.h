// Leases on the unlinked files clients keep open. A client that unlinks (or
// replaces by rename) a file it has open asks the MDS to keep the file's
// data until it closes it (Unlink.keepOpen): a held orphan. If that client
// dies, no close ever comes, and without a lease the data would stay on
// the storage servers for good. So each held orphan has a lease here: the
// client renews it (holdOrphan) every third of `lease`, and one not renewed
// for a whole lease is given to the orphan collector. A file removed while
// another client has it open is held the same way, for as long as that
// client's open lease runs (mds/open_leases.h). A held orphan this
// member finds in a file set it loads (after a restart, a take-over or a
// move) starts a fresh lease, so its client has a whole lease to renew it
// here. Pure: time comes in as an argument; the MDS keeps one per member.
#pragma once

#include <chrono>
#include <map>
#include <vector>

#include "shared/clock.h"
#include "shared/ids.h"

namespace pvfs::mds {

class OrphanHolds {
 public:
  explicit OrphanHolds(std::chrono::milliseconds lease) : lease_(lease) {}

  std::chrono::milliseconds lease() const { return lease_; }
  // `ino` is held from `now` for a lease: a new hold or a renewal.
  void hold(InodeId ino, TimePoint now) { hold_until(ino, now + lease_); }
  // `ino` is held until `until` at least (a hold never gets shorter).
  void hold_until(InodeId ino, TimePoint until) {
    auto [it, added] = expiry_.try_emplace(ino, until);
    if (!added && it->second < until) it->second = until;
  }
  // A held orphan found in a file set loaded here: a fresh lease, unless
  // it has one already.
  void adopt(InodeId ino, TimePoint now) { expiry_.try_emplace(ino, now + lease_); }
  // Its client closed it, or the collector took it: no lease any more.
  void forget(InodeId ino) { expiry_.erase(ino); }
  // The orphans whose lease ran out at or before `now`, in inode order
  // (still listed: forget() each once it is released).
  std::vector<InodeId> lapsed(TimePoint now) const {
    std::vector<InodeId> out;
    for (const auto& [ino, expiry] : expiry_)
      if (expiry <= now) out.push_back(ino);
    return out;
  }
  bool held(InodeId ino) const { return expiry_.contains(ino); }
  size_t size() const { return expiry_.size(); }

 private:
  std::chrono::milliseconds lease_;
  std::map<InodeId, TimePoint> expiry_;
};

}  // namespace pvfs::mds
