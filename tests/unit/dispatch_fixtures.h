// What the dispatch tests (dispatcher, load_memory, round) build their
// cases from: a cluster of server ids, pieces homed on them, a start time.
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "policy/dispatch/dispatcher.h"
#include "policy/dispatch/load_memory.h"

namespace pvfs::sched::fixtures {

inline constexpr uint64_t kMiB = uint64_t{1} << 20;
// How long a heard load counts as fresh in these tests.
inline constexpr std::chrono::milliseconds kFresh{300};
inline const TimePoint t0{std::chrono::seconds(1000)};

// Servers 1..n.
inline std::vector<ServerId> cluster(uint32_t n) {
  std::vector<ServerId> out;
  for (uint32_t i = 1; i <= n; ++i) out.push_back(ServerId(i));
  return out;
}

// One piece of `bytes` homed on each server of `homes`, in order.
inline std::vector<Piece> pieces_at(std::initializer_list<uint32_t> homes, uint64_t bytes = kMiB) {
  std::vector<Piece> out;
  for (uint32_t h : homes) out.push_back(Piece{ServerId(h), bytes});
  return out;
}

}  // namespace pvfs::sched::fixtures
