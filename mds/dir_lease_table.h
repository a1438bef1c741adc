// Which clients hold a lease on which directory's names, and until when.
// A client that found a name absent may ask for the whole directory's names
// (leaseDir); it then answers the kernel's lookups of other absent names
// itself, which saves one of a create's two trips to the MDS. Before the
// MDS adds a name to a leased directory for anyone else (create, mkdir,
// symlink, link, rename into it), it recalls every other holder's lease
// and waits for each to answer or for its lease to run out. Removing a
// name needs no recall: a client that thinks a name exists asks the MDS.
// Pure: time comes in as an argument; holders are opaque keys (the MDS
// uses its connections' addresses) with a handle the caller recalls through.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "shared/clock.h"
#include "shared/ids.h"

namespace pvfs::mds {

class DirLeaseTable {
 public:
  using Holder = const void*;
  struct Lease {
    Holder holder = nullptr;
    std::weak_ptr<void> handle;  // what the caller recalls through (a connection)
    TimePoint until;
  };

  // `holder` was told `dir`'s names and may rely on them until `until`.
  void grant(InodeId dir, Holder holder, std::weak_ptr<void> handle, TimePoint until, TimePoint now);
  // Extends `holder`'s lease on `dir` to `until`, if it still runs at `now`.
  // Returns whether it did.
  bool renew(InodeId dir, Holder holder, TimePoint until, TimePoint now);
  // Whether any lease on `dir` may still run at `now` (a cheap check before
  // take_others()).
  bool leased(InodeId dir, TimePoint now) const;
  // The leases on `dir` that still run at `now`, of holders other than
  // `except`, removed from the table: the caller recalls them.
  std::vector<Lease> take_others(InodeId dir, Holder except, TimePoint now);
  // Every lease still running on a directory of file set `set`, removed
  // (the set moves to another member, which knows none of them).
  std::vector<std::pair<InodeId, Lease>> take_fileset(FileSetId set, TimePoint now);
  // Whether no lease was given or all were taken (expired ones may remain).
  bool empty() const { return by_dir_.empty(); }
  // Leases running at `now` (pvfs_mds_dir_leases).
  size_t count(TimePoint now) const;

 private:
  // Drops expired leases everywhere, at most once per `kPruneEvery` grants.
  void prune(TimePoint now);
  static constexpr uint32_t kPruneEvery = 1024;
  std::unordered_map<uint64_t, std::vector<Lease>> by_dir_;
  uint32_t grants_since_prune_ = 0;
};

}  // namespace pvfs::mds
