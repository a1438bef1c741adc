// Group commit of the syncs of one database: which sync each caller needs,
// when the next one starts, and when a caller is covered. A sync covers the
// commits made before it started, so a caller that arrives while one runs
// needs the next; every caller that arrives meanwhile shares that next one.
// Pure: no I/O, no clock. Driven by MdsService (fsync of a file set, in
// mds/mds_durability.cc). Not thread-safe: owned by one executor.
#pragma once

#include <cstdint>

#include "shared/status.h"

namespace pvfs::mds {

class GroupCommit {
 public:
  // A caller whose commits are made arrives. Returns its ticket: the number
  // of the sync that covers it.
  uint64_t arrive() {
    wanted_ = started_ + 1;
    return wanted_;
  }
  // Whether a sync should start now: a caller waits for one and none runs.
  bool should_start() const { return !running_ && wanted_ > started_; }
  // Marks the next sync started (requires should_start()); it covers every
  // caller that arrived before this call.
  void start() {
    PVFS_CHECK(should_start());
    running_ = true;
    started_ = wanted_;
  }
  // The running sync ended (requires one running).
  void finish() {
    PVFS_CHECK(running_);
    running_ = false;
    finished_ = started_;
  }
  // Whether the caller holding `ticket` is covered by a finished sync.
  bool done(uint64_t ticket) const { return finished_ >= ticket; }
  bool running() const { return running_; }

 private:
  uint64_t started_ = 0;   // syncs started
  uint64_t finished_ = 0;  // syncs finished
  uint64_t wanted_ = 0;    // the sync the newest caller needs
  bool running_ = false;
};

}  // namespace pvfs::mds
