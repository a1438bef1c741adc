// pvfs-ctl locks: asks the metadata servers of a config for the fcntl, OFD
// and flock locks of their file sets (mds/lock_host.h), and renders the
// holders and waiters as tables. The rendering is pure; locks_status()
// blocks on the network.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "shared/secret.h"
#include "shared/status.h"

namespace pvfs {

struct LockRow {
  uint32_t member = 0;  // the metadata server that keeps it
  uint64_t ino = 0;
  uint64_t client = 0;
  uint64_t owner = 0;
  bool flock = false;
  bool exclusive = false;
  uint64_t first = 0;
  uint64_t last = 0;  // inclusive; UINT64_MAX: to the end of the file
  uint32_t pid = 0;
  uint64_t waiter = 0;   // waiters only
  uint64_t wait_ms = 0;  // waiters only
};

struct LocksView {
  uint32_t lease_ms = 0;
  std::vector<LockRow> held;
  std::vector<LockRow> waiting;
  std::vector<std::string> unreachable;  // "mds N: why"
};

// The locks of inode `ino` (0: every lock of the cluster), from every
// metadata server of `config` at once: the owner of its file set answers,
// the others refuse. Errors: unavailable when no member answered.
Result<LocksView> locks_status(const Config& config, const Secret& key, std::chrono::milliseconds timeout,
                               uint64_t ino);

// Two tables, holders and waiters; `path` names the file when given.
std::string render_locks(const LocksView& view, const std::string& path);

}  // namespace pvfs
