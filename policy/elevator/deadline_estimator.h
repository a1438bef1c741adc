// The dynamic deadline of the OBRR paper (Qian et al., the Lustre NRS,
// §3.2): e = λ · Σ s_i / bw_i over record-size windows, where bw_i is the
// backend's measured bandwidth at record size r_i and s_i the outstanding
// bytes of requests whose size falls in [r_i, r_{i+1}). Also the text form
// in which a server stores its calibration with its data directory.
// Pure: does not measure anything (the server's calibration does) and reads
// no files. Plain values; not thread-safe (one owner).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "shared/status.h"

namespace pvfs::elevator {

using Nanos = std::chrono::nanoseconds;

// Duration arithmetic that cannot overflow on absurd inputs (a peer's
// maximum service time, a zero-ish calibrated bandwidth): a + b for b >= 0,
// clamped to Nanos::max(); and seconds rounded to nanoseconds, clamped to
// [0, Nanos::max()].
Nanos saturating_add(Nanos a, Nanos b);
Nanos from_seconds(double seconds);

// One calibration point: the backend sustains `bytes_per_second` when
// accessed in records of `record_bytes`.
struct BandwidthPoint {
  uint64_t record_bytes = 0;
  uint64_t bytes_per_second = 0;
  bool operator==(const BandwidthPoint&) const = default;
};

// Record-size windows with their bandwidths: window i covers request sizes
// [r_i, r_{i+1}); sizes below r_0 fall in window 0, sizes from the last
// r_i upward in the last window. A window's bandwidth is the one measured
// at its lower bound r_i (the paper's bw_i; no interpolation).
class BandwidthTable {
 public:
  // Validates and wraps `points`: non-empty, record sizes > 0 and strictly
  // increasing, bandwidths > 0. Otherwise invalid_argument.
  static Result<BandwidthTable> make(std::vector<BandwidthPoint> points);
  // One window: every size at `bytes_per_second` (> 0). For tests and for
  // a server that has not been calibrated yet.
  static BandwidthTable flat(uint64_t bytes_per_second);

  // Index of the window a request of `length_bytes` falls in.
  size_t window_of(uint64_t length_bytes) const;
  size_t windows() const { return points_.size(); }
  const std::vector<BandwidthPoint>& points() const { return points_; }

  // One line, no trailing newline:
  //   "pvfs-bandwidth-v1 <record>=<bytes/s> <record>=<bytes/s> ..."
  // with decimal numbers in increasing record order.
  std::string to_text() const;
  // Parses to_text()'s form; surrounding whitespace (a trailing newline)
  // is allowed. A wrong tag, a malformed pair or points make() rejects are
  // Errc::corrupt, since the text comes from a stored file.
  static Result<BandwidthTable> from_text(std::string_view text);

  bool operator==(const BandwidthTable&) const = default;

 private:
  explicit BandwidthTable(std::vector<BandwidthPoint> points) : points_(std::move(points)) {}
  std::vector<BandwidthPoint> points_;
};

// Tracks outstanding bytes per window and turns them into expiration times.
// The owner calls add() when a request arrives and remove() when it
// completes (the paper counts "outstanding and servicing" requests).
class DeadlineEstimator {
 public:
  static constexpr double kDefaultLambda = 1.5;

  // Requires lambda >= 1 (checked; validate configuration before).
  explicit DeadlineEstimator(BandwidthTable table, double lambda = kDefaultLambda);

  // A request of `length_bytes` became outstanding.
  void add(uint64_t length_bytes);
  // A request of `length_bytes` previously add()ed completed. Removing
  // bytes that were never added is a bug (checked).
  void remove(uint64_t length_bytes);

  // e = λ · Σ s_i / bw_i for the bytes outstanding now; zero when idle.
  Nanos expiration() const;
  // The deadline of a request arriving at `now`: now + expiration(), but
  // never earlier than `latest`, the largest deadline already queued (pass
  // Nanos::min() when none). This is the paper's amendment: when load
  // falls, a new deadline is raised to the queue's maximum so that the
  // deadline queue stays sorted by arrival.
  Nanos deadline(Nanos now, Nanos latest) const;

  // How long the backend takes for one request of `length_bytes` alone:
  // length / bw of its window (no λ).
  Nanos service_estimate(uint64_t length_bytes) const;

  // Outstanding bytes in window i, and over all windows.
  uint64_t outstanding_bytes(size_t window) const { return outstanding_[window]; }
  uint64_t outstanding_bytes() const { return total_; }
  double lambda() const { return lambda_; }
  const BandwidthTable& table() const { return table_; }

 private:
  BandwidthTable table_;
  double lambda_;
  std::vector<uint64_t> outstanding_;
  uint64_t total_ = 0;
};

}  // namespace pvfs::elevator
