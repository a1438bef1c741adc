// The cluster's health in one word and its reasons, as `ceph -s` gives it:
// what pvfs-ctl health (and pvfs-cluster status) gathered from the daemons
// in, HEALTH_OK / HEALTH_WARN / HEALTH_ERR and one line per reason out.
// Pure: no I/O, no clock (ages and clock offsets come in measured); the
// metadata server runs the same judgement over what it sees for its
// pvfs_mds_health gauge. Thread-safe (no state).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pvfs::health {

// Ordered: a verdict is the worst of its reasons.
enum class Level { ok = 0, warn = 1, err = 2 };

// "HEALTH_OK", "HEALTH_WARN", "HEALTH_ERR".
std::string_view level_name(Level level);

// Where a warning becomes one. Defaults as pvfs-ctl(1) documents them.
struct Thresholds {
  double full_warn_percent = 90;       // a storage server this full (used / capacity): WARN
  double full_err_percent = 97;        // ... and this full: ERR (writes are about to fail)
  uint64_t slow_request_ms = 30000;    // a request in progress this long is slow: WARN
  uint64_t delete_backlog_files = 10000;  // unlinked files awaiting deletion: WARN
  uint64_t clock_skew_ms = 1000;       // daemons' clocks this far apart: WARN
};

// One daemon of the config, as asked directly.
struct Daemon {
  std::string name;     // "mds0", "server3"
  std::string address;  // host:port
  bool is_mds = false;
  bool reachable = false;
  std::string why;      // when not reachable: the error ("timeout", "connection refused")
  // When reachable:
  std::optional<int64_t> clock_offset_ms;  // its wall clock minus the asker's (unknown: old daemon)
  uint64_t offset_error_ms = 0;            // half the round trip the offset was measured over
  uint64_t in_progress = 0;                // requests it is serving now
  uint64_t oldest_request_ms = 0;          // age of the oldest of them (0: none)
};

// A storage server's space, as the metadata server last heard it.
struct Space {
  std::string name;
  uint64_t capacity_bytes = 0, free_bytes = 0;
};

// A metadata server's room on the disk of its data directory.
struct MdsSpace {
  std::string name;
  uint64_t free_bytes = 0;
  uint64_t reserve_bytes = 0;  // [mds_tuning] reserve_mb: under it new names get ENOSPC
};

// A file set no serving metadata server holds.
struct Unserved {
  uint16_t set = 0;
  std::string last_holder;  // the member that last reported it ("" unknown)
};

struct Inputs {
  std::vector<Daemon> daemons;
  std::vector<Space> space;
  std::vector<MdsSpace> mds_space;
  std::vector<std::string> fenced;         // members that answered they hold no lease
  std::vector<Unserved> unserved;
  std::optional<uint64_t> delete_backlog;  // unlinked files not yet deleted (unknown: no MDS said)
};

struct Reason {
  Level level = Level::warn;
  std::string check;  // stable name for scripts: DAEMON_DOWN, SERVER_FULL, MDS_FULL, SLOW_REQUESTS,
                      // DELETE_BACKLOG, MDS_FENCED, FILESET_UNSERVED, CLOCK_SKEW
  std::string text;   // one line for a human, naming the daemon or file set
};

struct Verdict {
  Level level = Level::ok;
  std::vector<Reason> reasons;  // errors first, then warnings; in input order within each
};

// The verdict on `in`. A storage server down is an error (its stripes are
// unreadable: there are no replicas); a metadata server down is a warning
// while another answers (its file sets fail over or show as unserved), an
// error when none does. A full server warns at full_warn_percent and is an
// error at full_err_percent. A metadata server under its disk reserve is an
// error (new names fail), within twice the reserve a warning. Slow
// requests, a delete backlog, a fenced member and clock skew beyond the
// thresholds warn; a file set no member serves is an error.
// Clock skew counts only what the measurement cannot explain (offsets'
// spread minus their errors).
Verdict judge(const Inputs& in, const Thresholds& limits);

// "HEALTH_WARN\n" then one line per reason: "  WARN check: text".
std::string render(const Verdict& verdict);

}  // namespace pvfs::health
