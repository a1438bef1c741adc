// Unit tests of the hand-over (policy/placement/anu_map.h handed_over(),
// anu_tuner.h TunerOptions::hand_over; ours, issue 21): a server whose
// queue stands while the map would stay as it is gives one whole partition,
// and with it exactly the file sets that hash into it, to the server the
// reports predict can carry them. Pure.
#include "policy/placement/anu_map.h"
#include "policy/placement/anu_tuner.h"

#include <doctest/doctest.h>

#include <map>
#include <set>
#include <vector>

namespace pvfs::placement {
namespace hand_over_cases {

constexpr uint16_t kSets = 90;

AnuMap uniform3() {
  auto map = AnuMap::uniform(std::vector<MdsId>{MdsId(1), MdsId(2), MdsId(3)});
  REQUIRE(map.ok());
  return std::move(*map);
}

TuneResult tuned(Result<TuneResult> r) {
  REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  return std::move(*r);
}

// The stall on three servers: server 1 (3 ms a request) holds one hot file
// set that keeps it busy throughout with 128 requests queued in both
// intervals (its queue stands); server 2 (1 ms) and server 3 (20 ms) serve
// a request of each of their sets. Latencies are all within the band
// around their mean, so the tuner scales nobody and the map would stay.
struct Stall {
  AnuMap map = uniform3();
  FileSetId hot{0};
  std::vector<LatencyReport> now, before;

  explicit Stall(uint64_t previous_backlog = 128) {
    std::map<MdsId, std::vector<SetRequests>> sets;
    for (uint16_t s = 1; s <= kSets; ++s) {
      const MdsId m = map.locate(FileSetId(s));
      if (m == MdsId(1) && hot.value == 0) hot = FileSetId(s);
      sets[m].push_back({FileSetId(s), 1});
    }
    REQUIRE(hot.value != 0);
    for (SetRequests& s : sets[MdsId(1)])
      if (s.set == hot) s.requests = 300;  // 0.9 of server 1 at 3 ms
    auto report = [&](MdsId m, double latency, double service, double busy, uint64_t backlog) {
      LatencyReport r;
      r.server = m;
      r.latency_ms = latency;
      r.service_ms = service;
      r.busy = busy;
      r.backlog = backlog;
      r.interval_ms = 1000;
      r.sets = sets[m];
      for (const SetRequests& s : r.sets) r.requests += s.requests;
      return r;
    };
    now = {report(MdsId(1), 100, 3, 1.0, 128), report(MdsId(2), 95, 1, 0.4, 0), report(MdsId(3), 110, 20, 0.5, 0)};
    before = now;
    before[0].backlog = previous_backlog;
  }
};

// The paper's tuner on latency alone (so only the band decides who is
// scaled), with the guard and the hand-over as asked.
TunerOptions options(bool hand_over) {
  return {.average = Average::mean, .backlog = false, .busy = false, .hand_over = hand_over};
}

std::set<uint16_t> moved(const AnuMap& from, const AnuMap& to) {
  std::set<uint16_t> out;
  for (uint16_t s = 1; s <= kSets; ++s)
    if (from.locate(FileSetId(s)) != to.locate(FileSetId(s))) out.insert(s);
  return out;
}

}  // namespace hand_over_cases

using namespace hand_over_cases;

TEST_CASE("a hand-over moves exactly the file sets of one whole partition, from its holder to the taker") {
  const AnuMap map = uniform3();
  REQUIRE(map.partition_count() < 128);
  // Partition 0 of a 128-grid lies in the first member's whole partition.
  auto given = map.handed_over(128, 0, MdsId(3));
  REQUIRE(given.ok());
  CHECK(given->version() == map.version() + 1);
  CHECK(given->partition_count() == 128);
  CHECK(given->validate().ok());
  CHECK(given->share(MdsId(1)) == doctest::Approx(map.share(MdsId(1)) - 1.0 / 64));
  CHECK(given->share(MdsId(3)) == doctest::Approx(map.share(MdsId(3)) + 1.0 / 64));
  CHECK(given->share(MdsId(2)) == map.share(MdsId(2)));
  // Every key that hashes into that partition first goes to the taker, and
  // no other key moves.
  size_t into = 0;
  for (uint64_t key = 1; key <= 20000; ++key) {
    const MdsId was = map.locate_key(key), is = given->locate_key(key);
    const bool in_partition = map.probe(key).round < map.rounds() &&
                              (anu_hash(key, map.probe(key).round) >> (64 - 7)) == 0;
    if (in_partition) {
      ++into;
      CHECK(was == MdsId(1));
      CHECK(is == MdsId(3));
    } else {
      CHECK(was == is);
    }
  }
  CHECK(into > 0);

  // What cannot be handed over.
  CHECK(map.handed_over(128, 0, MdsId(1)).status().code() == Errc::invalid_argument);  // its own holder
  CHECK(map.handed_over(128, 0, MdsId(9)).status().code() == Errc::invalid_argument);  // not a member
  CHECK(map.handed_over(128, 128, MdsId(3)).status().code() == Errc::invalid_argument);
  CHECK(map.handed_over(96, 0, MdsId(3)).status().code() == Errc::invalid_argument);  // not a power of two
  CHECK(map.handed_over(map.partition_count() / 2, 0, MdsId(3)).status().code() == Errc::invalid_argument);
  CHECK(map.handed_over(128, 127, MdsId(3)).status().code() == Errc::invalid_argument);  // free
  for (uint32_t i = 0; i < map.partition_count(); ++i)
    if (map.partitions()[i].server && map.partitions()[i].length < map.partition_length())
      CHECK(map.handed_over(map.partition_count(), i, MdsId(2)).status().code() == Errc::invalid_argument);
}

TEST_CASE("a server whose queue stands hands its hot file set's partition to the server that can carry it") {
  const Stall stall;
  const auto before = predicted_load(stall.map, stall.now);
  REQUIRE(before.at(MdsId(1)) > 0.9);  // the busiest

  // Without the hand-over nothing is scaled and the map stays: the stall.
  const TuneResult kept = tuned(tune(stall.map, stall.now, stall.before, options(false)));
  for (const ServerTuning& t : kept.servers) REQUIRE(t.decision == Decision::within_band);
  CHECK_FALSE(kept.map);

  const TuneResult r = tuned(tune(stall.map, stall.now, stall.before, options(true)));
  REQUIRE(r.map);
  REQUIRE(r.hand_over);
  CHECK(r.hand_over->from == MdsId(1));
  CHECK(r.hand_over->to == MdsId(2));  // 20 ms at server 3 would be 6x its capacity
  CHECK(r.hand_over->partitions >= 128);
  CHECK(r.map->partition_count() == r.hand_over->partitions);
  CHECK(r.map->version() == stall.map.version() + 1);
  CHECK(r.map->locate(stall.hot) == MdsId(2));
  // Only server 1's sets moved, all to server 2.
  for (uint16_t s : moved(stall.map, *r.map)) {
    CHECK(stall.map.locate(FileSetId(s)) == MdsId(1));
    CHECK(r.map->locate(FileSetId(s)) == MdsId(2));
  }
  const auto after = predicted_load(*r.map, stall.now);
  CHECK(std::max({after.at(MdsId(1)), after.at(MdsId(2)), after.at(MdsId(3))}) < before.at(MdsId(1)));
  CHECK(r.servers[0].new_share < r.servers[0].old_share);
}

TEST_CASE("a queue that grew from nothing hands nothing over, and neither does one no server can relieve") {
  // Server 1's backlog went from 0 to 128: it is not standing (a burst
  // may drain on its own), so the map stays.
  const Stall grew(0);
  const TuneResult r = tuned(tune(grew.map, grew.now, grew.before, options(true)));
  CHECK_FALSE(r.map);
  CHECK_FALSE(r.hand_over);

  // Both other servers as slow as 20 ms a request, and server 1's other
  // sets idle: taking the hot set would make either of them the busiest,
  // and no other partition takes anything off server 1.
  Stall slow;
  for (auto* reports : {&slow.now, &slow.before})
    for (LatencyReport& rep : *reports) {
      if (rep.server != MdsId(1)) rep.service_ms = 20;
      if (rep.server == MdsId(1))
        for (SetRequests& s : rep.sets)
          if (s.set != slow.hot) s.requests = 0;
    }
  const TuneResult none = tuned(tune(slow.map, slow.now, slow.before, options(true)));
  CHECK_FALSE(none.hand_over);
  CHECK_FALSE(none.map);
}

}  // namespace pvfs::placement
