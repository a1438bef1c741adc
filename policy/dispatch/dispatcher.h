// The client's write dispatcher: decides, for a batch of write pieces
// pending at the same moment, which storage server each goes to
// (Dai et al., §III: two-choice, collaborative probe, preassign). Pure: the
// caller probes the servers this plans and passes the loads back; randomness
// comes from the generator passed in. No I/O, no clock. Driven by the client
// library (fs/client_data.cc) and by pvfs-sim.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string_view>
#include <vector>

#include "shared/ids.h"

namespace pvfs::sched {

// Which policy places write pieces (pvfsmount -o dispatch=...):
//   fixed      every piece to its home server (round-robin striping, no probe)
//   random     every piece to a server chosen uniformly at random (no probe)
//   two_choice each piece probes its home and one random other server and
//              goes to the less loaded; pieces decide independently
//   collab     collaborative probe: one probe round to 2k servers for k
//              pieces (each home plus random others), pieces assigned
//              greedily to the least loaded, counting the round's own
//              assignments, home preferred within a margin
//   preassign  collab, with servers adding the expected load of pending
//              probes to what they report (the full design; the default)
enum class Policy { fixed, random, two_choice, collab, preassign };

std::optional<Policy> parse_policy(std::string_view name);  // "fixed", ..., "two-choice" too
std::string_view policy_name(Policy policy);                // "fixed", "random", "two-choice", "collab", "preassign"

struct Options {
  Policy policy = Policy::preassign;
  // Pieces smaller than this go home without a probe: the probe's round
  // trip would cost more than a slow server could.
  uint64_t min_bytes = uint64_t{64} << 10;
  // collab/preassign: a piece stays home unless some server's load is more
  // than this many bytes below home's (a redirect costs a metadata entry
  // and a later pull-back).
  uint64_t margin_bytes = uint64_t{1} << 20;
  // preassign: ... and unless home is slow in this round: its queue (its
  // load without preassigned bytes) is more than skew_factor times the
  // round's typical queue (the lower quartile of the queues it heard), or
  // more than 2 x skew_factor times its lightest, and exceeds the quartile
  // by more than margin_bytes. A piece whose home is slow goes to one of
  // the lighter half of the servers that are not slow, at random. 0 turns
  // this off (the paper's rule: home unless another is lighter by the
  // margin). Ours, not the paper's; see slow() in dispatcher.cc and
  // docs/sim/two-choice-stragglers.md. Servers reporting no load at all
  // (loopback) get pieces as with the margin alone.
  double skew_factor = 2.0;
};

struct Piece {
  ServerId home;
  uint64_t bytes = 0;
};

// A server's load as a probe (or a peer's report of it) saw it.
struct ServerLoad {
  ServerId server;
  uint64_t bytes = 0;        // outstanding bytes plus preassigned bytes
  uint32_t requests = 0;     // outstanding requests (tie-break)
  uint64_t preassigned = 0;  // of `bytes`, the expected bytes of undecided probes
};

struct ProbePlan {
  std::vector<ServerId> probe;  // distinct servers to probe; empty for fixed and random
  // two_choice only: per piece, the other server it compares home with.
  std::vector<ServerId> second_choice;
};

// Which servers to probe for `pieces` among `servers` (all storage servers,
// distinct). collab/preassign: every piece's home plus random others until
// 2 x pieces.size() distinct servers (or all of them). two_choice: each
// home plus one random other per piece.
ProbePlan plan_probes(const Options& options, std::span<const Piece> pieces,
                      std::span<const ServerId> servers, std::mt19937_64& rng);

// One server per piece, in order. `loads` holds what the probes answered
// plus any fresh loads the servers reported of their peers (a server may
// appear once); a probed server missing from `loads` did not answer and is
// not chosen. fixed: home. random: uniform over `servers`. two_choice: the
// less loaded of home and its second choice (home on ties). collab and
// preassign: greedy in piece order over every server in `loads`, adding
// each assigned piece's bytes to its server's load; home unless another is
// lighter by more than margin_bytes; a server other than a piece's home
// takes at most one piece per round (the paper selects k of the 2k probed).
// preassign with skew_factor > 0: home unless home is slow (Options), then
// a random one of the lighter half of the servers that are not slow and
// took no piece yet (the lightest that is not slow when all took one).
// Home when nothing is known.
std::vector<ServerId> assign(const Options& options, std::span<const Piece> pieces,
                             const ProbePlan& plan, std::span<const ServerLoad> loads,
                             std::span<const ServerId> servers, std::mt19937_64& rng);

}  // namespace pvfs::sched
