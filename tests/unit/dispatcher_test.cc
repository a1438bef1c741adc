// Unit tests of policy/dispatch/dispatcher: policy names, probe plans per policy,
// and assignment per policy, ending with the paper's setting at cluster
// scale: 100 servers in memory, one straggler, collaborative probe.
// Pure; seeded generators, no I/O.
#include "policy/dispatch/dispatcher.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>

#include "tests/unit/dispatch_fixtures.h"

namespace pvfs::sched {
namespace {

using namespace fixtures;

Options with(Policy policy) {
  Options o;
  o.policy = policy;
  return o;
}

std::vector<ServerId> ids(std::initializer_list<uint32_t> values) {
  std::vector<ServerId> out;
  for (uint32_t v : values) out.push_back(ServerId(v));
  return out;
}

std::vector<ServerId> homes_of(const std::vector<Piece>& pieces) {
  std::vector<ServerId> out;
  for (const Piece& p : pieces) out.push_back(p.home);
  return out;
}

bool distinct(const std::vector<ServerId>& v) {
  return std::set<ServerId>(v.begin(), v.end()).size() == v.size();
}

bool contains(const std::vector<ServerId>& v, ServerId s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST_CASE("policy names round-trip and two_choice is accepted with either spelling") {
  for (Policy p : {Policy::fixed, Policy::random, Policy::two_choice, Policy::collab,
                   Policy::preassign}) {
    REQUIRE(parse_policy(policy_name(p)).has_value());
    CHECK(*parse_policy(policy_name(p)) == p);
  }
  CHECK(policy_name(Policy::two_choice) == "two-choice");
  CHECK(parse_policy("two_choice") == Policy::two_choice);
  CHECK(parse_policy("two-choice") == Policy::two_choice);
  CHECK_FALSE(parse_policy("").has_value());
  CHECK_FALSE(parse_policy("Fixed").has_value());
  CHECK_FALSE(parse_policy("two choice").has_value());
  CHECK(Options{}.policy == Policy::preassign);
}

TEST_CASE("fixed and random probe nothing") {
  const auto servers = cluster(10);
  const auto pieces = pieces_at({1, 2, 3});
  std::mt19937_64 rng(1);
  for (Policy p : {Policy::fixed, Policy::random}) {
    const ProbePlan plan = plan_probes(with(p), pieces, servers, rng);
    CHECK(plan.probe.empty());
    CHECK(plan.second_choice.empty());
  }
}

TEST_CASE("collab and preassign probe every home plus random others, 2k distinct servers") {
  const auto servers = cluster(50);
  const auto pieces = pieces_at({3, 9, 9, 40});  // a repeated home counts once
  for (Policy p : {Policy::collab, Policy::preassign}) {
    for (uint64_t seed = 0; seed < 20; ++seed) {
      std::mt19937_64 rng(seed);
      const ProbePlan plan = plan_probes(with(p), pieces, servers, rng);
      CHECK(plan.probe.size() == 8);
      CHECK(distinct(plan.probe));
      for (const Piece& piece : pieces) CHECK(contains(plan.probe, piece.home));
      for (ServerId s : plan.probe) CHECK(contains(servers, s));
      CHECK(plan.second_choice.empty());
    }
  }
}

TEST_CASE("a collab plan probes every server when 2k exceeds the cluster") {
  const auto servers = cluster(5);
  std::mt19937_64 rng(3);
  const ProbePlan plan = plan_probes(with(Policy::collab), pieces_at({1, 2, 3, 4}), servers, rng);
  auto sorted = plan.probe;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == servers);
}

TEST_CASE("a plan is a function of the seed") {
  const auto servers = cluster(100);
  const auto pieces = pieces_at({5, 6, 7, 8, 9, 10});
  for (Policy p : {Policy::two_choice, Policy::collab}) {
    std::mt19937_64 a(77), b(77), c(78);
    const ProbePlan pa = plan_probes(with(p), pieces, servers, a);
    const ProbePlan pb = plan_probes(with(p), pieces, servers, b);
    const ProbePlan pc = plan_probes(with(p), pieces, servers, c);
    CHECK(pa.probe == pb.probe);
    CHECK(pa.second_choice == pb.second_choice);
    CHECK(pa.probe != pc.probe);
  }
}

TEST_CASE("collab's random others are spread over the whole cluster") {
  const auto servers = cluster(20);
  std::map<ServerId, int> times;
  std::mt19937_64 rng(11);
  for (int i = 0; i < 2000; ++i) {
    const ProbePlan plan = plan_probes(with(Policy::collab), pieces_at({1}), servers, rng);
    REQUIRE(plan.probe.size() == 2);
    CHECK(plan.probe[0] == ServerId(1));
    ++times[plan.probe[1]];
  }
  CHECK(times.count(ServerId(1)) == 0);
  CHECK(times.size() == 19);
  for (const auto& [server, n] : times) CHECK(n > 2000 / 19 / 2);
}

TEST_CASE("two_choice plans one other server per piece and probes homes and those") {
  const auto servers = cluster(30);
  const auto pieces = pieces_at({1, 2, 2, 30});
  for (uint64_t seed = 0; seed < 20; ++seed) {
    std::mt19937_64 rng(seed);
    const ProbePlan plan = plan_probes(with(Policy::two_choice), pieces, servers, rng);
    REQUIRE(plan.second_choice.size() == pieces.size());
    CHECK(distinct(plan.probe));
    std::set<ServerId> expected;
    for (size_t i = 0; i < pieces.size(); ++i) {
      CHECK(plan.second_choice[i] != pieces[i].home);
      CHECK(contains(servers, plan.second_choice[i]));
      expected.insert(pieces[i].home);
      expected.insert(plan.second_choice[i]);
    }
    CHECK(std::set<ServerId>(plan.probe.begin(), plan.probe.end()) == expected);
  }
  // A one-server cluster has no other choice.
  std::mt19937_64 rng(0);
  const ProbePlan alone = plan_probes(with(Policy::two_choice), pieces_at({1}), cluster(1), rng);
  CHECK(alone.second_choice == ids({1}));
  CHECK(alone.probe == ids({1}));
}

TEST_CASE("pieces below min_bytes are not probed for and go home") {
  const auto servers = cluster(20);
  auto pieces = pieces_at({1, 2}, 4096);
  pieces.push_back(Piece{ServerId(3), kMiB});
  std::mt19937_64 rng(5);

  const ProbePlan collab = plan_probes(with(Policy::collab), pieces, servers, rng);
  CHECK(collab.probe.size() == 2);  // 2 x one piece worth probing
  CHECK(collab.probe[0] == ServerId(3));

  const ProbePlan two = plan_probes(with(Policy::two_choice), pieces, servers, rng);
  CHECK(two.second_choice[0] == ServerId(1));
  CHECK(two.second_choice[1] == ServerId(2));
  CHECK(two.probe.size() == 2);

  const auto small = pieces_at({1, 2, 3}, 100);
  CHECK(plan_probes(with(Policy::collab), small, servers, rng).probe.empty());

  // Even with everyone else idle, a small piece stays home.
  std::vector<ServerLoad> loads;
  for (ServerId s : servers) loads.push_back(ServerLoad{s, s == ServerId(1) ? 100 * kMiB : 0, 0});
  for (Policy p : {Policy::random, Policy::two_choice, Policy::collab, Policy::preassign}) {
    const ProbePlan plan = plan_probes(with(p), small, servers, rng);
    CHECK(assign(with(p), small, plan, loads, servers, rng) == homes_of(small));
  }
}

TEST_CASE("fixed sends every piece home whatever the loads") {
  const auto servers = cluster(4);
  const auto pieces = pieces_at({1, 2, 1, 4});
  const std::vector<ServerLoad> loads{{ServerId(1), 100 * kMiB, 50}, {ServerId(3), 0, 0}};
  std::mt19937_64 rng(0);
  CHECK(assign(with(Policy::fixed), pieces, ProbePlan{}, loads, servers, rng) == homes_of(pieces));
}

TEST_CASE("random spreads pieces uniformly over the cluster") {
  const auto servers = cluster(10);
  std::vector<Piece> pieces(20000, Piece{ServerId(1), kMiB});
  std::mt19937_64 rng(9);
  const auto chosen = assign(with(Policy::random), pieces, ProbePlan{}, {}, servers, rng);
  REQUIRE(chosen.size() == pieces.size());
  std::map<ServerId, int> times;
  for (ServerId s : chosen) ++times[s];
  CHECK(times.size() == 10);
  for (const auto& [server, n] : times) {
    CHECK(n > 1800);  // 2000 expected, sd ~ 42
    CHECK(n < 2200);
  }
}

TEST_CASE("two_choice takes the lighter of home and its second choice, home on ties") {
  const auto servers = cluster(4);
  const auto pieces = pieces_at({1, 2, 3});
  ProbePlan plan;
  plan.second_choice = ids({2, 3, 4});
  plan.probe = ids({1, 2, 3, 4});
  const std::vector<ServerLoad> loads{
      {ServerId(1), 10 * kMiB, 4},  // heavier than 2: piece 0 moves
      {ServerId(2), 5 * kMiB, 2},   // ties 3 exactly: piece 1 stays
      {ServerId(3), 5 * kMiB, 2},
      {ServerId(4), 5 * kMiB, 1},  // same bytes, fewer requests: piece 2 moves
  };
  std::mt19937_64 rng(0);
  CHECK(assign(with(Policy::two_choice), pieces, plan, loads, servers, rng) == ids({2, 2, 4}));
}

TEST_CASE("two_choice does not count its own assignments") {
  // Every piece's pair holds the same light server: all pile onto it, the
  // herd behaviour of native two-choice (§III-A).
  const auto servers = cluster(5);
  const auto pieces = pieces_at({1, 2, 3, 4});
  ProbePlan plan;
  plan.second_choice = ids({5, 5, 5, 5});
  plan.probe = ids({1, 2, 3, 4, 5});
  std::vector<ServerLoad> loads;
  for (uint32_t i = 1; i <= 4; ++i) loads.push_back(ServerLoad{ServerId(i), 3 * kMiB, 1});
  loads.push_back(ServerLoad{ServerId(5), 2 * kMiB, 1});
  std::mt19937_64 rng(0);
  CHECK(assign(with(Policy::two_choice), pieces, plan, loads, servers, rng) == ids({5, 5, 5, 5}));
}

TEST_CASE("two_choice never picks a server that did not answer") {
  const auto servers = cluster(3);
  const auto pieces = pieces_at({1, 2, 3});
  ProbePlan plan;
  plan.second_choice = ids({2, 3, 1});
  // 3 did not answer: piece 1 stays home; piece 2's home is unknown, so its
  // second choice (1) is taken.
  const std::vector<ServerLoad> loads{{ServerId(1), 9 * kMiB, 3}, {ServerId(2), 1 * kMiB, 1}};
  std::mt19937_64 rng(0);
  CHECK(assign(with(Policy::two_choice), pieces, plan, loads, servers, rng) == ids({2, 2, 1}));
  // Nothing known: home.
  CHECK(assign(with(Policy::two_choice), pieces, plan, {}, servers, rng) == ids({1, 2, 3}));
}

TEST_CASE("collab counts its own assignments and spreads the round over the lightest servers") {
  const auto servers = cluster(9);
  const auto pieces = pieces_at({1, 1, 1, 1}, 4 * kMiB);
  std::vector<ServerLoad> loads{{ServerId(1), 100 * kMiB, 40}};
  for (uint32_t i = 2; i <= 9; ++i) loads.push_back(ServerLoad{ServerId(i), (i - 2) * kMiB, 1});
  std::mt19937_64 rng(0);
  // 2 (0) takes 4 MiB, then 3 (1 MiB) is lightest, then 4, then 5.
  CHECK(assign(with(Policy::collab), pieces, ProbePlan{}, loads, servers, rng) == ids({2, 3, 4, 5}));
  // Preassign moves them to the servers that are not slow against the
  // round's lower quartile (2 MiB): 2, 3, 4 and 5 (3 MiB is not more than
  // the 1 MiB margin above it), at random among the lighter half of those
  // that took none yet; once all four took one, the lightest takes another
  // rather than leave a piece on the straggler. Judged on the loads
  // reported: the round's own 4 MiB pieces make none of them slow.
  const auto six = pieces_at({1, 1, 1, 1, 1, 1}, 4 * kMiB);
  std::set<ServerId> firsts;
  for (uint64_t seed = 0; seed < 32; ++seed) {
    std::mt19937_64 r(seed);
    const auto chosen = assign(with(Policy::preassign), six, ProbePlan{}, loads, servers, r);
    std::map<ServerId, int> per_server;
    for (ServerId s : chosen) ++per_server[s];
    CHECK(per_server.size() == 4);
    for (uint32_t s : {2u, 3u, 4u, 5u}) CHECK(per_server[ServerId(s)] >= 1);
    firsts.insert(chosen[0]);
  }
  // The first piece goes to 2 or 3 (the lighter half), not always the lightest.
  CHECK(firsts == std::set<ServerId>{ServerId(2), ServerId(3)});
}

TEST_CASE("collab keeps a piece home unless another server is lighter by more than the margin") {
  const auto servers = cluster(3);
  const auto piece = pieces_at({1}, kMiB);
  Options o = with(Policy::collab);
  o.margin_bytes = kMiB;
  std::mt19937_64 rng(0);
  auto loads_with = [](uint64_t home, uint64_t other) {
    return std::vector<ServerLoad>{{ServerId(1), home, 1}, {ServerId(2), other, 1}};
  };
  CHECK(assign(o, piece, ProbePlan{}, loads_with(3 * kMiB, 2 * kMiB + 1), servers, rng) == ids({1}));
  CHECK(assign(o, piece, ProbePlan{}, loads_with(3 * kMiB, 2 * kMiB), servers, rng) == ids({1}));
  CHECK(assign(o, piece, ProbePlan{}, loads_with(3 * kMiB, 2 * kMiB - 1), servers, rng) == ids({2}));
  // Home is the lightest: home.
  CHECK(assign(o, piece, ProbePlan{}, loads_with(0, 5 * kMiB), servers, rng) == ids({1}));
  // A zero margin moves for any gain, but not on a tie.
  o.margin_bytes = 0;
  CHECK(assign(o, piece, ProbePlan{}, loads_with(5, 4), servers, rng) == ids({2}));
  CHECK(assign(o, piece, ProbePlan{}, loads_with(5, 5), servers, rng) == ids({1}));
}

TEST_CASE("collab chooses only servers in loads, and home when nothing is known") {
  const auto servers = cluster(10);
  const auto pieces = pieces_at({1, 2, 3, 4}, 8 * kMiB);
  std::mt19937_64 rng(21);
  // 1 and 2 answered (heavy); 7 was reported by a peer (idle); the rest
  // are silent, so they are never chosen however light they might be.
  const std::vector<ServerLoad> loads{
      {ServerId(1), 50 * kMiB, 9}, {ServerId(2), 50 * kMiB, 9}, {ServerId(7), 0, 0}};
  const auto chosen = assign(with(Policy::collab), pieces, ProbePlan{}, loads, servers, rng);
  // 1 moves to 7, which then takes no more this round; 2 stays home (1 is
  // no lighter); unknown homes (3, 4) go to the lightest known server not
  // yet given a piece: 1, then 2.
  CHECK(chosen == ids({7, 2, 1, 2}));
  CHECK(assign(with(Policy::collab), pieces, ProbePlan{}, {}, servers, rng) == ids({1, 2, 3, 4}));
}

TEST_CASE("collab gives each server other than a piece's home at most one piece per round") {
  // A blind burst: every server equally loaded but one idle. Without the
  // cap all eight pieces would land on the idle server, making it the next
  // straggler.
  const auto servers = cluster(16);
  std::vector<ServerLoad> loads;
  for (uint32_t s = 0; s < 16; ++s) loads.push_back({ServerId(s), s == 9 ? 0 : 40 * kMiB, s == 9 ? 0u : 5u});
  loads[3].bytes = 400 * kMiB;  // a straggler home to every piece
  const auto pieces = pieces_at({3, 3, 3, 3, 3, 3, 3, 3}, kMiB);
  std::mt19937_64 rng(5);
  const auto chosen = assign(with(Policy::preassign), pieces, ProbePlan{}, loads, servers, rng);
  std::map<ServerId, int> per_server;
  for (auto s : chosen) ++per_server[s];
  CHECK(per_server.count(ServerId(3)) == 0);
  for (const auto& [server, n] : per_server) CHECK(n == 1);
}

TEST_CASE("preassign moves pieces off stragglers that are three quarters of what the round heard") {
  // 13 of the 16 servers a round heard are stragglers, so its lower
  // quartile (40 MiB) is a straggler's queue too and the homes (50 MiB)
  // are not twice that; against the round's lightest (8 MiB), with twice
  // the factor, they are slow. The three light servers take a piece each,
  // then the lighter stragglers: no piece stays on a home of 50 MiB. The
  // first cut (home against twice the server it would move to, one piece
  // per server) left five of the eight there.
  const auto servers = cluster(16);
  std::vector<ServerLoad> loads;
  for (uint32_t s = 0; s < 16; ++s) loads.push_back({ServerId(s), (s < 3 ? 8 : s < 6 ? 40 : 50) * kMiB, 8});
  const auto pieces = pieces_at({8, 9, 10, 11, 12, 13, 14, 15}, kMiB);
  for (uint64_t seed = 0; seed < 16; ++seed) {
    std::mt19937_64 rng(seed);
    const auto chosen = assign(with(Policy::preassign), pieces, ProbePlan{}, loads, servers, rng);
    std::map<ServerId, int> per_server;
    for (ServerId s : chosen) {
      CHECK_MESSAGE(s.value < 6, "piece left on server " << s.value);
      ++per_server[s];
    }
    for (uint32_t s : {0u, 1u, 2u}) CHECK(per_server[ServerId(s)] >= 1);
  }
}

TEST_CASE("collab breaks exact ties among the lightest servers with the generator") {
  const auto servers = cluster(5);
  const auto piece = pieces_at({1});
  std::vector<ServerLoad> loads{{ServerId(1), 100 * kMiB, 10}};
  for (uint32_t i = 2; i <= 5; ++i) loads.push_back(ServerLoad{ServerId(i), 0, 0});
  std::set<ServerId> seen;
  for (uint64_t seed = 0; seed < 64; ++seed) {
    std::mt19937_64 a(seed), b(seed);
    const auto first = assign(with(Policy::collab), piece, ProbePlan{}, loads, servers, a);
    CHECK(first == assign(with(Policy::collab), piece, ProbePlan{}, loads, servers, b));
    seen.insert(first[0]);
  }
  CHECK(seen == std::set<ServerId>{ServerId(2), ServerId(3), ServerId(4), ServerId(5)});
}

// §III at cluster scale: 100 servers with ordinary loads and one straggler
// holding far more. Every piece whose home is the straggler leaves it, and
// the round's pieces do not pile onto one light server.
TEST_CASE("with one straggler among 100 servers, collab redirects every piece away from it") {
  const auto servers = cluster(100);
  const ServerId straggler(17);
  std::mt19937_64 world(2024);
  std::map<ServerId, uint64_t> load;
  for (ServerId s : servers) load[s] = world() % (8 * kMiB);
  load[straggler] = 10 * 1024 * kMiB;

  for (Policy p : {Policy::collab, Policy::preassign}) {
    for (uint64_t seed = 0; seed < 50; ++seed) {
      std::mt19937_64 rng(seed);
      const std::vector<Piece> pieces(16, Piece{straggler, kMiB});
      const ProbePlan plan = plan_probes(with(p), pieces, servers, rng);
      REQUIRE(plan.probe.size() == 32);
      std::vector<ServerLoad> loads;
      for (ServerId s : plan.probe) loads.push_back(ServerLoad{s, load[s], 1});
      const auto chosen = assign(with(p), pieces, plan, loads, servers, rng);
      std::map<ServerId, int> per_server;
      for (ServerId s : chosen) {
        CHECK(s != straggler);
        CHECK(contains(plan.probe, s));
        ++per_server[s];
      }
      // 16 MiB over 31 probed servers with loads under 8 MiB: no server
      // takes more than 8 pieces.
      for (const auto& [server, n] : per_server) CHECK(n <= 8);
      CHECK(per_server.size() >= 2);
    }
  }

  // Under fixed they all hit the straggler.
  std::mt19937_64 rng(0);
  const std::vector<Piece> pieces(16, Piece{straggler, kMiB});
  const auto fixed = assign(with(Policy::fixed), pieces, ProbePlan{}, {}, servers, rng);
  CHECK(std::count(fixed.begin(), fixed.end(), straggler) == 16);
}

}  // namespace pvfs::sched
