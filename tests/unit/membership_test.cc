// Unit tests of policy/membership: liveness by heartbeats and the
// start-up grace, the delegate (lowest live id), readiness, and the
// delegate's next map: a dead member leaves, a steady new one joins, the
// tuner runs once per interval on fresh reports only, once every member's
// is in (or dead_after later), never under the
// static policies, and a new delegate carries on without the old one's
// memory. Pure: time is passed in.
#include "policy/membership/membership.h"

#include <deque>

#include <doctest/doctest.h>

namespace pvfs::mds {
namespace {

using std::chrono::milliseconds;
using placement::AnuMap;

const SteadyTime t0 = SteadyTime{} + std::chrono::hours(1);
SteadyTime at(int ms) { return t0 + milliseconds(ms); }

MembershipOptions options(placement::Policy policy = placement::Policy::anu) {
  MembershipOptions o;
  o.dead_after = milliseconds(3000);
  o.tune_interval = milliseconds(10000);
  o.policy = policy;
  return o;
}

AnuMap uniform(std::vector<MdsId> ids) {
  auto map = AnuMap::uniform(ids);
  REQUIRE(map.ok());
  return *map;
}

std::vector<MdsId> mds_ids(std::initializer_list<uint32_t> list) {
  std::vector<MdsId> out;
  for (uint32_t v : list) out.push_back(MdsId(v));
  return out;
}

}  // namespace

TEST_CASE("members count as alive during the start-up grace, then only while heard from") {
  Membership m(mds_ids({1, 2, 3}), MdsId(2), t0, options());
  CHECK(m.alive(MdsId(1), at(2999)));
  CHECK(m.alive(MdsId(3), at(2999)));
  CHECK_FALSE(m.alive(MdsId(1), at(3001)));
  m.heard(MdsId(1), at(4000), {});
  CHECK(m.alive(MdsId(1), at(6999)));
  CHECK_FALSE(m.alive(MdsId(1), at(7001)));
  CHECK(m.alive(MdsId(2), at(100000)));  // itself, always
  CHECK_FALSE(m.alive(MdsId(9), at(0)));  // not configured
}

TEST_CASE("the delegate is the live member of the map with the lowest id") {
  Membership m(mds_ids({1, 2, 3}), MdsId(3), t0, options());
  const AnuMap map = uniform(mds_ids({1, 2, 3}));
  CHECK(m.delegate(map, at(0)) == MdsId(1));
  m.heard(MdsId(2), at(3500), {});
  CHECK(m.delegate(map, at(4000)) == MdsId(2));  // 1 silent past the grace
  CHECK_FALSE(m.is_delegate(map, at(4000)));
  CHECK(m.delegate(map, at(9000)) == MdsId(3));  // 2 silent too
  CHECK(m.is_delegate(map, at(9000)));
}

TEST_CASE("a member rejoining outside the map is not the delegate while a member of the map is alive") {
  Membership m(mds_ids({1, 2, 3}), MdsId(1), t0, options());
  const AnuMap without_1 = uniform(mds_ids({2, 3}));
  m.heard(MdsId(2), at(100), {});
  m.heard(MdsId(3), at(100), {});
  CHECK(m.delegate(without_1, at(200)) == MdsId(2));
  CHECK_FALSE(m.is_delegate(without_1, at(200)));
}

TEST_CASE("without a quorum of the map the delegate changes nothing") {
  // Member 1 resumed from a pause (or cut off): it has heard nobody for
  // longer than dead_after, so by its view it is the only live member.
  Membership m(mds_ids({1, 2, 3}), MdsId(1), t0, options());
  const AnuMap map = uniform(mds_ids({1, 2, 3}));
  m.heard(MdsId(2), at(1000), {});
  m.heard(MdsId(3), at(1000), {});
  CHECK(m.is_delegate(map, at(20000)));
  CHECK_FALSE(m.quorum(map, at(20000)));
  CHECK_FALSE(m.next_map(map, at(20000)).has_value());
  // Hearing one of the two again is a majority: the silent one is removed.
  m.heard(MdsId(2), at(20100), {});
  CHECK(m.quorum(map, at(20200)));
  auto next = m.next_map(map, at(20200));
  REQUIRE(next.has_value());
  CHECK(next->why == MapChange::removed);
  CHECK(next->member == MdsId(3));
}

TEST_CASE("of two halves of an even map only the one holding the lowest id has a quorum") {
  const AnuMap map = uniform(mds_ids({1, 2}));
  Membership low(mds_ids({1, 2}), MdsId(1), t0, options());
  Membership high(mds_ids({1, 2}), MdsId(2), t0, options());
  CHECK(low.quorum(map, at(10000)));
  CHECK_FALSE(high.quorum(map, at(10000)));
}

TEST_CASE("a member holds a lease only while the delegate answered a heartbeat sent within the lease") {
  MembershipOptions o = options();
  o.lease = milliseconds(2000);
  Membership m(mds_ids({1, 2, 3}), MdsId(2), t0, o);
  const AnuMap map = uniform(mds_ids({1, 2, 3}));
  CHECK_FALSE(m.lease_valid(map, at(100)));  // nothing answered yet
  m.heard(MdsId(1), at(1000), {});
  m.answered(MdsId(1), at(990));
  CHECK(m.lease_valid(map, at(1000)));
  CHECK(m.lease_valid(map, at(2989)));
  CHECK_FALSE(m.lease_valid(map, at(2990)));  // counted from the send time, not the answer
  // An answer from a member that is not the delegate does not renew it.
  m.heard(MdsId(3), at(2500), {});
  m.answered(MdsId(3), at(2500));
  CHECK_FALSE(m.lease_valid(map, at(3000)));
  // A pause: the answer that was waiting when the process resumed was sent
  // before the pause, so it gives no lease.
  m.answered(MdsId(1), at(3000));
  m.heard(MdsId(1), at(15000), {});
  CHECK_FALSE(m.lease_valid(map, at(15000)));
}

TEST_CASE("the delegate holds its lease while a quorum of the map answers it") {
  MembershipOptions o = options();
  o.lease = milliseconds(2000);
  Membership m(mds_ids({1, 2, 3}), MdsId(1), t0, o);
  const AnuMap map = uniform(mds_ids({1, 2, 3}));
  m.heard(MdsId(2), at(1000), {});
  m.heard(MdsId(3), at(1000), {});
  CHECK_FALSE(m.lease_valid(map, at(1000)));
  m.answered(MdsId(3), at(1000));
  CHECK(m.lease_valid(map, at(1500)));  // itself and 3: two of three
  CHECK_FALSE(m.lease_valid(map, at(3001)));
  // Cut off from both: it is still the delegate by its own view, but holds no lease.
  CHECK(m.is_delegate(map, at(9000)));
  CHECK_FALSE(m.lease_valid(map, at(9000)));
}

TEST_CASE("the lease is shorter than dead_after, so a member stops serving before it can be declared failed") {
  // The delegate (1) last heard member 2 when 2's heartbeat reached it;
  // 2's lease runs from when it sent that heartbeat, which is earlier.
  MembershipOptions o = options();
  o.lease = milliseconds(2000);
  Membership delegate(mds_ids({1, 2, 3}), MdsId(1), t0, o);
  Membership member(mds_ids({1, 2, 3}), MdsId(2), t0, o);
  const AnuMap map = uniform(mds_ids({1, 2, 3}));
  member.heard(MdsId(1), at(5005), {});
  member.answered(MdsId(1), at(5000));
  delegate.heard(MdsId(2), at(5003), {});
  delegate.heard(MdsId(3), at(5003), {});
  for (int t = 5000; t < 12000; t += 10) {
    if (!delegate.alive(MdsId(2), at(t))) CHECK_FALSE(member.lease_valid(map, at(t)));
  }
}

TEST_CASE("a member is ready once it heard from every other member or waited out the grace") {
  Membership m(mds_ids({1, 2, 3}), MdsId(1), t0, options());
  CHECK_FALSE(m.ready(at(10)));
  m.heard(MdsId(2), at(20), {});
  CHECK_FALSE(m.ready(at(30)));
  m.heard(MdsId(3), at(40), {});
  CHECK(m.ready(at(50)));
  Membership alone(mds_ids({1, 2}), MdsId(1), t0, options());
  CHECK(alone.ready(at(3001)));
}

TEST_CASE("the delegate removes a silent member from the map, then re-adds it once it is steady again") {
  Membership m(mds_ids({1, 2, 3}), MdsId(1), t0, options());
  AnuMap map = uniform(mds_ids({1, 2, 3}));
  for (int t = 0; t <= 3000; t += 1000) m.heard(MdsId(2), at(t), {});
  CHECK_FALSE(m.next_map(map, at(2000)).has_value());  // 3 is in its grace
  m.heard(MdsId(2), at(4000), {});
  auto next = m.next_map(map, at(4000));
  REQUIRE(next.has_value());
  CHECK(next->why == MapChange::removed);
  CHECK(next->member == MdsId(3));
  CHECK(next->map.servers() == mds_ids({1, 2}));
  CHECK(next->map.version() == map.version() + 1);
  map = next->map;
  // 3 comes back: not added at its first heartbeat, only after dead_after of steady ones.
  m.heard(MdsId(2), at(5000), {});
  m.heard(MdsId(3), at(5000), {});
  CHECK_FALSE(m.next_map(map, at(5000)).has_value());
  for (int t = 6000; t <= 8000; t += 1000) {
    m.heard(MdsId(2), at(t), {});
    m.heard(MdsId(3), at(t), {});
  }
  next = m.next_map(map, at(8100));
  REQUIRE(next.has_value());
  CHECK(next->why == MapChange::added);
  CHECK(next->member == MdsId(3));
  CHECK(next->map.contains(MdsId(3)));
}

TEST_CASE("the delegate tunes once per interval, with fresh reports, and shrinks the slow member") {
  Membership m(mds_ids({1, 2}), MdsId(1), t0, options());
  AnuMap map = uniform(mds_ids({1, 2}));
  auto beat = [&](int t, uint64_t seq, double ms1, double ms2) {
    m.own_report({seq, ms1, 1000});
    m.heard(MdsId(2), at(t), {seq, ms2, 1000});
  };
  beat(9000, 1, 1.0, 9.0);
  CHECK_FALSE(m.next_map(map, at(9000)).has_value());  // not an interval since start yet
  beat(10000, 1, 1.0, 9.0);
  auto next = m.next_map(map, at(10000));
  REQUIRE(next.has_value());
  CHECK(next->why == MapChange::tuned);
  REQUIRE(next->tuning.has_value());
  CHECK(next->map.share(MdsId(2)) < map.share(MdsId(2)));
  CHECK(m.take_tuning().has_value());
  map = next->map;
  // The same reports again, or too early: nothing.
  beat(15000, 1, 1.0, 9.0);
  CHECK_FALSE(m.next_map(map, at(15000)).has_value());
  beat(20000, 1, 1.0, 9.0);
  CHECK_FALSE(m.next_map(map, at(20000)).has_value());
  // Fresh reports, still diverging: tuned again.
  beat(30000, 2, 1.0, 9.5);
  next = m.next_map(map, at(30000));
  REQUIRE(next.has_value());
  CHECK(next->map.share(MdsId(2)) < map.share(MdsId(2)));
}

TEST_CASE("the overload guard predicts a member that served nothing at the service time it last measured") {
  // Member 2 takes 100 ms a request. Once it serves nothing, member 1's
  // queue makes the tuner grow it; each of member 1's file sets would
  // then bring it as much as it can serve (10 requests a second).
  MembershipOptions o = options();
  o.tuner.average = placement::Average::mean;
  o.tuner.backlog = false;
  o.tuner.busy = false;
  for (bool guard : {true, false}) {
    CAPTURE(guard);
    o.tuner.overload_guard = guard;
    Membership m(mds_ids({1, 2}), MdsId(1), t0, o);
    const AnuMap map = uniform(mds_ids({1, 2}));
    IntervalReport one{.seq = 1, .latency_ms = 10, .requests = 100, .service_ms = 1, .interval_ms = 10000};
    IntervalReport two{.seq = 1, .latency_ms = 10, .requests = 1, .service_ms = 100, .interval_ms = 10000};
    m.own_report(one);
    m.heard(MdsId(2), at(10000), two);
    CHECK_FALSE(m.next_map(map, at(10000)).has_value());  // even: nothing to do
    one = {.seq = 2, .latency_ms = 400, .requests = 3200, .service_ms = 1, .interval_ms = 10000};
    for (uint16_t set = 1; set <= 64; ++set)
      if (map.locate(FileSetId(set)) == MdsId(1)) one.sets.push_back({FileSetId(set), 100});
    two = {.seq = 2, .interval_ms = 10000};  // served nothing: no service time of its own
    m.own_report(one);
    m.heard(MdsId(2), at(20000), two);
    auto next = m.next_map(map, at(20000));
    auto tuning = m.take_tuning();
    REQUIRE(tuning.has_value());
    CHECK(tuning->servers[0].decision == placement::Decision::scaled);
    if (guard) {
      CHECK(tuning->taken < 1);
      const AnuMap& kept = next ? next->map : map;
      for (uint16_t set = 1; set <= 64; ++set) CHECK(kept.locate(FileSetId(set)) == map.locate(FileSetId(set)));
    } else {
      REQUIRE(next.has_value());
      CHECK(next->map.share(MdsId(2)) > map.share(MdsId(2)));
    }
  }
}

TEST_CASE("the delegate raises an idle member below the floor by the service time it last measured") {
  // Member 3 holds a sliver and served two requests in the first interval,
  // then none. Fast when it last served (0.025 ms, as the others), it is
  // raised to the floor; slow (0.1 ms: above the band even at the floor's
  // share), it is left idle for as long as it stays idle.
  MembershipOptions o = options();
  o.tuner.busy = false;
  const AnuMap map = *uniform(mds_ids({1, 2, 3}))
                          .with_shares(std::vector<placement::ServerShare>{
                              {MdsId(1), 0.49}, {MdsId(2), 0.49}, {MdsId(3), 0.02}});
  for (double service : {0.025, 0.1}) {
    CAPTURE(service);
    Membership m(mds_ids({1, 2, 3}), MdsId(1), t0, o);
    auto turn = [&](uint64_t seq, uint64_t served_by_3) {
      const IntervalReport busy{.seq = seq, .latency_ms = 0.03, .requests = 5000, .service_ms = 0.025,
                                .interval_ms = 10000};
      IntervalReport three{.seq = seq, .interval_ms = 10000};
      if (served_by_3)
        three = {.seq = seq, .latency_ms = 0.03, .requests = served_by_3, .service_ms = service,
                 .interval_ms = 10000};
      m.own_report(busy);
      m.heard(MdsId(2), at(static_cast<int>(seq) * 10000), busy);
      m.heard(MdsId(3), at(static_cast<int>(seq) * 10000), three);
      return m.next_map(map, at(static_cast<int>(seq) * 10000));
    };
    CHECK_FALSE(turn(1, 2).has_value());  // it served two requests, at the average
    if (service < 0.05) {
      auto raised = turn(2, 0);
      REQUIRE(raised.has_value());
      CHECK(raised->map.share(MdsId(3)) == doctest::Approx(0.25 / 3));
      auto tuning = m.take_tuning();
      REQUIRE(tuning.has_value());
      CHECK(tuning->servers[2].decision == placement::Decision::raised);
    } else {
      for (uint64_t seq = 2; seq <= 10; ++seq) CHECK_FALSE(turn(seq, 0).has_value());
    }
  }
}

TEST_CASE("the delegate tunes only once every member's report of the interval is in, or dead_after later") {
  // The delegate's own interval closes at its heartbeat; the others'
  // reports of the same interval come with the answers to it, after its
  // turn. Tuning at once would weigh its new latency against their old.
  Membership m(mds_ids({1, 2, 3}), MdsId(1), t0, options());
  AnuMap map = uniform(mds_ids({1, 2, 3}));
  m.heard(MdsId(2), at(9000), {});
  m.heard(MdsId(3), at(9000), {});
  m.own_report({1, 1.0, 1000});
  CHECK_FALSE(m.next_map(map, at(10000)).has_value());  // 2 and 3 have not reported yet
  m.heard(MdsId(2), at(10000), {1, 9.0, 1000});
  CHECK_FALSE(m.next_map(map, at(11000)).has_value());  // 3 still missing
  m.heard(MdsId(3), at(11000), {1, 1.0, 1000});
  auto next = m.next_map(map, at(12000));
  REQUIRE(next.has_value());
  CHECK(next->why == MapChange::tuned);
  CHECK(next->map.share(MdsId(2)) < map.share(MdsId(2)));
  map = next->map;

  // Next interval: 3 stops reporting (but stays alive); the delegate waits
  // dead_after (3 s) past the interval, then tunes without it.
  m.own_report({2, 1.0, 1000});
  m.heard(MdsId(2), at(22000), {2, 9.0, 1000});
  m.heard(MdsId(3), at(22000), {1, 1.0, 1000});
  CHECK_FALSE(m.next_map(map, at(22000)).has_value());
  m.heard(MdsId(2), at(24500), {2, 9.0, 1000});
  m.heard(MdsId(3), at(24500), {1, 1.0, 1000});
  CHECK_FALSE(m.next_map(map, at(24500)).has_value());
  m.heard(MdsId(3), at(25000), {1, 1.0, 1000});
  next = m.next_map(map, at(25000));
  REQUIRE(next.has_value());
  CHECK(next->map.share(MdsId(2)) < map.share(MdsId(2)));
}

TEST_CASE("divergent tuning leaves a member that is converging, using the previous interval") {
  Membership m(mds_ids({1, 2, 3}), MdsId(1), t0, options());
  AnuMap map = uniform(mds_ids({1, 2, 3}));
  auto beat = [&](int t, uint64_t seq, double ms2) {
    m.own_report({seq, 1.0, 1000});
    m.heard(MdsId(2), at(t), {seq, ms2, 1000});
    m.heard(MdsId(3), at(t), {seq, 1.0, 1000});
  };
  beat(10000, 1, 8.0);
  auto first = m.next_map(map, at(10000));
  REQUIRE(first.has_value());  // no previous interval: divergence is not checked
  beat(20000, 2, 6.0);         // falling toward the average: converging
  auto second = m.next_map(first->map, at(20000));
  CHECK_FALSE(second.has_value());
  auto tuning = m.take_tuning();
  REQUIRE(tuning.has_value());
  bool found = false;
  for (const auto& s : tuning->servers)
    if (s.server == MdsId(2)) {
      CHECK(s.decision == placement::Decision::converging);
      found = true;
    }
  CHECK(found);
}

TEST_CASE("a member's interval report carries its backlog: requests outstanding at its end and their mean age") {
  IntervalMeter meter(at(0), milliseconds(1000));
  meter.arrived(at(100));
  meter.record(milliseconds(50));
  meter.finished(at(100), at(150));  // answered
  meter.arrived(at(400));
  meter.arrived(at(800));   // both still queued at the end
  auto report = meter.close(at(1000));
  REQUIRE(report.has_value());
  CHECK(report->requests == 1);
  CHECK(report->latency_ms == doctest::Approx(50));
  CHECK(report->backlog == 2);
  CHECK(report->backlog_age_ms == doctest::Approx((600.0 + 200.0) / 2));
  // They finish in the next interval: it ends with no backlog.
  meter.finished(at(400), at(1100));
  meter.finished(at(800), at(1300));
  report = meter.close(at(2000));
  REQUIRE(report.has_value());
  CHECK(report->backlog == 0);
  CHECK(report->backlog_age_ms == 0);
}

TEST_CASE("the delegate hands each member's backlog to the tuner: a saturated member that is L still shrinks") {
  Membership m(mds_ids({1, 2, 3}), MdsId(1), t0, options());
  AnuMap map = uniform(mds_ids({1, 2, 3}));
  // Member 3 completes most requests, so the request-weighted L is about
  // its own latency; only its growing queue tells it is saturated.
  auto beat = [&](int t, uint64_t seq, uint64_t backlog3) {
    m.own_report({seq, 10.0, 10});
    m.heard(MdsId(2), at(t), {seq, 10.0, 10});
    m.heard(MdsId(3), at(t), {seq, 12.0, 2000, backlog3, 50.0});
  };
  beat(10000, 1, 100);
  auto first = m.next_map(map, at(10000));
  (void)m.take_tuning();
  if (first) map = first->map;
  beat(20000, 2, 600);
  auto second = m.next_map(map, at(20000));
  REQUIRE(second.has_value());
  REQUIRE(second->tuning.has_value());
  CHECK(second->tuning->servers[2].decision == placement::Decision::backlogged);
  // 2500 arrived, 2000 served: keeps 4/5 of its share.
  CHECK(second->tuning->servers[2].factor == doctest::Approx(0.8));
  CHECK(second->map.share(MdsId(3)) < map.share(MdsId(3)));
}

TEST_CASE("a member's interval report counts the requests that arrived per file set, and the interval's length") {
  IntervalMeter meter(at(0), milliseconds(1000));
  meter.arrived(at(100), FileSetId(7));
  meter.arrived(at(200), FileSetId(3));
  meter.arrived(at(300), FileSetId(7));
  meter.arrived(at(400));  // a request the caller names no set for
  meter.record(milliseconds(10));
  meter.finished(at(100), at(110));  // answered or not, an arrival counts
  auto report = meter.close(at(1200));
  REQUIRE(report.has_value());
  CHECK(report->sets == std::vector<placement::SetRequests>{{FileSetId(3), 1}, {FileSetId(7), 2}});
  CHECK(report->interval_ms == doctest::Approx(1200));
  // The next interval counts afresh.
  meter.arrived(at(1300), FileSetId(3));
  report = meter.close(at(2200));
  REQUIRE(report.has_value());
  CHECK(report->sets == std::vector<placement::SetRequests>{{FileSetId(3), 1}});
  CHECK(report->interval_ms == doctest::Approx(1000));
}

TEST_CASE("a member's interval report carries how busy it was and its busy time per request") {
  IntervalMeter meter(at(0), milliseconds(1000));
  meter.arrived(at(100));
  meter.record(milliseconds(200));
  meter.finished(at(100), at(300));  // busy 100..300
  meter.arrived(at(500));
  meter.arrived(at(600));
  meter.record(milliseconds(200));
  meter.finished(at(500), at(700));
  meter.record(milliseconds(300));
  meter.finished(at(600), at(900));  // busy 500..900
  auto report = meter.close(at(1000));
  REQUIRE(report.has_value());
  CHECK(report->busy == doctest::Approx(0.6));
  CHECK(report->service_ms == doctest::Approx(200));
  // A request outstanding across the close is busy time in both intervals.
  meter.arrived(at(1500));
  report = meter.close(at(2000));
  REQUIRE(report.has_value());
  CHECK(report->busy == doctest::Approx(0.5));
  CHECK(report->service_ms == 0);  // nothing completed
  meter.record(milliseconds(800));
  meter.finished(at(1500), at(2300));
  report = meter.close(at(3000));
  REQUIRE(report.has_value());
  CHECK(report->busy == doctest::Approx(0.3));
  CHECK(report->service_ms == doctest::Approx(300));
}

TEST_CASE("an emulated server's busy fraction is its service spans' time, not the time with a request outstanding") {
  IntervalMeter meter(at(0), milliseconds(1000));
  // Three requests arrive together; the emulated server serves them one
  // after another, 100 ms each (0..300); each then takes 400 ms more of
  // the daemon's own work, overlapping the next one's service, so one is
  // outstanding until 700.
  for (int i = 0; i < 3; ++i) meter.arrived(at(0));
  meter.serving(at(0), at(100));
  meter.serving(at(100), at(200));
  meter.serving(at(200), at(300));
  for (int i = 0; i < 3; ++i) {
    meter.record(milliseconds(500 + 100 * i));
    meter.finished(at(0), at(500 + 100 * i));
  }
  // A request at 800 is served until 1200: 200 ms in this interval, the
  // rest in the next.
  meter.arrived(at(800));
  meter.serving(at(800), at(1200));
  auto report = meter.close(at(1000));
  REQUIRE(report.has_value());
  CHECK(report->busy == doctest::Approx(0.5));  // 300 + 200 ms, not the 700 + 200 outstanding
  CHECK(report->service_ms == doctest::Approx(500.0 / 3));
  // One queued behind it runs 1200..1300; then idle.
  meter.arrived(at(1100));
  meter.serving(at(1200), at(1300));
  meter.record(milliseconds(400));
  meter.finished(at(800), at(1200));
  meter.record(milliseconds(200));
  meter.finished(at(1100), at(1300));
  report = meter.close(at(2000));
  REQUIRE(report.has_value());
  CHECK(report->busy == doctest::Approx(0.3));  // 1000..1300
  CHECK(report->service_ms == doctest::Approx(150));
  report = meter.close(at(3000));
  REQUIRE(report.has_value());
  CHECK(report->busy == 0);
}

TEST_CASE("an emulated server's service time counts the requests it refused after serving them") {
  // Its share was just cut: of ten requests served 10 ms each (0..100),
  // eight were for file sets now on another member, refused after their
  // service, and only two recorded. Its service time is 10 ms, not the
  // 50 ms per recorded request that kept the guard from ever growing it.
  IntervalMeter meter(at(0), milliseconds(1000));
  for (int i = 0; i < 10; ++i) {
    meter.arrived(at(0));
    meter.serving(at(10 * i), at(10 * i + 10));
  }
  for (int i = 0; i < 10; ++i) {
    if (i < 2) meter.record(milliseconds(10 * i + 10));
    meter.finished(at(0), at(10 * i + 10));
  }
  auto report = meter.close(at(1000));
  REQUIRE(report.has_value());
  CHECK(report->requests == 2);
  CHECK(report->busy == doctest::Approx(0.1));
  CHECK(report->service_ms == doctest::Approx(10));
  // A span queued across the close counts where it completes.
  meter.arrived(at(1990));
  meter.serving(at(1990), at(2010));
  report = meter.close(at(2000));
  REQUIRE(report.has_value());
  CHECK(report->service_ms == 0);  // none completed: unknown
  meter.record(milliseconds(20));
  meter.finished(at(1990), at(2010));
  report = meter.close(at(3000));
  REQUIRE(report.has_value());
  CHECK(report->service_ms == doctest::Approx(10));  // its 10 ms in this interval, one span
}

TEST_CASE("a real member's busy time is its event loop's work, up to the time with a request outstanding") {
  IntervalMeter meter(at(0), milliseconds(1000));
  // Eight clients keep a request outstanding all the interval; the loop
  // worked 150 ms for the 50 it answered.
  std::deque<int> waiting(8, 0);  // arrival times, ms
  for (int i = 0; i < 8; ++i) meter.arrived(at(0));
  for (int i = 0; i < 50; ++i) {
    const int now = 20 * i + 20;
    meter.record(milliseconds(now - waiting.front()));
    meter.finished(at(waiting.front()), at(now));
    waiting.pop_front();
    meter.arrived(at(now));
    waiting.push_back(now);
  }
  meter.worked(milliseconds(100));  // reported at each heartbeat, summed
  meter.worked(milliseconds(50));
  auto report = meter.close(at(1000));
  REQUIRE(report.has_value());
  CHECK(report->busy == doctest::Approx(0.15));  // not 1.0
  CHECK(report->service_ms == doctest::Approx(3));  // not 20, one over the throughput
  // The next interval counts only the work reported after the close; and
  // no more than the time a request was outstanding (here until 1100):
  // the rest was the thread's own (heartbeats), not requests'.
  for (int t : waiting) {
    meter.record(milliseconds(1100 - t));
    meter.finished(at(t), at(1100));
  }
  meter.worked(milliseconds(400));
  report = meter.close(at(2000));
  REQUIRE(report.has_value());
  CHECK(report->busy == doctest::Approx(0.1));
  meter.worked(milliseconds(50));
  meter.arrived(at(2000));
  meter.finished(at(2000), at(2100));
  // An emulated server's spans take precedence.
  meter.serving(at(2000), at(2020));
  report = meter.close(at(3000));
  REQUIRE(report.has_value());
  CHECK(report->busy == doctest::Approx(0.02));
}

TEST_CASE("the delegate pools a member's load since the map last changed: one busy interval moves nothing") {
  // Two members that serve a request in 10 ms, half busy for six
  // intervals; then member 2 is 90% busy for one. Alone, that interval
  // is far outside the band (a queue's latency 100 ms against 33); pooled
  // with the five before it under the same map, member 2 was offered 0.61
  // and is inside it. After a map change the same interval counts alone.
  auto run = [&](bool change_map_before_the_burst) {
    Membership m(mds_ids({1, 2}), MdsId(1), t0, options());
    AnuMap map = uniform(mds_ids({1, 2}));
    auto report = [](uint64_t seq, double busy) {
      const auto requests = static_cast<uint64_t>(busy * 1000);
      return IntervalReport{seq, 20.0, requests, 0, 0, busy, 10.0};
    };
    std::optional<NextMap> last;
    for (uint64_t i = 1; i <= 7; ++i) {
      const int t = static_cast<int>(i) * 10000;
      m.own_report(report(i, 0.5));
      m.heard(MdsId(2), at(t), report(i, i == 7 ? 0.9 : 0.5));
      if (i == 7 && change_map_before_the_burst) map = *map.with_shares(map.shares());
      last = m.next_map(map, at(t));
      (void)m.take_tuning();
      if (i < 7) REQUIRE(!last);  // balanced: nothing to do
    }
    return last;
  };
  CHECK(!run(false));
  const auto moved = run(true);
  REQUIRE(moved.has_value());
  CHECK(moved->map.share(MdsId(2)) < 0.5);
}

TEST_CASE("hash and round-robin placement never tune, but still follow membership") {
  for (auto policy : {placement::Policy::hash, placement::Policy::round_robin}) {
    Membership m(mds_ids({1, 2}), MdsId(1), t0, options(policy));
    AnuMap map = uniform(mds_ids({1, 2}));
    m.own_report({1, 1.0, 1000});
    m.heard(MdsId(2), at(20000), {1, 50.0, 1000});
    CHECK_FALSE(m.next_map(map, at(20000)).has_value());
    auto removed = m.next_map(map, at(30000));
    REQUIRE(removed.has_value());
    CHECK(removed->why == MapChange::removed);
  }
}

TEST_CASE("the last member never leaves the map") {
  Membership m(mds_ids({1}), MdsId(1), t0, options());
  AnuMap map = uniform(mds_ids({1}));
  CHECK_FALSE(m.next_map(map, at(100000)).has_value());
}

}  // namespace pvfs::mds
