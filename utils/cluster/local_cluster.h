// A whole pvfs cluster on this machine: config, key, data directories and
// daemon processes under one folder, on free loopback ports (each daemon
// also serves Prometheus /metrics on a loopback port of its own). Drives
// `pvfs-cluster` and the integration tests (which kill and restart real
// daemons through it). State lives in the folder (pvfs.toml, secret.key,
// run/*.pid, run/*.args, logs/*.log), so `status`, `down` and restarts work
// from another process. Not thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "shared/status.h"

namespace pvfs {

struct ClusterOptions {
  std::filesystem::path dir;
  uint32_t servers = 4;
  uint32_t mds = 1;
  // Where pvfs-mds, pvfs-server and pvfsmount are; empty = next to this
  // program (build tree or install prefix), then $PATH.
  std::filesystem::path bin_dir;
  // Tunables written into a new config.
  uint32_t rpc_timeout_ms = 10000;
  uint32_t rpc_busy_limit_ms = 300000;  // [timeouts] busy_limit_ms
  uint32_t heartbeat_timeout_ms = 5000;
  uint64_t stripe_size = uint64_t{1} << 20;
  uint32_t maintainer_threads = 2;       // [scheduling]; 0 keeps redirects until restarted with more
  uint32_t maintainer_interval_ms = 100;
  bool fileset_per_top_directory = false;  // [mds_tuning]
  // [mds_cluster] of a new config: "anu", "hash" or "round-robin"; how often
  // the delegate tunes the map; when a silent member counts as failed.
  std::string mds_placement = "anu";
  uint32_t mds_tune_interval_ms = 10000;
  uint32_t mds_dead_after_ms = 3000;
  bool mds_backlog = true;  // [mds_cluster] backlog: false (and busy false) gives the paper's tuner
  bool mds_busy = false;    // [mds_cluster] busy (pvfs.toml(5): off by default)
  bool mds_overload_guard = true;  // [mds_cluster] overload_guard
  // pvfs-mds --slowdown per metadata server, in config order (empty: none,
  // nothing emulated; else one factor in [1, 1000] per MDS, each passed,
  // 1 included) and --service-us (0: its default). Given to the daemons of
  // this `up`, and to them again on restart_daemon.
  std::vector<double> mds_slowdown;
  // [iosched] of a new config (pvfs.toml(5)).
  std::string iosched_policy = "none";
  uint32_t iosched_lease_ms = 5000;
  uint32_t iosched_idle_ms = 0;
  double iosched_max_wait_s = 0;
  uint32_t mds_service_us = 0;
  uint32_t lock_lease_ms = 5000;  // [locks] lease_ms of a new config
  uint32_t orphan_lease_ms = 300000;  // [mds_tuning] orphan_lease_ms of a new config
  uint32_t open_lease_ms = 15000;     // [mds_tuning] open_lease_ms of a new config
  uint32_t mds_reserve_mb = 64;       // [mds_tuning] reserve_mb of a new config
  bool local_sockets = true;      // [network] local_sockets of a new config
  uint64_t write_behind_bytes = 0;  // [client] write_behind_bytes of a new config
  std::chrono::milliseconds start_timeout{15000};
};

// Checks the options before up() touches the folder: at least one storage
// server and one MDS, slowdown factors in [1, 1000], a known placement, a
// nonzero tune interval. invalid_argument with a one-line reason. (up()
// also wants one slowdown factor per MDS of the config, if any.)
Status validate(const ClusterOptions& options);

struct DaemonState {
  std::string name;  // "mds0", "server2", "mount"
  int pid = 0;
  bool running = false;
  std::string address;
  std::string metrics;  // where it serves /metrics ("127.0.0.1:9100"); empty: nowhere
  std::filesystem::path log;
  std::vector<std::string> extra_args;  // what it is started with beyond config and id
};

class LocalCluster {
 public:
  // Starts every daemon of the cluster in options.dir (creating config and
  // key on first use; reusing them, and the data, after a `down`), and
  // returns once all answer and every storage server has registered.
  // When some daemons run and others do not (one was killed), starts only
  // the others, with the arguments they had. Errors: busy when every
  // daemon is already up; a one-line reason (with the last lines this start
  // of the daemon wrote to its log) when a daemon fails to start. A first
  // `up` whose daemon found its port taken (another program bound it after
  // it was picked) starts again with new ports, up to three times. A first
  // `up` that fails removes the config, key and data folders it made (the
  // logs stay), so the next `up` there starts afresh.
  static Result<LocalCluster> up(const ClusterOptions& options);
  // Attaches to a cluster started earlier (by another process).
  static Result<LocalCluster> attach(const std::filesystem::path& dir,
                                     const std::filesystem::path& bin_dir = {});

  // Mounts the cluster at `mountpoint` with pvfsmount (extra -o options;
  // it logs to logs/mount.log); OK at once when this cluster has it
  // mounted there already. io, "cannot mount at MNT: " and the lines
  // this pvfsmount wrote, when it fails.
  Status mount(const std::filesystem::path& mountpoint, const std::string& options = {});
  // Unmounts (if mounted: every pvfs mount on the mount point), stops every
  // daemon (SIGTERM, then SIGKILL after 5 s).
  Status down();
  // The daemons the up() that returned this object started ("mds0",
  // "server1"): all of them, or those that were not running.
  const std::vector<std::string>& started() const { return started_; }

  std::vector<DaemonState> daemons() const;
  // Sends `signal` to one daemon ("mds0", "server1").
  Status kill_daemon(const std::string& name, int signal);
  // Starts one daemon again, with the extra arguments it had (such as
  // --slowdown), and waits until it serves.
  Status restart_daemon(const std::string& name);

  const Config& config() const { return config_; }
  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path config_path() const { return dir_ / "pvfs.toml"; }

 private:
  LocalCluster(std::filesystem::path dir, std::filesystem::path bin_dir, Config config);
  // up() after the folder exists: `fresh` when there is no config yet
  // (made_key: whether it wrote the key).
  static Result<LocalCluster> start(const ClusterOptions& options, const std::filesystem::path& dir, bool fresh,
                                    bool& made_key);
  Status start_daemon(const std::string& name);
  // run/NAME.args: the extra arguments of a daemon, one per line.
  std::filesystem::path args_file(const std::string& name) const;
  Status write_args(const std::string& name, const std::vector<std::string>& args) const;
  std::vector<std::string> read_args(const std::string& name) const;
  // Waits for NAME's ready file; an error quotes what it wrote to its log
  // past its first `log_before` bytes.
  Status wait_ready(const std::string& name, int pid, std::chrono::milliseconds timeout, uintmax_t log_before);
  Status wait_servers_registered(std::chrono::milliseconds timeout);
  // With several metadata servers: until one of them serves the namespace
  // root (a fresh cluster makes it once every member has answered).
  Status wait_root_served(std::chrono::milliseconds timeout);
  std::filesystem::path binary(const std::string& program) const;

  std::filesystem::path dir_;
  std::filesystem::path bin_dir_;
  Config config_;
  std::vector<std::string> started_;
};

// Whether process `pid` is alive (reaping it first if it is our exited child).
bool process_alive(int pid);

}  // namespace pvfs
