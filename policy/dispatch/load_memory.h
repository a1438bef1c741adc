// What one client remembers of the storage servers' loads (the last figure
// each server reported, piggybacked on write replies or answered to a
// probe, and when), and the rule that decides from it whether a dispatch
// round needs a probe round at all. Pure: `now` is passed in, randomness
// comes from the caller's generator; no I/O. Driven by the client's io
// thread (fs/client_dispatch.cc) and the unit tests. Not thread-safe.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "policy/dispatch/dispatcher.h"

namespace pvfs::sched {

using TimePoint = std::chrono::steady_clock::time_point;

class LoadMemory {
 public:
  // `load` as `load.server` measured it at `at` (a report's arrival minus
  // its age). A figure older than the one kept is ignored; a newer one
  // replaces it and forgets what sent() added since the old one.
  void heard(const ServerLoad& load, TimePoint at);
  // This client just placed `bytes` on `server` away from their home: they
  // count as that server's load until its next figure, so consecutive
  // rounds decided from memory do not all pick the same light server.
  void sent(ServerId server, uint64_t bytes);
  // The last figure of `server` (plus what sent() added) if it was measured
  // less than `fresh_for` before `now`; nullopt when unknown or stale.
  std::optional<ServerLoad> fresh(ServerId server, TimePoint now, std::chrono::nanoseconds fresh_for) const;
  // fresh() of every server of `servers` that has a fresh figure, in order.
  std::vector<ServerLoad> fresh_loads(std::span<const ServerId> servers, TimePoint now,
                                      std::chrono::nanoseconds fresh_for) const;

  // A write of `bytes` (> 0) to `server` took `took` from request to reply.
  // In a closed loop (each process waits for its write) a straggler's
  // queue is no longer than a healthy server's, only slower to drain, so
  // bytes alone hide it. A server's speed is the least time per byte of
  // its last kTimingSamples writes, as TCP takes its minimum RTT: waiting
  // in a queue only ever adds time, a straggler is slow on every write and
  // a healthy server only on some. A server needs kMinTimings writes to be
  // timed at all: one write may have paid the connection's setup or a
  // burst's queue (an average with one such write in it kept healthy
  // servers looking 3-20x slower on a loaded machine, and nothing timed
  // them again while pieces avoided them).
  // A server written to less recently than kTimingLife x `fresh_for`
  // (in_time) is presumed healthy again, so a straggler that recovered gets
  // pieces (and is timed) again: one write per 1.2 s at the default TTL
  // pays a straggler's latency, a recovered server waits that long.
  void wrote(ServerId server, uint64_t bytes, std::chrono::nanoseconds took, TimePoint now);
  // What a round may rely on: fresh_loads(), plus a figure of 0 bytes for
  // every server of `servers` whose own figure is stale but whose timing
  // says straggler (writes go elsewhere, so it no longer reports), all
  // counted in_time(). A round then keeps avoiding a known straggler
  // instead of sending it pieces as soon as its figure ages.
  std::vector<ServerLoad> remembered(std::span<const ServerId> servers, uint64_t piece_bytes, TimePoint now,
                                     std::chrono::nanoseconds fresh_for) const;
  // `loads` with each server's bytes counted in time: a server whose writes
  // recently took s >= kStragglerFactor times longer per byte than the
  // (lower) median of the timed servers of `loads` counts
  // (bytes + piece_bytes) x s - piece_bytes, the bytes a typical server
  // would drain in the time it needs for its queue plus the piece. Below
  // the factor (noise on healthy servers) and without timings, bytes count
  // as they are.
  std::vector<ServerLoad> in_time(std::span<const ServerLoad> loads, uint64_t piece_bytes, TimePoint now,
                                  std::chrono::nanoseconds fresh_for) const;
  // Dai et al. simulate stragglers with 5x the load (§III-A). At 2x,
  // timing noise of healthy servers on a loaded client redirected a
  // quarter of a symmetric cluster's pieces; at 3x it stays below the bar.
  static constexpr double kStragglerFactor = 3.0;
  static constexpr int kTimingLife = 4;
  static constexpr size_t kTimingSamples = 3;
  static constexpr uint32_t kMinTimings = 2;

 private:
  struct Figure {
    ServerLoad load;
    TimePoint at;
  };
  std::map<ServerId, Figure> figures_;
  struct Timing {
    std::array<double, kTimingSamples> recent{};  // ns per byte, a ring
    uint32_t writes = 0;
    TimePoint at;  // of the newest
    // The least of the recent writes; 0 (not timed) below kMinTimings.
    double ns_per_byte() const;
  };
  std::map<ServerId, Timing> timings_;
};

// How a round of pending pieces is decided.
enum class RoundSource {
  none,    // the policy never probes (fixed, random) or no piece is worth it
  memory,  // from the remembered loads, no RPC
  probe,   // a probe round to the plan's servers
};

struct RoundChoice {
  RoundSource source = RoundSource::none;
  // Why (for the debug log): "flat", "skewed", "stale", "lone", "always"
  // (two-choice and collab always probe), "none".
  const char* why = "none";
  // memory: one server per piece, in order (as assign() over the
  // remembered loads, except that a piece whose home has no fresh figure
  // stays home). Empty otherwise: the caller runs assign().
  std::vector<ServerId> chosen;
  // probe: because a server of the plan has no fresh figure ("stale"), the
  // case that write replies' loads exist to avoid (DispatchStats counts it).
  bool stale = false;
};

// Whether the round of `pieces` (its probe plan `plan`, from plan_probes)
// needs its probe round. `remembered`: the fresh figures of LoadMemory
// (fresh_loads over the live servers). Only preassign, the default, uses
// memory; two_choice and collab keep the paper's probe per round so the
// benchmark can still compare the paper's steps.
//
// Among the pieces worth probing (Options::min_bytes):
//  - stale: a server of the plan has no fresh figure. With two pieces or
//    more: probe (the batched 2k probe; the memory cannot say whether the
//    unknown servers are lighter, and preassign only counts probed rounds).
//  - skewed: assign() over the remembered loads would send some piece away
//    from home (home heavier than a candidate by more than margin_bytes).
//    With two pieces or more: probe, so the move is checked against fresh
//    figures and the servers preassign it (clients that remember the same
//    light server would otherwise all pick it: Dai et al. §III-C).
//  - flat: neither; every piece would stay home, which is what the probe
//    would answer too: decided from memory, no probe.
//  - lone (one piece): always from memory, so a lone piece costs at most one
//    extra round trip (the redirect entry when memory says move) and never
//    a probe plus a redirect. With its home's figure unknown it goes home,
//    and the write's reply teaches the memory. It leaves home only when home
//    is heavier than a candidate by kLoneMarginFactor x margin_bytes: the
//    figures are up to a lifetime old and every client remembers the same
//    light server, so with no probe to check the move only a clear skew
//    (a straggler's bytes counted in time) is worth a redirect; a healthy
//    server's passing queue is not.
inline constexpr uint64_t kLoneMarginFactor = 3;

RoundChoice choose_round(const Options& options, std::span<const Piece> pieces, const ProbePlan& plan,
                         std::span<const ServerLoad> remembered, std::span<const ServerId> servers,
                         std::mt19937_64& rng);

}  // namespace pvfs::sched
