#include "policy/elevator/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "shared/status.h"

namespace pvfs::elevator {

int SizeHistogram::bucket_of(uint64_t size_bytes) {
  return size_bytes == 0 ? 0 : std::bit_width(size_bytes) - 1;
}

void SizeHistogram::add(uint64_t size_bytes) {
  ++counts_[static_cast<size_t>(bucket_of(size_bytes))];
  ++total_;
}

int LatencyHistogram::bucket_of(uint64_t ns) {
  if (ns < static_cast<uint64_t>(kSub)) return static_cast<int>(ns);
  const int exponent = std::bit_width(ns) - 1;  // >= kSubBits
  const int sub = static_cast<int>(ns >> (exponent - kSubBits)) - kSub;
  return (exponent - kSubBits + 1) * kSub + sub;
}

uint64_t LatencyHistogram::upper_bound(int bucket) {
  if (bucket < kSub) return static_cast<uint64_t>(bucket);
  const int exponent = bucket / kSub + kSubBits - 1;
  const uint64_t sub = static_cast<uint64_t>(bucket % kSub);
  // For the top bucket the shift wraps to 0 and the bound to UINT64_MAX,
  // which is its true upper bound.
  return ((kSub + sub + 1) << (exponent - kSubBits)) - 1;
}

void LatencyHistogram::add(Nanos duration) {
  const uint64_t ns = duration.count() < 0 ? 0 : static_cast<uint64_t>(duration.count());
  ++counts_[static_cast<size_t>(bucket_of(ns))];
  ++total_;
  max_ = std::max(max_, ns);
}

LatencyHistogram::Nanos LatencyHistogram::quantile(double q) const {
  PVFS_CHECK(q >= 0.0 && q <= 1.0);
  if (total_ == 0) return Nanos(0);
  const double wanted = std::ceil(q * static_cast<double>(total_));
  const uint64_t rank = std::max<uint64_t>(1, static_cast<uint64_t>(wanted));
  uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += counts_[static_cast<size_t>(b)];
    if (seen >= rank) return Nanos(static_cast<int64_t>(std::min(upper_bound(b), max_)));
  }
  return max();
}

}  // namespace pvfs::elevator
