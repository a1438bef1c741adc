// Unit tests of the ANU tuner's overload guard (policy/placement/anu_tuner.h,
// TunerOptions::overload_guard; ours, issue 21): the load each server is
// predicted to carry under a map, from the requests that arrived per file
// set and each server's service time, and the guard that keeps a tuning
// step from handing a slow server more than it can serve. Pure.
#include "policy/placement/anu_map.h"
#include "policy/placement/anu_tuner.h"

#include <doctest/doctest.h>

#include <map>
#include <vector>

namespace pvfs::placement {
namespace {

AnuMap uniform(uint32_t k) {
  std::vector<MdsId> ids;
  for (uint32_t i = 1; i <= k; ++i) ids.push_back(MdsId(i));
  auto map = AnuMap::uniform(ids);
  REQUIRE(map.ok());
  return std::move(*map);
}

TuneResult must(Result<TuneResult> r) {
  REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  return std::move(*r);
}

// The paper's tuner on latency alone (mean average, no backlog rule, no
// busy model), so each case sets exactly what the tuner decides; the guard
// as asked.
TunerOptions on_latency(bool guard) {
  TunerOptions o;
  o.average = Average::mean;
  o.backlog = false;
  o.busy = false;
  o.overload_guard = guard;
  return o;
}

// File sets 1..n, each with `requests` arrivals, reported by the server
// `map` places them on.
struct Workload {
  std::map<MdsId, std::vector<SetRequests>> by_server;
  void spread(const AnuMap& map, uint16_t n, uint64_t requests) {
    for (uint16_t s = 1; s <= n; ++s) by_server[map.locate(FileSetId(s))].push_back({FileSetId(s), requests});
  }
};

// A server's report for one 1000 ms interval.
LatencyReport report(MdsId server, double latency_ms, uint64_t requests, double service_ms,
                     const Workload& w) {
  LatencyReport r;
  r.server = server;
  r.latency_ms = latency_ms;
  r.requests = requests;
  r.service_ms = service_ms;
  r.interval_ms = 1000;
  if (auto it = w.by_server.find(server); it != w.by_server.end()) r.sets = it->second;
  return r;
}

}  // namespace

TEST_CASE("predicted load: each server's file sets at the requests that arrived for them, times its service time") {
  const AnuMap map = uniform(2);
  Workload w;
  w.spread(map, 40, 10);
  std::vector<LatencyReport> reports = {report(MdsId(1), 5, 0, 2, w), report(MdsId(2), 5, 0, 4, w)};
  const auto load = predicted_load(map, reports);
  REQUIRE(load.size() == 2);
  CHECK(load.at(MdsId(1)) == doctest::Approx(w.by_server[MdsId(1)].size() * 10 * 2 / 1000.0));
  CHECK(load.at(MdsId(2)) == doctest::Approx(w.by_server[MdsId(2)].size() * 10 * 4 / 1000.0));

  // Under a map that gives server 2 everything, server 1's sets count at
  // server 2's service time.
  auto all_on_2 = map.with_shares(std::vector<ServerShare>{{MdsId(1), 0}, {MdsId(2), 1}});
  REQUIRE(all_on_2.ok());
  const auto moved = predicted_load(*all_on_2, reports);
  CHECK(moved.at(MdsId(1)) == 0);
  CHECK(moved.at(MdsId(2)) == doctest::Approx(40 * 10 * 4 / 1000.0));

  // A server that measured no service time this interval is predicted at
  // the one the delegate remembers, and not at all without one.
  reports[1].service_ms = 0;
  reports[1].known_service_ms = 8;
  CHECK(predicted_load(map, reports).at(MdsId(2)) == doctest::Approx(w.by_server[MdsId(2)].size() * 10 * 8 / 1000.0));
  reports[1].known_service_ms = 0;
  CHECK_FALSE(predicted_load(map, reports).contains(MdsId(2)));
  // Without set counts nothing is predicted.
  for (LatencyReport& r : reports) r.sets.clear();
  CHECK(predicted_load(map, reports).empty());
}

TEST_CASE("the overload guard keeps a slow server from taking a file set it cannot serve; without it the set moves") {
  // Server 1 serves a request in 1 ms, server 2 in 100 ms. Server 1's
  // queue makes its latency 400 ms against server 2's 100: the tuner
  // shrinks server 1 and server 2 grows. Each of server 1's file sets
  // brings 10 requests a second: 1.0 of server 2's capacity.
  const AnuMap map = uniform(2);
  Workload w;
  w.spread(map, 64, 10);
  const auto on_1 = w.by_server[MdsId(1)].size();
  w.by_server[MdsId(2)].assign(1, {w.by_server[MdsId(2)].front().set, 1});  // one request in all
  const std::vector<LatencyReport> now = {report(MdsId(1), 400, on_1 * 10, 1, w),
                                          report(MdsId(2), 100, 1, 100, w)};
  REQUIRE(predicted_load(map, now).at(MdsId(2)) == doctest::Approx(0.1));

  const TuneResult free = must(tune(map, now, {}, on_latency(false)));
  REQUIRE(free.map);
  CHECK(free.servers[0].decision == Decision::scaled);
  CHECK(free.taken == 1);
  CHECK(predicted_load(*free.map, now).at(MdsId(2)) > 1);  // saturated by what it took

  const TuneResult guarded = must(tune(map, now, {}, on_latency(true)));
  // The cluster is 32% busy: the bound is halfway to saturation.
  CHECK(predicted_load(guarded.map ? *guarded.map : map, now).at(MdsId(2)) == doctest::Approx(0.1));
  CHECK(guarded.taken < 1);
  const AnuMap& kept = guarded.map ? *guarded.map : map;
  for (uint16_t s = 1; s <= 64; ++s) CHECK(kept.locate(FileSetId(s)) == map.locate(FileSetId(s)));
}

TEST_CASE("the overload guard lets a server above capacity shed onto one that then passes the bound") {
  // Server 1 (1 ms a request) is offered 60 requests a second per file
  // set, about 1.9 of its capacity; server 2 (2 ms) is idle. Any move puts
  // server 2 above the bound, but lowers the busiest server's load.
  const AnuMap map = uniform(2);
  Workload w;
  w.spread(map, 64, 60);
  const auto on_1 = w.by_server[MdsId(1)].size();
  w.by_server[MdsId(2)].assign(1, {w.by_server[MdsId(2)].front().set, 1});
  const std::vector<LatencyReport> now = {report(MdsId(1), 4000, on_1 * 60, 1, w),
                                          report(MdsId(2), 2, 1, 2, w)};
  const auto before = predicted_load(map, now);
  REQUIRE(before.at(MdsId(1)) > 1);

  const TuneResult r = must(tune(map, now, {}, on_latency(true)));
  REQUIRE(r.map);
  CHECK(r.taken == 1);
  const auto after = predicted_load(*r.map, now);
  const double cluster = (before.at(MdsId(1)) / 1 + before.at(MdsId(2)) / 2) / (1.0 / 1 + 1.0 / 2);
  CHECK(after.at(MdsId(2)) > (1 + cluster) / 2);  // above the bound
  CHECK(std::max(after.at(MdsId(1)), after.at(MdsId(2))) < before.at(MdsId(1)));
}

TEST_CASE("without set counts the guard predicts nothing and the tuner's step stands") {
  const AnuMap map = uniform(2);
  const Workload none;
  const std::vector<LatencyReport> now = {report(MdsId(1), 400, 320, 1, none), report(MdsId(2), 100, 1, 100, none)};
  const TuneResult guarded = must(tune(map, now, {}, on_latency(true)));
  const TuneResult free = must(tune(map, now, {}, on_latency(false)));
  REQUIRE(guarded.map);
  REQUIRE(free.map);
  CHECK(guarded.taken == 1);
  CHECK(guarded.map->serialize() == free.map->serialize());
}

}  // namespace pvfs::placement
