// The preassign estimator of the two-choice paper (Dai et al., §III-C):
// a storage server learns, per load level, how often a probe answered at
// that level was followed by the client choosing it, and counts the
// expected bytes P(level) x len of every outstanding probe as load until
// the client's decision is known (the write arrives, the client says it
// chose others) or the probe is older than the time-to-live. Pure: time is
// passed in (nanoseconds since any fixed epoch); no I/O, no locking; one
// owner thread. Driven by the storage service and by pvfs-sim.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <vector>

namespace pvfs::load {

using Nanos = std::chrono::nanoseconds;

struct PreassignOptions {
  // Load levels are log2 buckets of the outstanding bytes in units of
  // `level_bytes`: level 0 = below one unit, level i = [2^(i-1), 2^i) units,
  // the last level everything above.
  uint64_t level_bytes = uint64_t{256} << 10;
  uint32_t levels = 24;
  // A probe whose outcome is not known after this long counts as not chosen.
  Nanos ttl = std::chrono::milliseconds(500);
  // When a level has seen this many outcomes, its counts are halved, so the
  // estimate follows a changing workload.
  uint32_t history_window = 256;
};

class PreassignEstimator {
 public:
  explicit PreassignEstimator(PreassignOptions options = {});

  // Load level of `load_bytes` (see PreassignOptions).
  uint32_t level_of(uint64_t load_bytes) const;
  // P(chosen | level of load_bytes): (chosen + 1) / (outcomes + 2), so an
  // unseen level starts at 1/2.
  double probability(uint64_t load_bytes) const;

  // A probe of round `round` arrived while the server's load was
  // `load_bytes` (the load it reports, preassigned bytes included), for
  // pieces of `piece_bytes`. Adds P x piece_bytes to preassigned_bytes()
  // and returns that amount. A second probe of a round already pending is
  // ignored (returns 0). Round 0 means "no round" and is ignored too.
  uint64_t on_probe(uint64_t round, uint64_t load_bytes, uint64_t piece_bytes, Nanos now);

  // The client's decision for `round`: this server received a piece of it
  // (chosen) or none. Removes the round's expected bytes and records the
  // outcome at the level the probe saw. Unknown rounds (already decided,
  // expired, or never probed) are ignored.
  void on_outcome(uint64_t round, bool chosen);

  // Drops probes older than the time-to-live, recording them as not chosen.
  void expire(Nanos now);

  // Expected bytes of outstanding probes.
  uint64_t preassigned_bytes() const { return preassigned_; }
  // Probes whose outcome is not known yet.
  size_t pending() const { return pending_.size(); }

 private:
  struct Pending {
    uint32_t level;
    uint64_t expected_bytes;
    Nanos probed_at;
  };
  struct Level {
    uint32_t outcomes = 0;
    uint32_t chosen = 0;
  };
  void record(uint32_t level, bool chosen);

  PreassignOptions options_;
  std::vector<Level> levels_;
  std::map<uint64_t, Pending> pending_;  // by round
  uint64_t preassigned_ = 0;
};

}  // namespace pvfs::load
