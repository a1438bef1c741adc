// Unit tests of policy/dispatch/load_memory: what the client remembers of server
// loads, and when a dispatch round probes instead of deciding from memory
// (stale, skewed, flat, lone), ending with a symmetric and a straggling
// cluster of 8 servers and 16 writers driven round after round in memory.
// Pure; a manual clock and seeded generators, no I/O.
#include "policy/dispatch/load_memory.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>

#include "tests/unit/dispatch_fixtures.h"

namespace pvfs::sched {
namespace {

using namespace fixtures;
using std::chrono::milliseconds;

// Every server of `servers` heard at `at` with `bytes[i]` outstanding.
LoadMemory memory_of(const std::vector<ServerId>& servers, std::vector<uint64_t> bytes, TimePoint at) {
  LoadMemory m;
  for (size_t i = 0; i < servers.size(); ++i) m.heard(ServerLoad{servers[i], bytes[i], 1}, at);
  return m;
}

RoundChoice choose(const Options& o, const std::vector<Piece>& pieces, const LoadMemory& m,
                   const std::vector<ServerId>& servers, TimePoint now, std::mt19937_64& rng) {
  const ProbePlan plan = plan_probes(o, pieces, servers, rng);
  const auto remembered = m.fresh_loads(servers, now, kFresh);
  return choose_round(o, pieces, plan, remembered, servers, rng);
}

}  // namespace

TEST_CASE("a figure is fresh for its lifetime, a newer one replaces it and an older one does not") {
  LoadMemory m;
  CHECK_FALSE(m.fresh(ServerId(1), t0, kFresh).has_value());
  m.heard(ServerLoad{ServerId(1), 5 * kMiB, 5}, t0);
  REQUIRE(m.fresh(ServerId(1), t0 + milliseconds(299), kFresh).has_value());
  CHECK(m.fresh(ServerId(1), t0 + milliseconds(299), kFresh)->bytes == 5 * kMiB);
  CHECK_FALSE(m.fresh(ServerId(1), t0 + milliseconds(300), kFresh).has_value());

  m.heard(ServerLoad{ServerId(1), 9 * kMiB, 9}, t0 - milliseconds(10));  // a peer's older report
  CHECK(m.fresh(ServerId(1), t0, kFresh)->bytes == 5 * kMiB);
  m.heard(ServerLoad{ServerId(1), 0, 0}, t0 + milliseconds(200));
  CHECK(m.fresh(ServerId(1), t0 + milliseconds(450), kFresh)->bytes == 0);
}

TEST_CASE("bytes sent away from home count until the server's next figure") {
  LoadMemory m;
  m.sent(ServerId(2), kMiB);  // unknown server: nothing to add to
  CHECK_FALSE(m.fresh(ServerId(2), t0, kFresh).has_value());
  m.heard(ServerLoad{ServerId(2), kMiB, 1}, t0);
  m.sent(ServerId(2), 2 * kMiB);
  CHECK(m.fresh(ServerId(2), t0, kFresh)->bytes == 3 * kMiB);
  CHECK(m.fresh(ServerId(2), t0, kFresh)->requests == 2);
  m.heard(ServerLoad{ServerId(2), kMiB / 2, 1}, t0 + milliseconds(1));
  CHECK(m.fresh(ServerId(2), t0 + milliseconds(1), kFresh)->bytes == kMiB / 2);
}

TEST_CASE("fresh_loads lists only the servers asked for with fresh figures, in their order") {
  const auto servers = cluster(4);
  LoadMemory m = memory_of(servers, {1, 2, 3, 4}, t0);
  m.heard(ServerLoad{ServerId(3), 30, 1}, t0 + milliseconds(250));
  const auto loads = m.fresh_loads(servers, t0 + milliseconds(350), kFresh);
  REQUIRE(loads.size() == 1);
  CHECK(loads[0].server == ServerId(3));
  CHECK(loads[0].bytes == 30);
}

// Times `count` writes of 1 MiB to `server`, each taking `took`, at `at`.
void wrote_times(LoadMemory& m, ServerId server, milliseconds took, TimePoint at, int count = 2) {
  for (int i = 0; i < count; ++i) m.wrote(server, kMiB, took, at);
}

TEST_CASE("a server that drains writes several times slower counts its bytes in time") {
  LoadMemory m;
  const auto at = t0;
  wrote_times(m, ServerId(1), milliseconds(125), at);  // 5x slower per byte
  wrote_times(m, ServerId(2), milliseconds(25), at);
  m.wrote(ServerId(3), 2 * kMiB, milliseconds(125), at);  // 2.5x: noise
  m.wrote(ServerId(3), 2 * kMiB, milliseconds(125), at);
  wrote_times(m, ServerId(4), milliseconds(20), at);  // quicker than the median
  const std::vector<ServerLoad> loads = {{ServerId(1), kMiB, 1}, {ServerId(2), kMiB, 1},
                                         {ServerId(3), kMiB, 1}, {ServerId(4), 0, 0},
                                         {ServerId(5), 0, 0}};
  const auto timed = m.in_time(loads, kMiB, at + milliseconds(10), kFresh);
  REQUIRE(timed.size() == 5);
  CHECK(timed[0].bytes == 9 * kMiB);  // (1 + 1) x 5 - 1, against server 2's median timing
  CHECK(timed[1].bytes == kMiB);
  CHECK(timed[2].bytes == kMiB);
  CHECK(timed[3].bytes == 0);
  CHECK(timed[4].bytes == 0);  // never timed
  // Not written to for four lifetimes of a figure: presumed recovered.
  CHECK(m.in_time(loads, kMiB, at + milliseconds(1199), kFresh)[0].bytes == 9 * kMiB);
  CHECK(m.in_time(loads, kMiB, at + milliseconds(1200), kFresh)[0].bytes == kMiB);
  // One quick write among the last three and it is healthy again: a
  // straggler is slow on every write.
  m.wrote(ServerId(1), kMiB, milliseconds(25), at + milliseconds(1));
  CHECK(m.in_time(loads, kMiB, at + milliseconds(1), kFresh)[0].bytes == kMiB);
  // Slow again on three writes in a row: the quick one has left the window.
  wrote_times(m, ServerId(1), milliseconds(100), at + milliseconds(2));
  CHECK(m.in_time(loads, kMiB, at + milliseconds(2), kFresh)[0].bytes == kMiB);
  m.wrote(ServerId(1), kMiB, milliseconds(100), at + milliseconds(3));
  CHECK(m.in_time(loads, kMiB, at + milliseconds(3), kFresh)[0].bytes == 7 * kMiB);  // 2 x 4 - 1
}

TEST_CASE("one slow write does not make a healthy server a straggler") {
  // A first write that paid the connection's setup, or a later one that
  // queued behind a burst, is 5-20x the others on a loaded machine.
  const std::vector<ServerLoad> loads = {{ServerId(1), 0, 0}, {ServerId(2), 0, 0}, {ServerId(3), 0, 0}};
  LoadMemory first;
  first.wrote(ServerId(1), kMiB, milliseconds(250), t0);  // its only write: 10x
  wrote_times(first, ServerId(2), milliseconds(25), t0);
  wrote_times(first, ServerId(3), milliseconds(25), t0);
  CHECK(first.in_time(loads, kMiB, t0, kFresh)[0].bytes == 0);
  LoadMemory later;
  wrote_times(later, ServerId(1), milliseconds(25), t0);
  later.wrote(ServerId(1), kMiB, milliseconds(500), t0);  // one 20x write among quick ones
  wrote_times(later, ServerId(2), milliseconds(25), t0);
  wrote_times(later, ServerId(3), milliseconds(25), t0);
  CHECK(later.in_time(loads, kMiB, t0, kFresh)[0].bytes == 0);
  // The second slow write in a row times it a straggler.
  first.wrote(ServerId(1), kMiB, milliseconds(250), t0);
  CHECK(first.in_time(loads, kMiB, t0, kFresh)[0].bytes == 9 * kMiB);  // (0 + 1) x 10 - 1
}

TEST_CASE("a straggler whose figure aged keeps being avoided while its timing lasts") {
  const auto servers = cluster(4);
  LoadMemory m = memory_of(servers, {0, 0, 0, 0}, t0);
  for (ServerId s : servers)
    wrote_times(m, s, milliseconds(s == ServerId(2) || s == ServerId(4) ? 100 : 20), t0);
  m.wrote(ServerId(4), kMiB, milliseconds(20), t0);  // 4 recovers: one quick write is enough
  for (ServerId s : {ServerId(1), ServerId(3)}) m.heard(ServerLoad{s, 0, 0}, t0 + milliseconds(400));
  // Server 2 and 4 figures are stale: 2 stays, as a straggler with no queue
  // known; 4 is left out (unknown), as are never-timed servers.
  const auto loads = m.remembered(servers, kMiB, t0 + milliseconds(500), kFresh);
  REQUIRE(loads.size() == 3);
  CHECK(loads[0].server == ServerId(1));
  CHECK(loads[1].server == ServerId(2));
  CHECK(loads[1].bytes == 4 * kMiB);  // (0 + 1) x 5 - 1
  CHECK(loads[2].server == ServerId(3));
  std::mt19937_64 rng(10);
  const auto pieces = pieces_at({2});
  const ProbePlan plan = plan_probes(Options{}, pieces, servers, rng);
  CHECK(choose_round(Options{}, pieces, plan, loads, servers, rng).chosen[0] != ServerId(2));
  // Its timing gone too: home again, to be timed again.
  const auto later = m.remembered(servers, kMiB, t0 + milliseconds(1200), kFresh);
  CHECK(later.empty());
}

TEST_CASE("a lone piece leaves a straggler home that bytes alone show no heavier") {
  const auto servers = cluster(4);
  LoadMemory m = memory_of(servers, {kMiB, kMiB, kMiB, kMiB}, t0);
  for (ServerId s : servers) wrote_times(m, s, milliseconds(s == ServerId(2) ? 125 : 25), t0);
  std::mt19937_64 rng(9);
  const auto pieces = pieces_at({2});
  const ProbePlan plan = plan_probes(Options{}, pieces, servers, rng);
  const auto raw = m.fresh_loads(servers, t0, kFresh);
  CHECK(choose_round(Options{}, pieces, plan, raw, servers, rng).chosen[0] == ServerId(2));
  const auto timed = m.in_time(raw, kMiB, t0, kFresh);
  CHECK(choose_round(Options{}, pieces, plan, timed, servers, rng).chosen[0] != ServerId(2));
}

TEST_CASE("a batch on flat fresh loads goes home from memory, without a probe") {
  const auto servers = cluster(8);
  const LoadMemory m = memory_of(servers, {kMiB, 0, kMiB, kMiB, 0, kMiB, kMiB, 0}, t0);
  std::mt19937_64 rng(1);
  const auto pieces = pieces_at({1, 2, 3, 4});
  const RoundChoice c = choose(Options{}, pieces, m, servers, t0 + milliseconds(5), rng);
  CHECK(c.source == RoundSource::memory);
  CHECK(std::string(c.why) == "flat");
  REQUIRE(c.chosen.size() == 4);
  for (size_t i = 0; i < pieces.size(); ++i) CHECK(c.chosen[i] == pieces[i].home);
}

TEST_CASE("a batch probes when a server of its plan has no fresh figure") {
  const auto servers = cluster(8);
  std::mt19937_64 rng(2);
  const auto pieces = pieces_at({1, 2});
  // Heard long ago: everything stale.
  LoadMemory m = memory_of(servers, std::vector<uint64_t>(8, 0), t0);
  CHECK(std::string(choose(Options{}, pieces, m, servers, t0 + milliseconds(400), rng).why) == "stale");
  // Only the homes fresh: the plan's 2k servers include unknown ones.
  m.heard(ServerLoad{ServerId(1), 0, 0}, t0 + milliseconds(390));
  m.heard(ServerLoad{ServerId(2), 0, 0}, t0 + milliseconds(390));
  const RoundChoice c = choose(Options{}, pieces, m, servers, t0 + milliseconds(400), rng);
  CHECK(c.source == RoundSource::probe);
  CHECK(std::string(c.why) == "stale");
  CHECK(c.stale);
  CHECK(c.chosen.empty());
}

TEST_CASE("a batch probes when memory says a piece should leave a heavy home") {
  const auto servers = cluster(4);
  const LoadMemory m = memory_of(servers, {20 * kMiB, kMiB, 0, kMiB}, t0);
  std::mt19937_64 rng(3);
  const RoundChoice c = choose(Options{}, pieces_at({1, 2}), m, servers, t0, rng);
  CHECK(c.source == RoundSource::probe);
  CHECK(std::string(c.why) == "skewed");
  CHECK_FALSE(c.stale);
}

TEST_CASE("a skew within the redirect margin is flat") {
  const auto servers = cluster(4);
  Options o;
  o.margin_bytes = 2 * kMiB;
  const LoadMemory m = memory_of(servers, {2 * kMiB, 0, kMiB, 0}, t0);
  std::mt19937_64 rng(4);
  CHECK(choose(o, pieces_at({1, 3}), m, servers, t0, rng).source == RoundSource::memory);
}

TEST_CASE("a lone piece never probes: home when its home is unknown, away from a heavy home by memory") {
  const auto servers = cluster(4);
  std::mt19937_64 rng(5);
  LoadMemory m;  // nothing heard yet
  RoundChoice c = choose(Options{}, pieces_at({3}), m, servers, t0, rng);
  CHECK(c.source == RoundSource::memory);
  CHECK(std::string(c.why) == "lone");
  CHECK(c.chosen == std::vector<ServerId>{ServerId(3)});

  m = memory_of(servers, {0, kMiB, 30 * kMiB, kMiB}, t0);
  c = choose(Options{}, pieces_at({3}), m, servers, t0, rng);
  CHECK(c.source == RoundSource::memory);
  CHECK(c.chosen == std::vector<ServerId>{ServerId(1)});

  // Small pieces among a lone big one do not make a batch.
  c = choose(Options{}, {Piece{ServerId(3), kMiB}, Piece{ServerId(2), 4096}}, m, servers, t0, rng);
  CHECK(c.source == RoundSource::memory);
  CHECK(c.chosen == std::vector<ServerId>{ServerId(1), ServerId(2)});
}

TEST_CASE("a lone piece stays on a healthy home whose queue is only a little longer") {
  const auto servers = cluster(4);
  std::mt19937_64 rng(11);
  // Home 2 has 3 MiB more queued than the lightest (kLoneMarginFactor
  // margins): a batch would probe this skew; a lone piece, with no probe to
  // check it, stays home.
  LoadMemory m = memory_of(servers, {kMiB, 4 * kMiB, kMiB, kMiB}, t0);
  RoundChoice c = choose(Options{}, pieces_at({2}), m, servers, t0, rng);
  CHECK(std::string(c.why) == "lone");
  CHECK(c.chosen == std::vector<ServerId>{ServerId(2)});
  CHECK(choose(Options{}, pieces_at({2, 3}), m, servers, t0, rng).source == RoundSource::probe);
  // Past kLoneMarginFactor margins it leaves.
  m = memory_of(servers, {kMiB, 5 * kMiB, kMiB, kMiB}, t0);
  CHECK(choose(Options{}, pieces_at({2}), m, servers, t0, rng).chosen != std::vector<ServerId>{ServerId(2)});
}

TEST_CASE("two-choice and collab always probe; fixed and random never") {
  const auto servers = cluster(8);
  const LoadMemory m = memory_of(servers, std::vector<uint64_t>(8, 0), t0);
  std::mt19937_64 rng(6);
  for (Policy p : {Policy::two_choice, Policy::collab}) {
    Options o;
    o.policy = p;
    CHECK(choose(o, pieces_at({1, 2}), m, servers, t0, rng).source == RoundSource::probe);
    CHECK(choose(o, pieces_at({1}), m, servers, t0, rng).source == RoundSource::probe);
  }
  for (Policy p : {Policy::fixed, Policy::random}) {
    Options o;
    o.policy = p;
    CHECK(choose(o, pieces_at({1, 2}), m, servers, t0, rng).source == RoundSource::none);
  }
}

// 8 servers, 16 writers striped over them, 1 MiB pieces in batches of 4;
// every write's reply tells the memory its server's queue. A server
// drains `rate[s]` pieces per round. Returns probe rounds and pieces
// placed on the slowest server over 200 rounds after a probed warm-up.
struct Run {
  int probes = 0;
  int on_straggler = 0;
  int pieces = 0;
};
Run drive(std::vector<double> rate, uint64_t seed) {
  const auto servers = cluster(8);
  std::mt19937_64 rng(seed);
  std::vector<double> queue(8, 0);
  LoadMemory m;
  TimePoint now = t0;
  Run run;
  uint32_t next_home = 0;
  for (int round = 0; round < 200; ++round) {
    now += milliseconds(5);
    std::vector<Piece> pieces;
    for (int i = 0; i < 4; ++i) pieces.push_back(Piece{servers[next_home++ % 8], kMiB});
    const ProbePlan plan = plan_probes(Options{}, pieces, servers, rng);
    const RoundChoice c = choose_round(Options{}, pieces, plan, m.fresh_loads(servers, now, kFresh), servers, rng);
    std::vector<ServerId> chosen = c.chosen;
    if (c.source == RoundSource::probe) {
      ++run.probes;
      std::vector<ServerLoad> answers;
      for (ServerId s : plan.probe) {
        answers.push_back(ServerLoad{s, static_cast<uint64_t>(queue[s.value - 1] * kMiB), 0});
        m.heard(answers.back(), now);
      }
      chosen = assign(Options{}, pieces, plan, answers, servers, rng);
    }
    for (ServerId s : chosen) {
      queue[s.value - 1] += 1;
      ++run.pieces;
      if (s == ServerId(1)) ++run.on_straggler;
      // The reply: the queue the write leaves behind.
      m.heard(ServerLoad{s, static_cast<uint64_t>((queue[s.value - 1] - 1) * kMiB), 0}, now);
    }
    for (size_t s = 0; s < 8; ++s) queue[s] = std::max(0.0, queue[s] - rate[s]);
  }
  return run;
}

TEST_CASE("symmetric servers: write replies keep the memory fresh and flat, so almost no round probes") {
  const Run run = drive(std::vector<double>(8, 0.5), 7);
  CHECK(run.pieces == 800);
  // The first rounds know nothing (stale) and probe; after that, none.
  CHECK(run.probes <= 2);
  CHECK(run.on_straggler >= 95);
}

TEST_CASE("one straggler: memory shows the skew, rounds probe and the straggler gets less") {
  std::vector<double> rate(8, 0.55);
  rate[0] = 0.1;  // server 1 drains five times slower
  const Run run = drive(rate, 8);
  CHECK(run.probes >= 50);
  // Fixed placement would give it 100 of the 800 pieces and a queue of
  // 80 pieces by the end.
  CHECK(run.on_straggler < 50);
}

}  // namespace pvfs::sched
