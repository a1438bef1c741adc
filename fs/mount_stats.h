// What one mount did since it started, for pvfs-ctl client: FUSE operations
// by kind (count, errors, latency from the request's arrival at the bridge
// to its reply), file bytes read and written, metadata calls retried and
// sent on to another member (redirects), and answers served from the
// mount's own caches. Served as the read-only virtual xattr
// kClientStatsXattr of the mount's root (fs/client.h), in the text format
// render() writes and parse() reads. Pure counters; not thread-safe: owned
// by the client's io thread, like the rest of the client.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "shared/metrics/request_stats.h"
#include "shared/status.h"

namespace pvfs {

class MountStats {
 public:
  // One operation of kind `name` ("read", "lookup"...) answered after `latency`.
  void op(std::string_view name, bool failed, std::chrono::nanoseconds latency);

  uint64_t bytes_read = 0, bytes_written = 0;  // file data through read(2)/write(2)
  uint64_t mds_retries = 0;    // metadata calls sent again (no answer, or after a redirect)
  uint64_t mds_redirects = 0;  // staleMap: the member said another owns the file set
  uint64_t cache_hits = 0;     // xattr answers from the mount's caches, no request sent
  // Calls answered after their timeout had passed: a server that said it
  // was busy kept them waiting (rpc::Connection::call, busy_limit).
  uint64_t busy_waits = 0;
  // Write-behind (pvfsmount(8) write_behind): writes answered before the
  // servers had them, those of them that first waited for room in their
  // file's window (or the mount's), and those that failed afterwards.
  uint64_t writes_behind = 0, behind_waits = 0, behind_failures = 0;
  // O_APPEND writes: each asked the MDS where the end of the file is.
  uint64_t appends = 0;

  // The text of the xattr: "key value" lines, then one line per operation
  // kind, "op NAME COUNT ERRORS SUM_US P50_US P99_US K:N...", where each
  // K:N is a latency bucket K (metrics::LatencyBuckets) holding N > 0
  // operations, so a reader can tell the percentiles of an interval from
  // two snapshots. `extra` lines (already "key value\n") go before the
  // operations.
  std::string render(const std::string& extra = {}) const;

 private:
  struct PerOp {
    uint64_t count = 0, errors = 0;
    metrics::LatencyBuckets latency;
  };
  std::map<std::string, PerOp, std::less<>> ops_;
};

// A parsed snapshot of render()'s text.
struct MountStatsView {
  struct Op {
    uint64_t count = 0, errors = 0;
    double sum_us = 0, p50_us = 0, p99_us = 0;
    // The latency buckets' counts; has_buckets false from a mount whose
    // text has none (an older pvfsmount).
    std::array<uint64_t, metrics::LatencyBuckets::kBuckets> buckets{};
    bool has_buckets = false;
  };
  std::map<std::string, uint64_t> counters;  // every "key value" line
  std::map<std::string, Op> ops;
};

// invalid_argument naming the line for text render() did not write.
Result<MountStatsView> parse_mount_stats(std::string_view text);

// An operation's p50 and p99 (us) over the interval between an earlier
// snapshot of it (`before`; a default Op if it had none) and `now`, from
// the change in its latency buckets: each the upper bound of the bucket
// holding it. nullopt when `now` has no buckets (an older pvfsmount),
// whose percentiles are since the mount started, not the interval's.
std::optional<std::pair<double, double>> interval_percentiles(const MountStatsView::Op& now,
                                                              const MountStatsView::Op& before);

}  // namespace pvfs
