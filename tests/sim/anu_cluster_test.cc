// Tests of utils/sim/anu_cluster: pvfs-sim's ANU servers decide as the
// daemons do. The daemon path here is one Membership and one IntervalMeter
// per member, called in the order mds/cluster/mds_cluster.cc calls them on
// each heartbeat (close its own interval, the delegate's turn, then the
// heartbeats: the peer hears the sender, the sender hears the answer with
// the peer's newest report), with the delegate's map adopted by all. The
// simulator path is AnuCluster. Both get the same latencies, which depend
// on each member's share of the map, so one different decision changes
// every later one.
#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "policy/membership/membership.h"
#include "utils/sim/anu_cluster.h"

namespace pvfs::sim {
namespace {

using std::chrono::milliseconds;
using Nanos = std::chrono::nanoseconds;

mds::SteadyTime at(Nanos t) { return mds::SteadyTime(std::chrono::duration_cast<mds::SteadyTime::duration>(t)); }

mds::MembershipOptions options(milliseconds heartbeat) {
  mds::MembershipOptions o;
  o.tune_interval = milliseconds(10000);
  o.dead_after = 3 * heartbeat;
  o.lease = 2 * heartbeat;
  return o;
}

// Member i of n is (i + 1) times slower than member 0 for the first
// 100 s, then (n - i) times, and slower the more of the map it holds: its
// requests of one heartbeat take this long.
Nanos latency_of(size_t i, size_t n, double share, Nanos now) {
  const double slowness = now < Nanos(std::chrono::seconds(100)) ? static_cast<double>(i + 1)
                                                                  : static_cast<double>(n - i);
  return Nanos(static_cast<int64_t>(1e6 * slowness * slowness * (0.1 + 10 * share)));
}

// What pvfs-mds does, member by member.
class Daemons {
 public:
  Daemons(const std::vector<MdsId>& ids, mds::MembershipOptions o)
      : ids_(ids), map_(std::move(placement::AnuMap::uniform(ids)).value()) {
    for (MdsId id : ids) {
      members_.emplace(id, mds::Membership(ids, id, at(Nanos(0)), o));
      meters_.emplace(id, mds::IntervalMeter(at(Nanos(0)), o.tune_interval));
    }
  }
  // A request that arrived `latency` before `now` and is answered now, as
  // MdsCluster's Outstanding and record() count it.
  void record(MdsId member, Nanos now, Nanos latency, FileSetId set) {
    mds::IntervalMeter& meter = meters_.at(member);
    meter.arrived(at(now - latency), set);
    meter.record(latency);
    meter.finished(at(now - latency), at(now));
  }
  // Every member's heartbeat at `now`, in id order; the map a delegate issued.
  std::optional<placement::AnuMap> heartbeat(Nanos now) {
    const mds::SteadyTime t = at(now);
    std::optional<placement::AnuMap> issued;
    for (MdsId self : ids_) {
      auto& me = members_.at(self);
      if (auto report = meters_.at(self).close(t)) me.own_report(*report);  // close_interval()
      if (auto next = me.step(map_, t)) {
        next->map.set_issuer(self);
        map_ = next->map;  // adopted and broadcast
        issued = map_;
      }
      for (MdsId peer : ids_) {  // ping(): the peer hears us, we hear its answer
        if (peer == self) continue;
        members_.at(peer).heard(self, t, {});
        me.answered(peer, t);
        me.heard(peer, t, meters_.at(peer).last());
      }
    }
    return issued;
  }
  const placement::AnuMap& map() const { return map_; }

 private:
  std::vector<MdsId> ids_;
  std::map<MdsId, mds::Membership> members_;
  std::map<MdsId, mds::IntervalMeter> meters_;
  placement::AnuMap map_;
};

struct Issued {
  Nanos when;
  std::string map;
};

// Runs both paths for `seconds` of heartbeats `heartbeat` apart; the maps
// each issued, with when.
std::pair<std::vector<Issued>, std::vector<Issued>> run_both(milliseconds heartbeat, int beats) {
  const std::vector<MdsId> ids = {MdsId(1), MdsId(2), MdsId(3), MdsId(4)};
  AnuCluster sim(ids, options(heartbeat));
  Daemons daemons(ids, options(heartbeat));
  std::vector<Issued> from_sim, from_daemons;
  for (int b = 1; b <= beats; ++b) {
    const Nanos now = b * heartbeat;
    for (size_t i = 0; i < ids.size(); ++i) {
      const Nanos latency = latency_of(i, ids.size(), sim.map().share(ids[i]), now);
      const FileSetId set(static_cast<uint16_t>(i + 1));
      sim.arrived(ids[i], now - latency, set);
      sim.record(ids[i], now - latency, latency);
      daemons.record(ids[i], now, latency_of(i, ids.size(), daemons.map().share(ids[i]), now), set);
    }
    if (auto round = sim.heartbeat(now); round.next) from_sim.push_back({now, round.next->map.serialize()});
    if (auto map = daemons.heartbeat(now)) from_daemons.push_back({now, map->serialize()});
  }
  return {from_sim, from_daemons};
}

}  // namespace

TEST_CASE("the simulator's ANU servers issue the same maps at the same times as the daemons' code") {
  for (const milliseconds heartbeat : {milliseconds(1000), milliseconds(3000)}) {
    CAPTURE(heartbeat.count());
    const auto [sim, daemons] = run_both(heartbeat, static_cast<int>(200000 / heartbeat.count()));
    MESSAGE("maps issued: ", sim.size());
    REQUIRE(sim.size() >= 4);  // the slow members tuned down, more than once, and again when they change
    REQUIRE(sim.size() == daemons.size());
    for (size_t i = 0; i < sim.size(); ++i) {
      CAPTURE(i);
      CHECK(sim[i].when == daemons[i].when);
      CHECK(sim[i].map == daemons[i].map);
    }
  }
}

TEST_CASE("the simulator's delegate keeps the daemon's interval rules: none before one interval, then at most one per interval") {
  // With 3 s heartbeats the 10 s intervals close at 12, 24, 36 s...: a
  // tuning only at those heartbeats, never at every one (what a
  // per-heartbeat call of the tuner would do).
  const auto [sim, daemons] = run_both(milliseconds(3000), 60);
  REQUIRE_FALSE(sim.empty());
  CHECK(sim.front().when >= Nanos(milliseconds(10000)));
  for (size_t i = 1; i < sim.size(); ++i) CHECK(sim[i].when - sim[i - 1].when >= Nanos(milliseconds(10000)));
}

}  // namespace pvfs::sim
