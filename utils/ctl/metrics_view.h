// The text side of pvfs-ctl stats, top and loglevel: choosing daemons by
// name, the stats tables, their JSON and the Prometheus text of several
// daemons, and top's rates and frame. Pure functions over metric families
// (shared/metrics) and plain values: no I/O, no clock (elapsed time comes
// in as an argument); thread-safe. The commands are in utils/ctl/ctl_metrics.h.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "shared/metrics/metrics.h"
#include "shared/status.h"
#include "utils/ctl/ctl_format.h"

namespace pvfs::ctl {

// The daemons named by `names` among `all` (daemon_targets order), in the
// order given without repeats: "mds0", "server2", a bare number meaning
// that storage server, or "all" (every daemon). Empty `names`: all.
// Errors: invalid_argument naming the first name that matches nothing.
Result<std::vector<DaemonTarget>> select_daemons(const std::vector<DaemonTarget>& all,
                                                 const std::vector<std::string>& names);

// One daemon's answer to a metrics request.
struct DaemonSnapshot {
  DaemonTarget target;
  std::optional<metrics::Families> families;  // nullopt: it did not answer
};

// The stats text of one daemon that answered: a title line (name, address,
// kind, uptime), the requests table (TYPE, REQUESTS, ERRORS, for storage
// servers IN and OUT bytes, P50, P99), for storage servers the elevator's
// queues by class (CLASS, QUEUED, IN-SERVICE, COMPLETED, P50, P99), the
// other counters and gauges one per line (bytes and seconds in human
// units), and the jobs table (JOB, REQUESTS, and READ/WRITTEN on storage
// servers). Ends with a newline.
std::string render_stats(const DaemonTarget& target, const metrics::Families& families);

// The snapshots that answered as a JSON array, one object per line:
// {"daemon": "server0", "address": "...", "metrics": {"<name><suffix>{<labels>}": value, ...}}
// with the sample keys spelled as in the Prometheus text. Ends with a newline.
std::string render_stats_json(const std::vector<DaemonSnapshot>& snapshots);

// The families of all snapshots that answered, merged by name, each sample
// given a first label daemon="<name>": one valid Prometheus exposition for
// several daemons.
metrics::Families merge_with_daemon_label(const std::vector<DaemonSnapshot>& snapshots);

// --- top ---

// A per-second rate of a counter that went from `before` to `now` in
// `elapsed_s` seconds; a counter that went down (the daemon restarted)
// counts from zero. NaN when elapsed_s <= 0.
double counter_rate(double before, double now, double elapsed_s);

struct TopServerRow {
  std::string name;
  bool down = false;
  double load = 0;            // outstanding data requests
  double queued = 0;          // requests waiting in the elevator, all classes
  double in_mib_s = 0;        // MiB/s of request data received (NaN: no rate yet)
  double out_mib_s = 0;       // MiB/s of reply data sent
  double redirects_held = 0;  // remote entries in the redirect logs
};

struct TopMdsRow {
  std::string name;
  bool down = false;
  double ops_s = 0;            // requests per second (NaN: no rate yet)
  double mean_latency_s = 0;   // over the interval (NaN: no request in it)
  double filesets = 0;
  double inodes = 0;
};

struct TopJobRow {
  std::string job;
  double ops_s = 0;   // requests per second, summed over every daemon
  double mib_s = 0;   // MiB/s read plus written on the storage servers
};

struct TopFrame {
  std::vector<TopServerRow> servers;
  std::vector<TopMdsRow> mds;
  std::vector<TopJobRow> jobs;  // busiest first (ops/s, then MiB/s, then name)
  // Jobs whose I/O step holds a token now (pvfs_mds_iosched_tokens, on the
  // delegate), by name.
  std::vector<std::string> token_holders;
  // Jobs projected past their QoS goal, or past it already
  // (pvfs_mds_qos_behind, on the delegate), by name.
  std::vector<std::string> behind_goal;
};

// Rates from two polls of the same daemons `elapsed_s` apart (`before` and
// `now` parallel, in daemon_targets order). A daemon without an answer now
// is down; one that answered now but not before has NaN rates. At most
// `max_jobs` jobs, those with a nonzero rate only.
TopFrame compute_top(const std::vector<DaemonSnapshot>& before, const std::vector<DaemonSnapshot>& now,
                     double elapsed_s, size_t max_jobs);

// The frame as text: `title` on the first line, then the storage server
// table (SERVER, LOAD, QUEUE, MiB/s-IN, MiB/s-OUT, REDIRECTS), the MDS
// table (MDS, OPS/s, LATENCY, FILESETS, INODES) and the jobs table (JOB,
// OPS/s, MiB/s; "(no active jobs)" without any), then "I/O tokens: ..."
// when jobs hold I/O-step tokens, and "Behind their QoS goal: ..." when
// jobs are. A down daemon's row reads
// "down"; a NaN rate "-". Lines longer than `width` are cut (0: no limit).
// Ends with a newline.
std::string render_top(const TopFrame& frame, std::string_view title, size_t width);

}  // namespace pvfs::ctl
