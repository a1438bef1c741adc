// Decides which backend operations a storage server runs on its network
// thread instead of handing them to the blocking disk pool. A hand-off costs
// two thread switches and a wake-up per request, more than a 4 KiB pwrite to
// the page cache; but a network thread that waits on a slow disk stalls every
// connection it serves. So an operation runs inline only when it is no
// larger than a limit, not a sync write (fdatasync waits for the device), and
// operations like it have proven fast: the recent service times of such
// operations in its direction (measured wherever they ran, pool or inline)
// average below a bound. A slow operation pushes the average up and sends
// the following ones back to the pool, whose measurements bring them back
// once the store is fast again. Times are counted per 64 KiB (an operation
// up to that size counts whole), so one bound judges a 4 KiB write and a
// 1 MiB read alike: a store that writes 1 MiB in 300 µs is as fast as one
// that writes 4 KiB in 19 µs.
// Only the *where* is decided here: the caller runs inline only what the
// elevator dispatches at once, so the elevator's order is the same either way.
// Pure: service times in, decisions out; no clock. Not thread-safe (owned by
// the IoQueue's executor).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>

namespace pvfs::elevator {

struct InlineOptions {
  // Largest operation that may run inline; 0 runs every operation on the pool.
  uint64_t max_bytes = uint64_t{1} << 20;
  // Average service time per 64 KiB (InlineGate::kUnitBytes) under which
  // operations run inline.
  std::chrono::nanoseconds max_latency = std::chrono::microseconds(200);
};

class InlineGate {
 public:
  // Observations of a direction needed before its average is trusted.
  static constexpr uint32_t kWarmup = 8;
  // The amount of data a service time is counted for: a larger operation's
  // time is scaled down to it, a smaller one's counts whole.
  static constexpr uint64_t kUnitBytes = uint64_t{64} << 10;

  explicit InlineGate(InlineOptions options) : options_(options) {}

  // Whether an operation of `bytes` (> 0) in this direction may run on the
  // network thread now.
  bool should_inline(bool write, bool sync, uint64_t bytes) const;
  // Records how long an operation took on the backend (wherever it ran).
  // Only non-sync operations up to max_bytes count: they are the ones
  // decided on.
  void observe(bool write, bool sync, uint64_t bytes, std::chrono::nanoseconds spent);

  // The current average time per kUnitBytes for a direction (0 before any
  // observation).
  std::chrono::nanoseconds average(bool write) const { return std::chrono::nanoseconds(dir(write).avg_ns); }
  uint64_t inlined() const { return inlined_; }
  uint64_t handed_off() const { return handed_off_; }
  void count(bool ran_inline) { ++(ran_inline ? inlined_ : handed_off_); }
  const InlineOptions& options() const { return options_; }

 private:
  struct Direction {
    uint64_t avg_ns = 0;  // exponentially weighted, weight 1/8 for the newest
    uint32_t seen = 0;    // observations, saturating at kWarmup
  };
  const Direction& dir(bool write) const { return dirs_[write ? 1 : 0]; }
  Direction& dir(bool write) { return dirs_[write ? 1 : 0]; }
  bool counts(bool sync, uint64_t bytes) const {
    return !sync && bytes > 0 && bytes <= options_.max_bytes;
  }

  InlineOptions options_;
  std::array<Direction, 2> dirs_{};
  uint64_t inlined_ = 0, handed_off_ = 0;
};

}  // namespace pvfs::elevator
