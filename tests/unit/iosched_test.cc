// The I/O-step scheduler's policy (policy/iosched): queue orders, Algorithm 1's
// conflict test, the starvation guard, leases and size prediction, with a
// manual clock.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "policy/iosched/scheduler.h"

using namespace pvfs;
using namespace pvfs::iosched;
using std::chrono::seconds;

namespace {

Nanos at(int s) { return seconds(s); }

std::vector<ServerId> servers(std::initializer_list<uint32_t> ids) {
  std::vector<ServerId> out;
  for (uint32_t id : ids) out.push_back(ServerId(id));
  return out;
}

BeginRequest step(std::string job, ClientKey client, std::optional<uint64_t> bytes = {},
                  std::vector<ServerId> on = {}) {
  return BeginRequest{std::move(job), client, bytes, std::move(on)};
}

std::vector<std::string> jobs(const std::vector<StepView>& steps) {
  std::vector<std::string> out;
  for (const auto& s : steps) out.push_back(s.job);
  return out;
}

using Jobs = std::vector<std::string>;

Scheduler make(Policy policy, Nanos max_wait = Nanos(0)) {
  Options o;
  o.policy = policy;
  o.lease = seconds(10);
  o.max_wait = max_wait;
  return Scheduler(o);
}

void begin(Scheduler& s, const BeginRequest& r, Nanos now) { REQUIRE(s.begin(r, now).ok()); }

// Ends the job's step (client 1 by default) and returns what the next
// schedule() grants.
Jobs finish(Scheduler& s, const std::string& job, Nanos now, ClientKey client = 1, uint64_t bytes = 0) {
  auto ended = s.end(job, client, bytes, now);
  REQUIRE(ended.ok());
  return jobs(s.schedule(now));
}

}  // namespace

TEST_CASE("two server sets conflict when they share a server, and an empty set means all") {
  CHECK(conflicts(servers({1, 2, 3}), servers({3, 4})));
  CHECK_FALSE(conflicts(servers({1, 2}), servers({3, 4})));
  CHECK_FALSE(conflicts(servers({1, 5}), servers({2, 4, 6})));
  CHECK(conflicts({}, servers({7})));
  CHECK(conflicts(servers({7}), {}));
}

TEST_CASE("policy names round-trip and anything else is refused") {
  for (Policy p : {Policy::none, Policy::fcfs, Policy::sjf, Policy::sa_fcfs, Policy::sa_sjf})
    CHECK(iosched::parse_policy(policy_name(p)) == p);
  CHECK(iosched::parse_policy("SJF") == std::nullopt);
  CHECK(iosched::parse_policy("sa_sjf") == std::nullopt);
}

TEST_CASE("none gives every step a token at once") {
  auto s = make(Policy::none);
  begin(s, step("a", 1, 100), at(0));
  begin(s, step("b", 2, 50), at(0));
  CHECK(jobs(s.schedule(at(0))) == Jobs{"a", "b"});
  CHECK(s.granted("a") == true);
  CHECK(s.granted("b") == true);
}

TEST_CASE("fcfs serves one job system-wide in arrival order, whatever the sizes and servers") {
  auto s = make(Policy::fcfs);
  begin(s, step("big", 1, 900, servers({1})), at(0));
  begin(s, step("small", 1, 10, servers({2})), at(1));
  begin(s, step("mid", 1, 100, servers({3})), at(2));
  CHECK(jobs(s.schedule(at(2))) == Jobs{"big"});
  CHECK(s.granted("small") == false);
  CHECK(finish(s, "big", at(3)) == Jobs{"small"});
  CHECK(finish(s, "small", at(4)) == Jobs{"mid"});
  CHECK(finish(s, "mid", at(5)).empty());
  CHECK(s.step_count() == 0);
}

TEST_CASE("sjf serves the smallest declared step first, one at a time") {
  auto s = make(Policy::sjf);
  begin(s, step("a", 1, 300), at(0));
  begin(s, step("b", 1, 100), at(0));
  begin(s, step("c", 1, 200), at(0));
  CHECK(jobs(s.schedule(at(0))) == Jobs{"b"});
  CHECK(jobs(s.snapshot(at(0)).pending) == Jobs{"c", "a"});
  CHECK(finish(s, "b", at(1)) == Jobs{"c"});
  CHECK(finish(s, "c", at(2)) == Jobs{"a"});
}

TEST_CASE("sjf does not preempt: a smaller step arriving later waits for the token holder") {
  auto s = make(Policy::sjf);
  begin(s, step("a", 1, 300), at(0));
  CHECK(jobs(s.schedule(at(0))) == Jobs{"a"});
  begin(s, step("b", 1, 1), at(1));
  CHECK(s.schedule(at(1)).empty());
  CHECK(finish(s, "a", at(2)) == Jobs{"b"});
}

TEST_CASE("unknown sizes queue behind known ones, in arrival order") {
  auto s = make(Policy::sjf);
  begin(s, step("hold", 1, 1), at(0));
  CHECK(jobs(s.schedule(at(0))) == Jobs{"hold"});
  begin(s, step("u1", 1), at(1));
  begin(s, step("k-big", 1, 1000), at(2));
  begin(s, step("u2", 1), at(3));
  begin(s, step("k-small", 1, 10), at(4));
  const auto pending = s.snapshot(at(4)).pending;
  CHECK(jobs(pending) == Jobs{"k-small", "k-big", "u1", "u2"});
  CHECK(pending[2].source == SizeSource::unknown);
  CHECK(pending[0].source == SizeSource::declared);
}

TEST_CASE("a job's earlier steps predict the size of an undeclared one") {
  auto s = make(Policy::sjf);
  for (uint64_t bytes : {100u, 300u}) {
    begin(s, step("p", 1), at(0));
    s.schedule(at(0));
    REQUIRE(s.end("p", 1, bytes, at(1)).ok());
  }
  CHECK(s.predicted_bytes("p") == 200);
  begin(s, step("hold", 1, 1), at(2));
  CHECK(jobs(s.schedule(at(2))) == Jobs{"hold"});
  begin(s, step("declared-250", 1, 250), at(3));
  begin(s, step("p", 1), at(4));
  begin(s, step("declared-150", 1, 150), at(5));
  const auto pending = s.snapshot(at(5)).pending;
  CHECK(jobs(pending) == Jobs{"declared-150", "p", "declared-250"});
  CHECK(pending[1].source == SizeSource::predicted);
  CHECK(pending[1].bytes == 200);
}

TEST_CASE("the prediction averages only the last few steps") {
  Options o;
  o.policy = Policy::sjf;
  o.history = 2;
  Scheduler s(o);
  for (uint64_t bytes : {1000u, 10u, 30u}) {
    begin(s, step("p", 1), at(0));
    s.schedule(at(0));
    REQUIRE(s.end("p", 1, bytes, at(1)).ok());
  }
  CHECK(s.predicted_bytes("p") == 20);
}

TEST_CASE("the bytes of all a job's clients make its step's size") {
  auto s = make(Policy::sjf);
  begin(s, step("j", 1), at(0));
  begin(s, step("j", 2), at(0));
  s.schedule(at(0));
  REQUIRE(s.end("j", 1, 70, at(1)).ok());
  REQUIRE(s.end("j", 2, 30, at(1)).ok());
  CHECK(s.predicted_bytes("j") == 100);
}

TEST_CASE("sa-fcfs runs steps on disjoint servers together and holds back a conflicting one") {
  auto s = make(Policy::sa_fcfs);
  begin(s, step("a", 1, 100, servers({1, 2})), at(0));
  begin(s, step("b", 1, 100, servers({2, 3})), at(1));
  begin(s, step("c", 1, 100, servers({4, 5})), at(2));
  CHECK(jobs(s.schedule(at(2))) == Jobs{"a", "c"});
  CHECK(s.granted("b") == false);
  CHECK(finish(s, "c", at(3)).empty());
  CHECK(finish(s, "a", at(4)) == Jobs{"b"});
}

TEST_CASE("sa-sjf takes candidates smallest first, each unless it conflicts with one already chosen") {
  // Algorithm 1: order b(100) c(200) a(300) d(400); b and c are disjoint,
  // a shares a server with each, d with none.
  auto s = make(Policy::sa_sjf);
  begin(s, step("a", 1, 300, servers({1, 2})), at(0));
  begin(s, step("b", 1, 100, servers({1})), at(0));
  begin(s, step("c", 1, 200, servers({2})), at(0));
  begin(s, step("d", 1, 400, servers({3})), at(0));
  CHECK(jobs(s.schedule(at(0))) == Jobs{"b", "c", "d"});
  CHECK(finish(s, "b", at(1)).empty());
  CHECK(finish(s, "c", at(2)) == Jobs{"a"});
}

TEST_CASE("sharing-aware policies treat a step without servers as using all of them") {
  auto s = make(Policy::sa_sjf);
  begin(s, step("everywhere", 1, 10), at(0));
  begin(s, step("one", 1, 20, servers({9})), at(0));
  CHECK(jobs(s.schedule(at(0))) == Jobs{"everywhere"});
  CHECK(finish(s, "everywhere", at(1)) == Jobs{"one"});
}

TEST_CASE("system-wide policies serialize even steps on disjoint servers") {
  auto s = make(Policy::sjf);
  begin(s, step("a", 1, 10, servers({1})), at(0));
  begin(s, step("b", 1, 20, servers({2})), at(0));
  CHECK(jobs(s.schedule(at(0))) == Jobs{"a"});
}

TEST_CASE("without the guard a large step starves behind a stream of small ones") {
  auto s = make(Policy::sjf);
  begin(s, step("small0", 1, 1), at(0));
  begin(s, step("large", 1, 1000), at(0));
  CHECK(jobs(s.schedule(at(0))) == Jobs{"small0"});
  for (int i = 1; i <= 20; ++i) {
    begin(s, step("small" + std::to_string(i), 1, 1), at(i));
    CHECK(finish(s, "small" + std::to_string(i - 1), at(i)) == Jobs{"small" + std::to_string(i)});
  }
  CHECK(s.granted("large") == false);
}

TEST_CASE("the starvation guard sends a step waiting past max_wait next, whatever its size") {
  auto s = make(Policy::sjf, seconds(5));
  begin(s, step("small0", 1, 1), at(0));
  begin(s, step("large", 1, 1000), at(0));
  CHECK(jobs(s.schedule(at(0))) == Jobs{"small0"});
  std::string holder = "small0";
  int i = 1;
  for (; i <= 20 && s.granted("large") == false; ++i) {
    begin(s, step("small" + std::to_string(i), 1, 1), at(i));
    const auto granted = finish(s, holder, at(i));
    REQUIRE(granted.size() == 1);
    holder = granted[0];
  }
  CHECK(holder == "large");
  CHECK(i - 1 == 5);  // granted at the first end after it waited 5 s
}

TEST_CASE("next_deadline names the moment a step starves, and schedule() then reorders") {
  auto s = make(Policy::sjf, seconds(5));
  begin(s, step("hold", 1, 1), at(0));
  s.schedule(at(0));
  begin(s, step("large", 1, 1000), at(1));
  begin(s, step("small", 1, 1), at(2));
  s.renew(1, at(3));
  CHECK(s.next_deadline() == at(6));  // large's arrival + 5 s, before any lease
  CHECK(jobs(s.snapshot(at(5)).pending) == Jobs{"small", "large"});
  const auto starved = s.snapshot(at(6)).pending;
  CHECK(jobs(starved) == Jobs{"large", "small"});
  CHECK(starved[0].starved);
}

TEST_CASE("under sa-* a starved step keeps later steps off the servers it waits for") {
  auto s = make(Policy::sa_sjf, seconds(5));
  begin(s, step("x", 1, 1, servers({1})), at(0));
  CHECK(jobs(s.schedule(at(0))) == Jobs{"x"});
  begin(s, step("starving", 1, 1000, servers({1, 2})), at(0));
  begin(s, step("on-2", 1, 1, servers({2})), at(6));
  begin(s, step("on-3", 1, 1, servers({3})), at(6));
  // on-2 would fit beside x, but starving needs server 2 as soon as x ends.
  CHECK(jobs(s.schedule(at(6))) == Jobs{"on-3"});
  CHECK(finish(s, "x", at(7)) == Jobs{"starving"});
}

TEST_CASE("a holder that never ends loses its token when its lease lapses, and the next step runs") {
  auto s = make(Policy::fcfs);
  begin(s, step("stuck", 1, 10), at(0));
  begin(s, step("next", 2, 10), at(1));
  CHECK(jobs(s.schedule(at(1))) == Jobs{"stuck"});
  s.renew(2, at(9));
  CHECK(s.expire(at(9)).empty());
  const auto gone = s.expire(at(10));
  REQUIRE(gone.size() == 1);
  CHECK(gone[0].step.job == "stuck");
  CHECK(gone[0].lapsed);
  CHECK(jobs(s.schedule(at(10))) == Jobs{"next"});
}

TEST_CASE("renewing keeps a token past the first lease") {
  auto s = make(Policy::fcfs);
  begin(s, step("long", 1, 10), at(0));
  s.schedule(at(0));
  for (int t = 5; t <= 40; t += 5) {
    s.renew(1, at(t));
    CHECK(s.expire(at(t)).empty());
  }
  CHECK(s.granted("long") == true);
  CHECK(s.expire(at(50)).size() == 1);
}

TEST_CASE("a lapsed step does not feed the size prediction") {
  auto s = make(Policy::sjf);
  begin(s, step("j", 1), at(0));
  s.schedule(at(0));
  s.report_written("j", 1, 12345);
  CHECK(s.step_of("j", at(1))->bytes_written == 12345);
  CHECK(s.expire(at(10)).size() == 1);
  CHECK(s.predicted_bytes("j") == std::nullopt);
}

TEST_CASE("every client of a job joins one step, which ends when the last leaves or lapses") {
  auto s = make(Policy::fcfs);
  begin(s, step("multi", 1, 100), at(0));
  CHECK(jobs(s.schedule(at(0))) == Jobs{"multi"});
  auto join = s.begin(step("multi", 2), at(1));
  REQUIRE(join.ok());
  CHECK(join->granted);  // joined the running step: no new queue entry
  begin(s, step("other", 3, 1), at(1));
  CHECK(s.schedule(at(1)).empty());
  auto first = s.end("multi", 1, 10, at(2));
  REQUIRE(first.ok());
  CHECK_FALSE(first->has_value());
  CHECK(s.schedule(at(2)).empty());
  // Client 2 dies without ending: its lease (from t=1) lapses at 11.
  s.renew(3, at(10));
  CHECK(s.expire(at(11)).size() == 1);
  CHECK(jobs(s.schedule(at(11))) == Jobs{"other"});
}

TEST_CASE("a dropped client's steps end at once") {
  auto s = make(Policy::fcfs);
  begin(s, step("a", 7, 1), at(0));
  begin(s, step("b", 8, 1), at(0));
  s.schedule(at(0));
  const auto gone = s.drop_client(7, at(1));
  REQUIRE(gone.size() == 1);
  CHECK(gone[0].lapsed);
  CHECK(jobs(s.schedule(at(1))) == Jobs{"b"});
}

TEST_CASE("bad begins and ends are refused without changing anything") {
  auto s = make(Policy::fcfs);
  CHECK(s.begin(step("", 1), at(0)).code() == Errc::invalid_argument);
  CHECK(s.begin(step("j", 0), at(0)).code() == Errc::invalid_argument);
  CHECK(s.end("nobody", 1, 0, at(0)).code() == Errc::not_found);
  begin(s, step("j", 1, 5), at(0));
  CHECK(s.end("j", 2, 0, at(0)).code() == Errc::not_found);
  CHECK(s.step_count() == 1);
  Options tight;
  tight.max_steps = 1;
  Scheduler small(tight);
  begin(small, step("one", 1), at(0));
  CHECK(small.begin(step("two", 1), at(0)).code() == Errc::again);
}

TEST_CASE("switching policy keeps tokens given and orders the queue by the new policy") {
  auto s = make(Policy::none);
  begin(s, step("a", 1, 300), at(0));
  begin(s, step("b", 1, 200), at(0));
  CHECK(s.schedule(at(0)).size() == 2);
  s.set_policy(Policy::sjf);
  begin(s, step("c", 1, 100), at(1));
  begin(s, step("d", 1, 50), at(1));
  CHECK(s.schedule(at(1)).empty());  // a and b still hold tokens
  CHECK(finish(s, "a", at(2)).empty());
  CHECK(finish(s, "b", at(3)) == Jobs{"d"});
}

TEST_CASE("the snapshot lists active steps in grant order, the queue in policy order, and job totals with the "
          "current step's time so far") {
  auto s = make(Policy::sjf);
  begin(s, step("a", 1, 10), at(0));
  s.schedule(at(0));
  begin(s, step("b", 2, 30), at(1));
  begin(s, step("c", 3, 20), at(2));
  REQUIRE(s.end("a", 1, 10, at(4)).ok());
  s.schedule(at(4));
  const auto snap = s.snapshot(at(5));
  CHECK(snap.policy == Policy::sjf);
  CHECK(jobs(snap.active) == Jobs{"c"});
  CHECK(jobs(snap.pending) == Jobs{"b"});
  REQUIRE(snap.jobs.size() == 3);
  CHECK(snap.jobs[0].job == "a");
  CHECK(snap.jobs[0].io == seconds(4));
  CHECK(snap.jobs[0].bytes_written == 10);
  CHECK_FALSE(snap.jobs[0].in_step);
  // b still waits: its token wait grows with the clock; c holds since 4.
  CHECK(snap.jobs[1].job == "b");
  CHECK(snap.jobs[1].in_step);
  CHECK(snap.jobs[1].wait == seconds(4));
  CHECK(snap.jobs[1].io == seconds(0));
  CHECK(s.snapshot(at(9)).jobs[1].wait == seconds(8));
  CHECK(snap.jobs[2].job == "c");
  CHECK(snap.jobs[2].wait == seconds(2));
  CHECK(snap.jobs[2].io == seconds(1));
  CHECK(snap.jobs[2].steps == 0);
  CHECK(snap.active[0].granted == at(4));
}

TEST_CASE("at cluster scale no two conflicting steps ever hold tokens at once, and nothing waits for ever") {
  // 200 servers, 64 clients opening steps on random server subsets, ending
  // or dying at random; after every event the token holders must be
  // pairwise disjoint under sa-*, and single under fcfs/sjf.
  for (Policy policy : {Policy::fcfs, Policy::sjf, Policy::sa_fcfs, Policy::sa_sjf}) {
    CAPTURE(policy_name(policy));
    Options o;
    o.policy = policy;
    o.lease = seconds(30);
    o.max_wait = seconds(100);
    Scheduler s(o);
    std::mt19937_64 rng(42);
    uint64_t granted_total = 0;
    for (int t = 0; t < 5000; ++t) {
      const Nanos now = seconds(t);
      const auto client = static_cast<ClientKey>(1 + rng() % 64);
      const std::string job = "job" + std::to_string(client);
      const auto mine = s.step_of(job, now);
      if (!mine) {
        std::vector<ServerId> on;
        const uint32_t first = static_cast<uint32_t>(rng() % 200);
        const uint32_t width = 1 + static_cast<uint32_t>(rng() % 32);
        for (uint32_t k = 0; k < width; ++k) on.push_back(ServerId((first + k) % 200));
        REQUIRE(s.begin(step(job, client, rng() % 1000, on), now).ok());
      } else if (mine->granted && rng() % 3 == 0) {
        REQUIRE(s.end(job, client, 1, now).ok());
      } else if (rng() % 50 == 0) {
        (void)s.drop_client(client, now);
      } else {
        s.renew(client, now);
      }
      (void)s.expire(now);
      granted_total += s.schedule(now).size();
      const auto snap = s.snapshot(now);
      if (policy == Policy::fcfs || policy == Policy::sjf) CHECK(snap.active.size() <= 1);
      for (size_t i = 0; i < snap.active.size(); ++i)
        for (size_t j = i + 1; j < snap.active.size(); ++j)
          REQUIRE_FALSE(conflicts(snap.active[i].servers, snap.active[j].servers));
      for (const auto& p : snap.pending) CHECK(now - p.arrived < seconds(100 + 31 * 64));
    }
    CHECK(granted_total > 200);
  }
}

TEST_CASE("a re-registered token comes back at once unless it conflicts with one already back") {
  // A new delegate hears from clients that a former one granted them.
  auto s = make(Policy::sa_fcfs);
  auto a = step("a", 1, 10, servers({1, 2}));
  a.holds_token = true;
  auto b = step("b", 2, 10, servers({2, 3}));
  b.holds_token = true;  // cannot both have held it: the later claim queues
  auto c = step("c", 3, 10, servers({4}));
  c.holds_token = true;
  CHECK(s.begin(a, at(0))->granted);
  CHECK_FALSE(s.begin(b, at(0))->granted);
  CHECK(s.begin(c, at(0))->granted);
  CHECK(finish(s, "a", at(1)) == Jobs{"b"});
  auto f = make(Policy::fcfs);
  auto x = step("x", 1, 10, servers({1}));
  x.holds_token = true;
  auto y = step("y", 2, 10, servers({2}));
  y.holds_token = true;
  CHECK(f.begin(x, at(0))->granted);
  CHECK_FALSE(f.begin(y, at(0))->granted);  // one job system-wide
}

TEST_CASE("a gathering window waits only for remembered jobs the policy would serve first") {
  Options o;
  o.policy = Policy::sjf;
  o.gather = seconds(1);
  Scheduler s(o);
  // Earlier steps teach the scheduler three jobs' sizes (predicted from then on).
  int t = 0;
  for (const auto& [job, bytes] : {std::pair{"j2", 10}, {"j4", 40}, {"j8", 160}}) {
    REQUIRE(s.begin({job, 1, std::nullopt, {}}, at(t)).ok());
    REQUIRE(jobs(s.schedule(at(t + 2))) == Jobs{job});
    REQUIRE(s.end(job, 1, static_cast<uint64_t>(bytes), at(t + 3)).ok());
    t += 4;
  }
  // The smallest known job alone is not delayed.
  REQUIRE(s.begin({"j2", 1, std::nullopt, {}}, at(30)).ok());
  CHECK(jobs(s.schedule(at(30))) == Jobs{"j2"});
  REQUIRE(s.end("j2", 1, 10, at(31)).ok());
  // The largest waits, but only until the smaller ones came: the window closes
  // when the last job that would go before the head arrives.
  REQUIRE(s.begin({"j8", 2, std::nullopt, {}}, at(40)).ok());
  CHECK(s.schedule(at(40)).empty());
  REQUIRE(s.begin({"j4", 3, std::nullopt, {}}, at(40) + std::chrono::milliseconds(200)).ok());
  CHECK(s.schedule(at(40) + std::chrono::milliseconds(200)).empty());  // j2 could still come
  REQUIRE(s.begin({"j2", 4, std::nullopt, {}}, at(40) + std::chrono::milliseconds(300)).ok());
  CHECK(jobs(s.schedule(at(40) + std::chrono::milliseconds(300))) == Jobs{"j2"});
  // Under FCFS no later arrival could go first: no wait at all.
  Options f = o;
  f.policy = Policy::fcfs;
  Scheduler fcfs(f);
  REQUIRE(fcfs.begin({"x", 1, std::nullopt, {}}, at(0)).ok());
  CHECK(fcfs.schedule(at(0)).empty());  // nothing remembered yet: the whole window
  REQUIRE(jobs(fcfs.schedule(at(1))) == Jobs{"x"});
  REQUIRE(fcfs.end("x", 1, 5, at(2)).ok());
  REQUIRE(fcfs.begin({"y", 1, std::nullopt, {}}, at(5)).ok());
  CHECK(jobs(fcfs.schedule(at(5))) == Jobs{"y"});
}

TEST_CASE("under sa-sjf a gathering window waits only for remembered smaller jobs sharing a server") {
  Options o;
  o.policy = Policy::sa_sjf;
  o.gather = seconds(1);
  Scheduler s(o);
  const std::vector<ServerId> left{ServerId(0), ServerId(1)}, right{ServerId(2), ServerId(3)};
  int t = 0;
  for (const auto& [job, bytes, servers] : {std::tuple{"small-left", 10, left}, {"big-right", 100, right},
                                            {"big-left", 100, left}}) {
    REQUIRE(s.begin({job, 1, std::nullopt, servers}, at(t)).ok());
    REQUIRE(jobs(s.schedule(at(t + 2))) == Jobs{job});
    REQUIRE(s.end(job, 1, static_cast<uint64_t>(bytes), at(t + 3)).ok());
    t += 4;
  }
  // big-right shares no server with small-left: no reason to wait.
  REQUIRE(s.begin({"big-right", 1, std::nullopt, right}, at(30)).ok());
  CHECK(jobs(s.schedule(at(30))) == Jobs{"big-right"});
  REQUIRE(s.end("big-right", 1, 100, at(31)).ok());
  // big-left does: it waits for small-left (or the window's end).
  REQUIRE(s.begin({"big-left", 1, std::nullopt, left}, at(40)).ok());
  CHECK(s.schedule(at(40)).empty());
  CHECK(jobs(s.schedule(at(41))) == Jobs{"big-left"});
}

TEST_CASE("with gathering, steps arriving within the window after an idle spell are ordered by the policy") {
  Options o;
  o.policy = Policy::sjf;
  o.gather = seconds(1);
  Scheduler s(o);
  begin(s, step("big", 1, 1000), at(0));
  CHECK(s.schedule(at(0)).empty());  // the window is open
  CHECK(s.next_deadline() == at(1));
  begin(s, step("small", 2, 10), at(0) + std::chrono::milliseconds(800));
  CHECK(s.schedule(at(0) + std::chrono::milliseconds(900)).empty());
  CHECK(jobs(s.schedule(at(1))) == Jobs{"small"});
  // While a token is held, or once the queue was served, nothing gathers.
  begin(s, step("late", 3, 1), at(2) + std::chrono::milliseconds(500));
  // Both waited behind a holder: no new window, the next goes at once.
  CHECK(finish(s, "small", at(3), 2) == Jobs{"late"});
  CHECK(finish(s, "late", at(4), 3) == Jobs{"big"});
  Scheduler plain = make(Policy::sjf);
  begin(plain, step("big", 1, 1000), at(0));
  CHECK(jobs(plain.schedule(at(0))) == Jobs{"big"});  // without the window the first takes it
  Options none = o;
  none.policy = Policy::none;
  Scheduler n(none);
  begin(n, step("x", 1, 1), at(0));
  CHECK(jobs(n.schedule(at(0))) == Jobs{"x"});
}
