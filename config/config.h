// The cluster configuration: one TOML file read by every daemon and client.
// Owns parsing and validation (a wrong or missing key is a one-line error
// naming the key) and rendering a config back to TOML for pvfs-cluster and
// pvfs-ctl genconfig. Every key is documented in man/pvfs.toml.5.
// Sits above policy/: a policy's settings are held as that policy's own
// options (enums and all), so names are parsed by the policy's parse_*()
// and the daemons pass the struct on as it is.
// Plain values; thread-safe to copy.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "policy/elevator/elevator.h"
#include "policy/elevator/inline_gate.h"
#include "policy/placement/anu_tuner.h"
#include "policy/placement/policy.h"
#include "policy/qos/gate.h"
#include "shared/endpoint.h"
#include "shared/status.h"

namespace pvfs {

struct Config {
  std::filesystem::path path;          // the file it was read from (empty if built in memory)
  std::filesystem::path secret_file;   // absolute after load()
  std::vector<DaemonEntry> mds;
  std::vector<DaemonEntry> servers;

  // [layout]: defaults for files whose directories set nothing.
  uint64_t stripe_size = uint64_t{1} << 20;
  uint32_t stripe_count = 0;  // 0 = all servers
  // A storage server whose file system is at least this full (percent, from
  // its heartbeat) gets no objects of new files the MDS places.
  uint32_t full_percent = 95;

  // [timeouts]
  uint32_t rpc_timeout_ms = 10000;       // a call to a daemon fails with ETIMEDOUT after this
  // ... unless the daemon keeps saying it is busy with it: then up to this
  // long in all (0 or at most rpc_timeout_ms: never longer).
  uint32_t rpc_busy_limit_ms = 300000;
  uint32_t connect_timeout_ms = 3000;
  uint32_t heartbeat_interval_ms = 1000;
  uint32_t heartbeat_timeout_ms = 5000;  // a server silent this long is not given to new files

  // [mds]
  uint32_t mds_sync_interval_ms = 1000;  // LMDB fsync period (process crashes lose nothing)
  bool fileset_per_top_directory = false;  // mkdir in the root directory makes a new file set
  // A client that unlinks a file it still has open keeps the file's data
  // by renewing a hold every third of this (mds/orphan_holds.h); a client
  // that dies, or is cut off this long, loses it and the space comes back.
  uint32_t orphan_lease_ms = 300000;
  // Every open starts a lease on the file for its client, renewed every
  // third of this while it stays open (mds/open_leases.h): a file another
  // client removes meanwhile keeps its data until then.
  uint32_t open_lease_ms = 15000;
  // New names (creates, mkdir, links, xattrs) are refused with ENOSPC
  // while the data directory's file system has less than this free, so
  // that removals and size updates, which need a little room themselves,
  // still commit on a full disk (mds/mds_space.cc). 0: no reserve.
  uint32_t mds_reserve_mb = 64;
  // Directory leases (mds/dir_lease_table.h, pvfsmount(8) CONSISTENCY): a
  // client that looked up a name that is not there may be told every name
  // in the directory, and the MDS recalls that before another client adds
  // one, so the client answers the kernel's lookups of new names (one per
  // create) itself. A lease lasts this long unless recalled; 0: none given.
  // With several members at most dead_after_ms - mds_lease() (MdsService::
  // dir_lease_term()).
  uint32_t dir_lease_ms = 1000;
  // Directories with more entries than this get no lease.
  uint32_t dir_lease_max_entries = 100000;

  // [mds_cluster]: several metadata servers sharing the namespace by file
  // sets (mds/cluster/, ANU placement). Ignored with one [[mds]].
  placement::Policy mds_placement = placement::Policy::anu;  // hash: the ANU map never tuned
  uint32_t mds_tune_interval_ms = 10000;  // the delegate tunes the map this often
  uint32_t mds_dead_after_ms = 3000;     // a member silent this long is failed and its file sets re-hashed
  // A member serves only this long after its last heartbeat the delegate
  // answered (counted from sending it); 0: two thirds of the way from
  // heartbeat_interval_ms to dead_after_ms. Longer than the first, shorter
  // than the second.
  uint32_t mds_lease_ms = 0;
  uint32_t mds_lease() const {
    if (mds_lease_ms || mds_dead_after_ms <= heartbeat_interval_ms) return mds_lease_ms;
    return heartbeat_interval_ms + (mds_dead_after_ms - heartbeat_interval_ms) * 2 / 3;
  }
  // The delegate's tuning step: threshold (k), thresholding, top_off,
  // divergent, backlog, busy, overload_guard and floor_share are keys of [mds_cluster]; average,
  // max_factor and significance are not. busy is off on the daemons until
  // it settles on them as it does in pvfs-sim (docs/bench/anu.md, issue 21).
  placement::TunerOptions anu = [] {
    placement::TunerOptions o;
    o.busy = false;
    return o;
  }();

  // [scheduling]: two-choice write dispatch, redirects and pull-back.
  uint64_t dispatch_min_bytes = uint64_t{64} << 10;  // smaller write pieces go home unprobed
  uint64_t redirect_margin_bytes = uint64_t{1} << 20;  // stay home unless another server is this much lighter
  double redirect_skew_factor = 2.0;    // preassign: ... and home's queue is this x the round's lower quartile
  uint32_t probe_timeout_ms = 100;      // a server slower than this to answer a probe is not chosen
  uint32_t load_ttl_ms = 300;           // how long a server trusts a peer's load it learned
  uint32_t maintainer_threads = 2;      // concurrent pull-backs per storage server
  uint32_t maintainer_interval_ms = 100;  // how often idle maintainers look for work
  uint32_t fragment_gc_grace_ms = 2000;  // superseded fragments live this long for readers in flight

  // [elevator]: how each storage server orders its disk work (OBRR paper).
  // policy, quantum, quantum_unit, max_merge_bytes and lambda (dynamic
  // deadline = lambda x estimated drain time); urgent_margin is not a key.
  elevator::ElevatorOptions elevator;
  uint32_t elevator_queue_depth = 0;    // operations on the disk at once; 0 = disk threads
  uint32_t urgent_max_service_ms = 1000;  // what clients ask of urgent requests

  // [qos]: per-job service windows from execution-time goals (U-Shape paper).
  qos::QosPolicy qos_policy = qos::QosPolicy::off;
  uint32_t qos_period_ms = 1000;     // T_period: the coordinator plans windows this often
  uint32_t qos_epoch_ms = 100;       // locality is measured per epoch (§3.1)
  uint32_t qos_min_window_ms = 20;   // no window shorter (<= period_ms / 4)
  double qos_train_max_error = 0.10; // qos train: grow until the CV mean relative error is below this

  // [storage]: where each storage server runs its disk operations.
  // inline_max_bytes (larger ones always go to the disk pool; 0: all do)
  // and inline_max_latency_us (the others run inline while they average
  // below it per 64 KiB; whole microseconds).
  elevator::InlineOptions storage_inline;
  // Data writes (objects, fragments, pull-backs) get ENOSPC while the data
  // directory's disk has less than this free, so that the redirect log
  // still commits: a write whose server is full goes to another server and
  // is recorded here (server/storage_space.cc). 0: no reserve.
  uint32_t storage_reserve_mb = 64;

  // [emulated_disk]: a modelled spinning disk for experiments (bandwidth 0: off).
  double emulated_seek_ms = 10.0;
  uint64_t emulated_bandwidth_bytes = 0;  // bytes per second; 450000000 in the paper

  // [iosched]: jobs' I/O steps under the MDS delegate's global scheduler
  // (policy/iosched, burst-buffer interference paper).
  std::string iosched_policy = "none";  // none, fcfs, sjf, sa-fcfs or sa-sjf (pvfs-ctl iosched policy changes it)
  uint32_t iosched_lease_ms = 5000;     // a client that neither renews nor ends loses its token after this
  double iosched_max_wait_s = 0;        // starvation guard (ours, not the paper's); 0: off
  // Transparent steps: a job's first write after this much silence opens
  // a step, which ends when its writes have been idle as long. 0: only
  // explicit steps (pvfs-ctl iostep, libpvfs-iostep).
  uint32_t iosched_idle_ms = 0;
  bool iosched_reads = false;           // reads also wait for the token
  // Gathering (ours): after an idle spell the first token waits this long
  // after the first step arrived, so steps starting together are ordered by
  // the policy rather than by who came first. 0: off.
  uint32_t iosched_gather_ms = 0;
  // [locks]: fcntl/flock/OFD locks across clients (mds/lock_host.h). A
  // client (pvfsmount) that sends nothing to a file set's lock manager for
  // this long loses its locks there; it renews every third of it.
  uint32_t lock_lease_ms = 5000;
  // [client]
  double attr_timeout_s = 1.0;
  double entry_timeout_s = 1.0;
  // [client] write_behind_bytes: pvfsmount's write_behind (pvfsmount(8)),
  // bytes of each file a write() may leave in flight; 0 = none.
  uint64_t write_behind_bytes = 0;

  // [network]: daemons also listen on a Unix-domain socket that peers on
  // the same host use instead of TCP (shared/rpc/local_socket.h).
  bool local_sockets = true;

  // [security]
  bool encrypt = false;      // encrypt every frame (every frame is authenticated regardless)
  bool root_squash = false;  // the MDS treats uid 0 of clients as nobody (65534)...
  std::vector<std::string> root_squash_except;  // ...except from these client IP addresses

  // Reads and validates `file`; relative paths in it are relative to its folder.
  static Result<Config> load(const std::filesystem::path& file);
  // The entries, or nullptr when `id` is not in the config.
  const DaemonEntry* find_mds(uint32_t id) const;
  const DaemonEntry* find_server(uint32_t id) const;
  // Commented TOML that load() reads back to an equal Config.
  std::string render() const;
};

}  // namespace pvfs
