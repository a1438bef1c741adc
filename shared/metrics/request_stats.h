// Per request type counters a daemon keeps for pvfs-ctl stats/top and
// /metrics: requests, errors, bytes received and sent, and a latency
// histogram in power-of-two buckets of microseconds, from which p50/p99 and
// the sum/count of a Prometheus summary are read. Fixed memory per type.
// Pure (latency comes in as an argument). Not thread-safe: owned by the
// daemon's network thread, like shared/rpc/job_counters.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "shared/metrics/metrics.h"

namespace pvfs::metrics {

// Latencies in buckets of powers of two microseconds: bucket 0 holds
// [0, 1 us], bucket k > 0 holds (2^(k-1), 2^k] us; the last is open-ended.
class LatencyBuckets {
 public:
  static constexpr size_t kBuckets = 40;

  // Counts one latency (negative counts as zero).
  void add(std::chrono::nanoseconds latency);
  uint64_t count() const { return count_; }
  // Sum of all latencies added, in seconds.
  double sum_seconds() const { return sum_ns_ / 1e9; }
  // The upper bound (in seconds) of the bucket holding the q-quantile:
  // never below the true quantile and less than twice it (for latencies
  // of a microsecond or more). Capped at the largest latency seen. Zero
  // when empty. Requires 0 <= q <= 1.
  double quantile_seconds(double q) const;
  // The count in each bucket (for a histogram of an interval: one
  // snapshot's counts less an earlier one's).
  const std::array<uint64_t, kBuckets>& buckets() const { return buckets_; }
  // The upper bound (seconds) of the bucket holding the q-quantile of
  // bucket counts `counts` (such as buckets() gives), uncapped; zero when
  // they are all zero. Requires 0 <= q <= 1.
  static double quantile_of(const std::array<uint64_t, kBuckets>& counts, double q);

 private:
  std::array<uint64_t, kBuckets> buckets_{};
  uint64_t count_ = 0;
  double sum_ns_ = 0;
  int64_t max_ns_ = 0;
};

class RequestStats {
 public:
  // `type_names[i]` names request type i in the families ("write",
  // "read_fragment"); record() takes the index.
  explicit RequestStats(std::vector<std::string> type_names);

  // Counts one finished request of type `type` (an index into the names;
  // out of range counts as "other"): whether it failed, the bytes it
  // brought in (request data) and sent out (reply data), and its latency.
  void record(size_t type, bool failed, uint64_t bytes_in, uint64_t bytes_out,
              std::chrono::nanoseconds latency);

  // Appends the families <prefix>_requests_total, _request_errors_total,
  // _received_bytes_total, _sent_bytes_total (counters, label type) and
  // _request_latency_seconds (summary: quantiles 0.5 and 0.99, _sum,
  // _count). Only types with at least one request appear.
  void append_to(Families& out, const std::string& prefix) const;

  // All requests counted.
  uint64_t total() const { return total_; }

 private:
  struct PerType {
    uint64_t requests = 0, errors = 0, bytes_in = 0, bytes_out = 0;
    LatencyBuckets latency;
  };
  std::vector<std::string> names_;  // the last one is "other"
  std::vector<PerType> types_;
  uint64_t total_ = 0;
};

}  // namespace pvfs::metrics
