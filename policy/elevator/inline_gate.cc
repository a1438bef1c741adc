#include "policy/elevator/inline_gate.h"

#include <algorithm>

namespace pvfs::elevator {

bool InlineGate::should_inline(bool write, bool sync, uint64_t bytes) const {
  if (!counts(sync, bytes)) return false;
  const Direction& d = dir(write);
  return d.seen >= kWarmup && d.avg_ns < static_cast<uint64_t>(options_.max_latency.count());
}

void InlineGate::observe(bool write, bool sync, uint64_t bytes, std::chrono::nanoseconds spent) {
  if (!counts(sync, bytes)) return;
  Direction& d = dir(write);
  uint64_t ns = static_cast<uint64_t>(std::max<int64_t>(spent.count(), 0));
  if (bytes > kUnitBytes) ns = static_cast<uint64_t>(static_cast<double>(ns) * kUnitBytes / bytes);
  // The first observation seeds the average; later ones move it by 1/8 of
  // the difference, so one 2 ms stall on a 10 µs store lifts it to ~260 µs.
  d.avg_ns = d.seen == 0 ? ns : d.avg_ns - d.avg_ns / 8 + ns / 8;
  d.seen = std::min(d.seen + 1, kWarmup);
}

}  // namespace pvfs::elevator
