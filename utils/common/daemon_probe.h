// Asks pvfs daemons for their status, and tells storage servers to inject
// delays or switch elevators, over the real protocol: used by pvfs-cluster status/up and
// pvfs-ctl. Synchronous (each call runs its own io_context); not for use
// inside another io_context's thread. Thread-safe: calls share nothing.
#pragma once

#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "shared/secret.h"
#include "shared/status.h"

namespace pvfs {

struct JobStat {
  std::string job_id;
  uint64_t ops = 0, bytes_read = 0, bytes_written = 0;
};

struct DaemonReport {
  std::string kind;  // "mds" or "server"
  uint32_t id = 0;
  std::string version;
  uint64_t uptime_ms = 0;
  uint64_t requests = 0;
  std::vector<JobStat> jobs{};
  int64_t unix_ms = 0;              // its wall clock as it answered (0: a daemon before issue 20)
  uint32_t in_progress = 0;         // requests it was serving, this one included
  uint64_t oldest_request_ms = 0;   // age of the oldest of them
  std::optional<uint64_t> orphans{};  // MDS: its delete backlog (unset: not counted)
  std::optional<uint64_t> data_free_bytes{};  // MDS: free space of its data disk (unset: not measured)
  uint64_t reserve_bytes = 0;                 // MDS: under this free, new names get ENOSPC
};

enum class DaemonKind { mds, server };

// Connects, authenticates and asks for status within `timeout`.
Result<DaemonReport> probe_daemon(DaemonKind kind, const Endpoint& at, const Secret& key,
                                  std::chrono::milliseconds timeout);

struct ServerView {
  uint32_t id = 0;
  std::string address;
  uint64_t capacity_bytes = 0, free_bytes = 0;
  bool alive = false;
};

// The storage servers the MDS at `mds` knows.
Result<std::vector<ServerView>> list_servers(const Endpoint& mds, const Secret& key,
                                             std::chrono::milliseconds timeout);

// One storage server's two-choice scheduling state, as it reported it
// (storage.capnp Reply.SchedStatus; see the comments there).
struct SchedView {
  uint32_t server = 0;                   // the id the server answered as
  uint32_t requests = 0;                 // outstanding data requests
  uint64_t bytes = 0;                    // their bytes
  uint64_t preassigned = 0;              // expected bytes of undecided probes
  uint64_t redirect_objects = 0, redirect_entries = 0;
  uint64_t fragments = 0, fragment_bytes = 0;  // held for other servers
  uint64_t pulled_bytes = 0, pulls = 0;        // brought home since start
  uint64_t redirects = 0;                // redirect entries recorded since start
  uint64_t fallbacks = 0, probes = 0;
  uint64_t gc_pending = 0;               // fragments elsewhere waiting to be dropped
  double delay_factor = 1;               // injected slowdown (1: none)
  uint32_t delay_remaining_ms = 0;       // 0: none, or until changed
  std::vector<double> preassign_probability;  // P(chosen) per load level
};

// The scheduling state of the storage server at `at`. Errors: those of the
// connection (unavailable, timeout, access_denied) or of the server.
Result<SchedView> sched_status(const Endpoint& at, const Secret& key,
                               std::chrono::milliseconds timeout);

// Tells the storage server at `at` to serve data requests `delay_factor`
// times slower for `duration` (zero: until changed; factor 1 ends a delay).
// The server refuses factors outside 1..1000 with invalid_argument.
Status inject(const Endpoint& at, const Secret& key, std::chrono::milliseconds timeout,
              double delay_factor, std::chrono::seconds duration);

// Request classes of a storage server's elevator, the index of the
// per-class arrays of ElevatorView (storage.capnp Reply.ElevatorStatus).
inline constexpr size_t kElevatorClasses = 3;
inline constexpr std::array<const char*, kElevatorClasses> kElevatorClassNames = {
    "normal", "urgent", "background"};

// One storage server's elevator, as it reported it (storage.capnp
// Reply.ElevatorStatus; see the comments there).
struct ElevatorView {
  uint32_t server = 0;   // the config's id of the server asked (the reply names none)
  std::string policy;    // "obrr" or "fcfs"
  // Per class: normal, urgent, background (kElevatorClassNames).
  std::array<uint64_t, kElevatorClasses> queued{}, in_service{}, completed{};
  std::array<uint64_t, kElevatorClasses> p50_us{}, p99_us{};  // arrival to completion
  uint64_t objects_queued = 0;
  uint64_t dispatches = 0;               // backend operations, after merging
  uint64_t seeks = 0;                    // dispatches not contiguous with the previous one
  uint64_t dynamic_expiries = 0, mandatory_expiries = 0;
  uint64_t expiration_us = 0;            // the dynamic deadline a request would get now
  std::vector<uint64_t> dispatched_sizes;  // operations; bucket k holds [2^k, 2^(k+1)) bytes
  bool emulated_disk = false;
  uint64_t emulated_seeks = 0;           // seeks the emulated disk charged
  std::string bandwidth;                 // the calibration the deadlines use
};

// The elevator of the storage server at `at`, after switching it to
// `policy` ("obrr" or "fcfs"; empty: only report). Errors: those of the
// connection (unavailable, timeout, access_denied) or of the server
// (invalid_argument "unknown elevator ..." for another policy name).
Result<ElevatorView> elevator_status(const Endpoint& at, const Secret& key,
                                     std::chrono::milliseconds timeout,
                                     const std::string& policy = {});

}  // namespace pvfs
