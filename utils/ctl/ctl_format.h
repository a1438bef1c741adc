// The text side of pvfs-ctl: parsing sizes ("4M") and server lists, human
// sizes and durations, merging per-job counters from several daemons and
// rendering the getstripe, jobs, ping, servers, sched and elevator tables
// (and the JSON of sched and elevator). Pure functions
// over plain values (no I/O, no clock); thread-safe. The subcommands that
// gather the values are in utils/ctl/ctl_commands.h.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "shared/ids.h"
#include "shared/layout.h"
#include "shared/mount_table.h"
#include "shared/status.h"
#include "shared/text_format.h"
#include "utils/common/daemon_probe.h"

namespace pvfs::ctl {

// Sizes ("4M") as shared/text_format.h reads them.
using ::pvfs::parse_size;

// Comma-separated server ids ("1,3,0"; each may also be named as
// "server3", as the other commands name them), kept in the order given.
// Errors: invalid_argument naming the bad item, or a repeated id.
Result<std::vector<ServerId>> parse_server_list(std::string_view text);

// mount_type_of and kPvfsMountType: shared/mount_table.h.
using ::pvfs::kPvfsMountType;
using ::pvfs::mount_type_of;

// "0 B", "512 B", "4.0 KiB", "1.5 MiB", ... (binary units, one decimal).
std::string human_bytes(uint64_t bytes);

// Coarse uptime: "12s", "3m07s", "2h05m", "3d04h".
std::string human_duration(std::chrono::milliseconds elapsed);

// The getstripe text of `path`: stripe_count and stripe_size lines, then for
// a file one line per object (index, server id), or for a directory its
// server list; 0 and an empty list in a directory's policy print as the
// cluster default. Ends with a newline.
std::string render_layout(std::string_view path, const LayoutPolicy& layout, bool is_directory);

// Sums the counters of each job over all `reports`, busiest first (most
// operations, then most bytes moved, then job id), so a job's total is the
// same whatever order the daemons answered in.
std::vector<JobStat> merge_jobs(const std::vector<DaemonReport>& reports);

// A job's I/O steps as the delegate's scheduler counts them (pvfs-ctl
// iosched): summed over its finished steps and the current one so far.
struct JobIoTimes {
  std::string job_id;
  uint64_t io_ms = 0;    // holding a token
  uint64_t wait_ms = 0;  // waiting for one
  std::string step;      // "holding", "waiting" or "" (no step now)
};

// The jobs table with a header line: JOB, OPS, READ, WRITTEN, then
// I/O-TIME, TOKEN-WAIT and STEP from `io` ("-" for a job the scheduler
// does not know; "?" in every row when `io` is nullopt: the scheduler did
// not answer). Jobs only the scheduler knows come last, with 0 operations.
// "(no jobs)" under the header when there is no row. Ends with a newline.
std::string render_jobs(const std::vector<JobStat>& jobs, const std::optional<std::vector<JobIoTimes>>& io);

// One daemon of the cluster as pvfs-ctl names it: "mds0", "server3".
// Pads every cell of `rows` (the first is the header) to its column's
// widest cell; columns listed in `right` are right-aligned. The last column
// is not padded, so lines carry no trailing blanks.
std::string table(const std::vector<std::vector<std::string>>& rows, const std::set<size_t>& right);

struct DaemonTarget {
  std::string name;
  DaemonKind kind = DaemonKind::server;
  uint32_t id = 0;
  Endpoint address;
};

// Every daemon in `config`: metadata servers first, then storage servers,
// each in config order.
std::vector<DaemonTarget> daemon_targets(const Config& config);

// The verdict of `ping` on one daemon.
struct PingResult {
  bool ok = false;
  std::string state;   // "ok", "down", "timeout", "denied", "wrong", "error"
  std::string detail;  // why it is not ok; empty when ok
};

// Judges one probe: the daemon must have answered (reachable and
// authenticated) as the kind and id the config gives for its address.
PingResult judge_ping(const DaemonTarget& target, const Result<DaemonReport>& report);

// The ping table: DAEMON, ADDRESS, STATE, VERSION, UPTIME, REQUESTS and,
// for failures, the detail. `reports` and `verdicts` are parallel to
// `targets`. Ends with a newline.
std::string render_ping(const std::vector<DaemonTarget>& targets,
                        const std::vector<Result<DaemonReport>>& reports,
                        const std::vector<PingResult>& verdicts);

// The servers table: ID, ADDRESS, STATE, CAPACITY, FREE, USED. Servers in
// `configured` that the MDS does not list are shown as "unregistered" with
// their configured address. Sorted by id. Ends with a newline.
std::string render_servers(const std::vector<ServerView>& known,
                           const std::vector<DaemonEntry>& configured);

// The sched table, one row per view in the order given: ID, LOAD
// ("requests / bytes"), PREASSIGNED, REDIR-OBJS, REDIR-ENTRIES, FRAGMENTS
// ("count / bytes"), PULLED ("pulls / bytes"), REDIRECTS, FALLBACKS,
// PROBES, GC and DELAY (delay_cell). Ends with a newline.
std::string render_sched(const std::vector<SchedView>& views);

// The DELAY cell of the sched table: "-" without a delay, else "5x, 30s
// left" (remaining time rounded up to a second) or "5x, until changed".
std::string delay_cell(double factor, std::chrono::milliseconds remaining);

// The views as a JSON array, one object per line in the order given, with
// the raw numbers under the keys server, requests, bytes, preassigned,
// redirect_objects, redirect_entries, fragments, fragment_bytes,
// pulled_bytes, pulls, redirects, fallbacks, probes, gc_pending,
// delay_factor, delay_remaining_ms and preassign_probability (an array).
// Non-finite numbers print as null. Ends with a newline.
std::string render_sched_json(const std::vector<SchedView>& views);

// The line inject prints on success: "server 3: serving 5x slower for 30 s",
// "... until changed" when `duration` is zero, or "server 3: serving at
// normal speed" for a factor of 1 (or less). Without a newline.
std::string describe_inject(uint32_t server, double factor, std::chrono::seconds duration);

// A duration in microseconds as people read it: "0us", "850us", "12.3ms",
// "450ms", "1.52s".
std::string human_micros(uint64_t us);

// The byte count that starts size bucket `k` ([2^k, 2^(k+1)) bytes), with a
// binary suffix when it has one: "512", "64K", "1M", "4G". k below 64.
std::string bucket_label(unsigned k);

// The non-empty buckets of a dispatched-size histogram (bucket k holds
// operations of [2^k, 2^(k+1)) bytes) as "64K:12 1M:300 4M:80", smallest
// first; "-" when all are empty.
std::string size_histogram(const std::vector<uint64_t>& buckets);

// The elevator table, one row per view in the order given: ID, POLICY,
// QUEUED N/U/B (queued normal/urgent/background), OBJECTS (objects queued),
// DISPATCHES, SEEKS ("240", or "240 (emulated 238)" on an emulated disk),
// EXPIRED DYN/MAND (deadline expiries, dynamic/mandatory), NORMAL, URGENT
// and BACKGROUND P50/P99 (service times, "-" for a class with nothing
// completed), DEADLINE (the current dynamic expiration) and SIZES
// (size_histogram). Ends with a newline.
std::string render_elevator(const std::vector<ElevatorView>& views);

// The views as a JSON array, one object per line in the order given, with
// the raw numbers under the keys server, policy, queued, in_service,
// completed, p50_us, p99_us (arrays by class: normal, urgent, background),
// objects_queued, dispatches, seeks, emulated_disk, emulated_seeks,
// dynamic_expiries, mandatory_expiries, expiration_us, dispatched_sizes
// (an object: the bucket's first byte count, as a string, to its operations;
// non-empty buckets only) and bandwidth. Ends with a newline.
std::string render_elevator_json(const std::vector<ElevatorView>& views);

}  // namespace pvfs::ctl
