// The preassign estimator: per-level outcome counts and the outstanding
// probes by round, in ordered containers so expiry order is deterministic.
// Pure; see preassign.h.
#include "policy/load/preassign.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace pvfs::load {

PreassignEstimator::PreassignEstimator(PreassignOptions options)
    : options_(options), levels_(std::max<uint32_t>(options.levels, 1)) {}

uint32_t PreassignEstimator::level_of(uint64_t load_bytes) const {
  const uint64_t units = load_bytes / std::max<uint64_t>(options_.level_bytes, 1);
  // units in [2^(i-1), 2^i) has bit width i; zero units has width 0.
  const auto level = static_cast<uint32_t>(std::bit_width(units));
  return std::min(level, static_cast<uint32_t>(levels_.size() - 1));
}

double PreassignEstimator::probability(uint64_t load_bytes) const {
  const Level& l = levels_[level_of(load_bytes)];
  return (static_cast<double>(l.chosen) + 1.0) / (static_cast<double>(l.outcomes) + 2.0);
}

uint64_t PreassignEstimator::on_probe(uint64_t round, uint64_t load_bytes, uint64_t piece_bytes,
                                      Nanos now) {
  if (round == 0 || pending_.contains(round)) return 0;
  const auto expected =
      static_cast<uint64_t>(std::llround(probability(load_bytes) * static_cast<double>(piece_bytes)));
  pending_.emplace(round, Pending{level_of(load_bytes), expected, now});
  preassigned_ += expected;
  return expected;
}

void PreassignEstimator::on_outcome(uint64_t round, bool chosen) {
  auto it = pending_.find(round);
  if (it == pending_.end()) return;
  preassigned_ -= it->second.expected_bytes;
  record(it->second.level, chosen);
  pending_.erase(it);
}

void PreassignEstimator::expire(Nanos now) {
  // A probe is expired once it has waited the whole time-to-live.
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (now - it->second.probed_at < options_.ttl) {
      ++it;
      continue;
    }
    preassigned_ -= it->second.expected_bytes;
    record(it->second.level, false);
    it = pending_.erase(it);
  }
}

void PreassignEstimator::record(uint32_t level, bool chosen) {
  Level& l = levels_[level];
  ++l.outcomes;
  if (chosen) ++l.chosen;
  // Halving both counts keeps the ratio and lets newer outcomes dominate.
  if (options_.history_window > 0 && l.outcomes >= options_.history_window) {
    l.outcomes /= 2;
    l.chosen /= 2;
  }
}

}  // namespace pvfs::load
