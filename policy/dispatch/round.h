// One write dispatch round, the whole rule (Dai et al., §III, with our
// load memory): plan the probes, decide from memory when the loads heard
// are fresh and say every piece stays home (or a lone piece), otherwise
// probe and assign over the answers, the peers' loads they carried and
// what the memory holds; then which probed servers to tell ProbeDone and
// which loads the writes carry on to the servers (the gossip). Pure: `now`
// and the generator are passed in; the caller sends the probes, writes and
// ProbeDones. Driven by the client (fs/client_dispatch.cc) and pvfs-sim
// (two-choice-stragglers), so both run the same rule. Not thread-safe.
#pragma once

#include <random>
#include <span>
#include <vector>

#include "policy/dispatch/dispatcher.h"
#include "policy/dispatch/load_memory.h"

namespace pvfs::sched {

class Round {
 public:
  // Plans the round of `pieces` over `servers` (the live storage servers,
  // distinct) and decides whether it needs its probe round
  // (choose_round over memory.remembered() at `now`).
  Round(const Options& options, std::vector<Piece> pieces, std::vector<ServerId> servers,
        const LoadMemory& memory, TimePoint now, std::chrono::nanoseconds fresh_for, std::mt19937_64& rng);

  // Whether the caller must probe plan().probe before decide().
  bool probes() const { return choice_.source == RoundSource::probe; }
  RoundSource source() const { return choice_.source; }
  const char* why() const { return choice_.why; }
  // It probes because a server it needs has no fresh figure (RoundChoice).
  bool stale() const { return choice_.stale; }
  const ProbePlan& plan() const { return plan_; }
  // The mean piece size, which the probes carry (the servers preassign it).
  uint64_t piece_bytes() const { return piece_bytes_; }
  // Whether the probes ask the servers to preassign the round.
  bool preassign() const { return options_.policy == Policy::preassign; }
  const std::vector<Piece>& pieces() const { return pieces_; }

  // A probed server answered with `self` (outstanding plus preassigned
  // bytes) at `now`; also heard by `memory`. A server that does not answer
  // is never chosen. The loads it reported of its peers go straight to
  // memory.heard().
  void answered(const ServerLoad& self, TimePoint now, LoadMemory& memory);

  // One server per piece, in order: from memory (no probe), or assign()
  // over the answers (plus, for collab, the fresh loads memory holds of
  // servers that did not answer), a straggler's bytes counted in time
  // (preassign). Pieces sent away from home count in `memory` (sent()).
  // Call once.
  std::vector<ServerId> decide(LoadMemory& memory, TimePoint now, std::mt19937_64& rng);
  // After decide(): the probed servers that got no piece, to be told so
  // (ProbeDone) and drop the round's preassigned bytes at once; empty
  // unless preassign probed.
  std::vector<ServerId> probe_done(std::span<const ServerId> chosen) const;
  // After decide(): the loads the round decided on, as the servers
  // reported them; the writes carry them so servers learn their peers'.
  const std::vector<ServerLoad>& reported() const { return reported_; }

 private:
  Options options_;
  std::vector<Piece> pieces_;
  std::vector<ServerId> servers_;
  std::chrono::nanoseconds fresh_for_;
  ProbePlan plan_;
  uint64_t piece_bytes_ = 0;
  RoundChoice choice_;
  std::vector<ServerLoad> answers_;
  std::vector<ServerLoad> reported_;
};

}  // namespace pvfs::sched
