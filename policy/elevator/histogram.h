// Bounded histograms for the elevator's visibility counters: dispatched
// sizes in power-of-two buckets, and service times in log-linear buckets
// from which p50/p99 are read. Fixed memory whatever the number of samples,
// deterministic, no clock. Plain values; not thread-safe (one owner).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>

namespace pvfs::elevator {

// Counts of sizes by power of two: bucket k holds sizes in [2^k, 2^(k+1)).
class SizeHistogram {
 public:
  static constexpr int kBuckets = 64;

  // Counts one size; a size of 0 counts in bucket 0.
  void add(uint64_t size_bytes);
  // The bucket `size_bytes` counts in.
  static int bucket_of(uint64_t size_bytes);
  // Samples in bucket k, 0 <= k < kBuckets.
  uint64_t count(int k) const { return counts_[static_cast<size_t>(k)]; }
  uint64_t total() const { return total_; }
  const std::array<uint64_t, kBuckets>& buckets() const { return counts_; }

 private:
  std::array<uint64_t, kBuckets> counts_{};
  uint64_t total_ = 0;
};

// Durations in buckets of at most 1/16 of their value (16 linear steps per
// power of two), so a quantile is read to within 6.25%. Negative durations
// count as zero.
class LatencyHistogram {
 public:
  using Nanos = std::chrono::nanoseconds;
  static constexpr int kSubBits = 4;
  static constexpr int kSub = 1 << kSubBits;
  static constexpr int kBuckets = (64 - kSubBits + 1) * kSub;

  void add(Nanos duration);
  uint64_t count() const { return total_; }
  // The smallest bucket bound b such that at least q of the samples are
  // <= b, capped at the largest sample seen; so the answer is never below
  // the true quantile and at most 6.25% above it. Zero when empty.
  // Requires 0 <= q <= 1.
  Nanos quantile(double q) const;
  // Largest sample seen (zero when empty).
  Nanos max() const { return Nanos(static_cast<int64_t>(max_)); }

  // Bucket index of a value in nanoseconds, and the largest value in a
  // bucket; exposed for tests.
  static int bucket_of(uint64_t ns);
  static uint64_t upper_bound(int bucket);

 private:
  std::array<uint64_t, kBuckets> counts_{};
  uint64_t total_ = 0;
  uint64_t max_ = 0;
};

}  // namespace pvfs::elevator
