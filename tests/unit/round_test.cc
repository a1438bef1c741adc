// Unit tests of policy/dispatch/round (one dispatch round: probe or not, assign,
// ProbeDone, the loads the writes carry) and policy/load/peer_loads (what
// a storage server heard of its peers). The client and pvfs-sim drive
// these very objects. Pure; a manual clock and seeded generators.
#include "policy/dispatch/round.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "policy/load/peer_loads.h"
#include "tests/unit/dispatch_fixtures.h"

namespace pvfs::sched {
namespace {

using namespace fixtures;
using std::chrono::milliseconds;

// Answers every probe of `round` with `bytes[server - 1]`.
void answer_all(Round& round, const std::vector<uint64_t>& bytes, LoadMemory& memory, TimePoint now) {
  for (ServerId s : round.plan().probe) round.answered(ServerLoad{s, bytes[s.value - 1], 1}, now, memory);
}

}  // namespace

TEST_CASE("a round whose loads heard are fresh and even stays home without a probe or a ProbeDone") {
  const auto servers = cluster(8);
  LoadMemory memory;
  for (ServerId s : servers) memory.heard(ServerLoad{s, 2 * kMiB, 2}, t0);
  std::mt19937_64 rng(1);
  Round round(Options{}, pieces_at({1, 2, 3}), servers, memory, t0 + milliseconds(10), kFresh, rng);
  CHECK_FALSE(round.probes());
  CHECK(round.source() == RoundSource::memory);
  const auto chosen = round.decide(memory, t0 + milliseconds(10), rng);
  CHECK(chosen == std::vector<ServerId>{ServerId(1), ServerId(2), ServerId(3)});
  CHECK(round.probe_done(chosen).empty());
  CHECK(round.reported().empty());
}

TEST_CASE("a probed round tells ProbeDone to every probed server that got nothing and reports what it saw") {
  const auto servers = cluster(8);
  LoadMemory memory;  // nothing heard: stale, so it probes
  std::mt19937_64 rng(2);
  Round round(Options{}, pieces_at({1, 2}), servers, memory, t0, kFresh, rng);
  REQUIRE(round.probes());
  CHECK(round.plan().probe.size() == 4);
  CHECK(round.preassign());
  CHECK(round.piece_bytes() == kMiB);
  // Home 1 is a straggler's queue; every other server is nearly idle.
  std::vector<uint64_t> bytes(8, 0);
  bytes[0] = 40 * kMiB;
  answer_all(round, bytes, memory, t0);
  const auto chosen = round.decide(memory, t0, rng);
  CHECK(chosen[0] != ServerId(1));
  CHECK(chosen[1] == ServerId(2));
  const auto done = round.probe_done(chosen);
  CHECK(done.size() == round.plan().probe.size() - 2);
  for (ServerId s : done) CHECK(std::find(chosen.begin(), chosen.end(), s) == chosen.end());
  CHECK(round.reported().size() == round.plan().probe.size());
  // The piece sent away counts on its new server until that one reports.
  CHECK(memory.fresh(chosen[0], t0, kFresh)->bytes == kMiB);
}

TEST_CASE("preassign stays home while home is within the skew factor of the lightest probed server") {
  const auto servers = cluster(8);
  std::mt19937_64 rng(3);
  for (const auto& [home_mib, moves] : std::vector<std::pair<uint64_t, bool>>{{10, false}, {21, true}}) {
    CAPTURE(home_mib);
    LoadMemory memory;
    Round round(Options{}, pieces_at({1, 2}), servers, memory, t0, kFresh, rng);
    REQUIRE(round.probes());
    std::vector<uint64_t> bytes(8, 10 * kMiB);
    for (uint32_t i = 0; i < 8; ++i) bytes[i] = (5 + i % 3) * kMiB;  // 5-7 MiB: the normal spread
    bytes[0] = home_mib * kMiB;
    answer_all(round, bytes, memory, t0);
    const auto chosen = round.decide(memory, t0, rng);
    CHECK((chosen[0] != ServerId(1)) == moves);
  }
  // With the factor off, the margin alone decides: 10 MiB against 5 moves.
  Options off;
  off.skew_factor = 0;
  LoadMemory memory;
  Round round(off, pieces_at({1, 2}), servers, memory, t0, kFresh, rng);
  std::vector<uint64_t> bytes(8, 5 * kMiB);
  bytes[0] = 10 * kMiB;
  answer_all(round, bytes, memory, t0);
  CHECK(round.decide(memory, t0, rng)[0] != ServerId(1));
}

TEST_CASE("preassign judges home by queues: many rounds' preassigned bytes on light servers do not hide a straggler") {
  // Half the servers are stragglers (50 MiB queued). The light ones have
  // 10 MiB queued and 16 MiB preassigned by the probes of other clients'
  // rounds, all in the same burst: 26 MiB, so a straggler home (52 MiB
  // with its own preassigned bytes) is not twice the lightest load, and
  // the first cut of the rule left its pieces there. Against the round's
  // lower quartile of queues (10 MiB) it is five times slower.
  const auto servers = cluster(8);
  std::mt19937_64 rng(5);
  LoadMemory memory;
  Round round(Options{}, pieces_at({1, 2, 3, 4}), servers, memory, t0, kFresh, rng);
  REQUIRE(round.probes());
  REQUIRE(round.plan().probe.size() == 8);
  for (ServerId s : round.plan().probe) {
    const bool straggler = s.value <= 4;
    round.answered(straggler ? ServerLoad{s, 52 * kMiB, 50, 2 * kMiB} : ServerLoad{s, 26 * kMiB, 10, 16 * kMiB},
                   t0, memory);
  }
  const auto chosen = round.decide(memory, t0, rng);
  std::set<ServerId> distinct(chosen.begin(), chosen.end());
  CHECK(distinct.size() == 4);
  for (ServerId s : chosen) CHECK(s.value > 4);
  // The servers learn the two parts apart from what the writes carry.
  for (const ServerLoad& l : round.reported()) CHECK(l.preassigned == (l.server.value <= 4 ? 2 : 16) * kMiB);
}

TEST_CASE("preassign leaves home alone when queues differ by their normal spread, whatever was preassigned") {
  // No straggler: queues of 8-13 MiB; preassigned bytes that make the
  // lightest servers' loads no lighter than home's do not matter either
  // way. Every piece stays home, as fixed placement would.
  const auto servers = cluster(16);
  std::mt19937_64 rng(6);
  for (int trial = 0; trial < 20; ++trial) {
    LoadMemory memory;
    Round round(Options{}, pieces_at({1, 2, 3, 4, 5, 6, 7, 8}), servers, memory, t0, kFresh, rng);
    REQUIRE(round.probes());
    for (ServerId s : round.plan().probe) {
      const uint64_t queue = (8 + s.value % 6) * kMiB;
      const uint64_t preassigned = (s.value % 3) * 4 * kMiB;
      round.answered(ServerLoad{s, queue + preassigned, 8, preassigned}, t0, memory);
    }
    const auto chosen = round.decide(memory, t0, rng);
    for (size_t i = 0; i < chosen.size(); ++i) CHECK(chosen[i] == ServerId(static_cast<uint32_t>(i + 1)));
  }
}

TEST_CASE("preassign chooses only among the servers it probed; collab also among those it heard of") {
  const auto servers = cluster(64);
  for (Policy policy : {Policy::preassign, Policy::collab}) {
    CAPTURE(policy_name(policy));
    Options o;
    o.policy = policy;
    std::mt19937_64 rng(4);
    LoadMemory memory;
    Round round(o, pieces_at({1, 2}), servers, memory, t0, kFresh, rng);
    REQUIRE(round.probes());
    const std::vector<ServerId> probed = round.plan().probe;
    // Every probed server is loaded; one server nobody probed is idle, as
    // another client heard it (second-hand, in a probe answer).
    ServerId idle(64);
    while (std::find(probed.begin(), probed.end(), idle) != probed.end()) idle = ServerId(idle.value - 1);
    memory.heard(ServerLoad{idle, 0, 0}, t0);
    for (ServerId s : probed) round.answered(ServerLoad{s, 50 * kMiB, 50}, t0, memory);
    const auto chosen = round.decide(memory, t0, rng);
    const bool took_idle = std::find(chosen.begin(), chosen.end(), idle) != chosen.end();
    CHECK(took_idle == (policy == Policy::collab));
  }
}

}  // namespace pvfs::sched

namespace pvfs::load {

TEST_CASE("a server keeps the newest figure of each peer and answers probes with the fresh ones and their age") {
  PeerLoads peers;
  const Nanos now = std::chrono::seconds(100);
  peers.learn(PeerLoad{2, 3, 3 << 20, 0}, std::chrono::milliseconds(50), now);
  // An older figure of the same peer (it took longer to arrive) is ignored.
  peers.learn(PeerLoad{2, 9, 9 << 20, 0}, std::chrono::milliseconds(80), now);
  peers.learn(PeerLoad{5, 1, 1 << 20, 4096}, std::chrono::milliseconds(400), now);
  const auto fresh = peers.fresh(now + std::chrono::milliseconds(10), std::chrono::milliseconds(300));
  REQUIRE(fresh.size() == 1);
  CHECK(fresh[0].load.server == 2);
  CHECK(fresh[0].load.bytes == (3u << 20));
  CHECK(fresh[0].age == std::chrono::milliseconds(60));
  // A newer figure replaces it.
  peers.learn(PeerLoad{2, 0, 0, 0}, Nanos(0), now + std::chrono::milliseconds(20));
  CHECK(peers.fresh(now + std::chrono::milliseconds(20), std::chrono::milliseconds(300))[0].load.bytes == 0);
  CHECK(peers.size() == 2);
}

}  // namespace pvfs::load
