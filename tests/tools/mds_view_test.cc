// Unit tests of pvfs-ctl mds without daemons: decoding a ClusterState
// message built here (utils/common/mds_status_wire.h), choosing the view to show,
// combining the members' answers, and the tables and JSON (utils/ctl/mds_view.h).
#include "utils/ctl/mds_view.h"

#include <algorithm>

#include <capnp/message.h>
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "policy/placement/anu_map.h"
#include "utils/common/mds_status_wire.h"

namespace pvfs::ctl::mds_view_test {
namespace {

using placement::AnuMap;
using placement::ServerShare;

DaemonTarget mds_target(uint32_t id) {
  return {fmt::format("mds{}", id), DaemonKind::mds, id, {"127.0.0.1", static_cast<uint16_t>(7000 + id)}};
}

std::string map_text(std::vector<ServerShare> shares, uint64_t version) {
  auto map = AnuMap::from_shares(shares, placement::kDefaultRounds, version);
  REQUIRE(map);
  return map->serialize();
}

MdsMemberView member(uint32_t id, bool alive, std::vector<uint16_t> sets, double latency_ms, uint64_t requests,
                     double slowdown = 1) {
  MdsMemberView m;
  m.id = id;
  m.address = fmt::format("127.0.0.1:{}", 7000 + id);
  m.alive = alive;
  m.file_sets = std::move(sets);
  m.interval = {12, latency_ms, requests};
  m.slowdown = slowdown;
  return m;
}

// Three members: mds0 the delegate, shares 1/2, 1/4, 1/4 at map version 4.
MdsClusterView view_of(uint32_t self, uint64_t version = 4) {
  MdsClusterView v;
  v.self = self;
  v.delegate = 0;
  v.placement = "anu";
  v.map = map_text({{MdsId(0), 2}, {MdsId(1), 1}, {MdsId(2), 1}}, version);
  v.members = {member(0, true, {0, 3, 5}, 2.5, 1200), member(1, true, {1, 4}, 8.25, 400, 5),
               member(2, false, {2}, 0, 0, 3)};
  return v;
}

MdsMove move(uint16_t set, uint32_t from, uint32_t to, int64_t at_unix_ms, std::string outcome = "shipped") {
  return {set, from, to, at_unix_ms, 3u << 20, 420, std::move(outcome)};
}

// 2026-11-26 09:41:05 UTC.
constexpr int64_t kAt = 1795686065000;

}  // namespace

TEST_CASE("a ClusterState message decodes field by field") {
  capnp::MallocMessageBuilder message;
  auto s = message.initRoot<proto::mds::Reply::ClusterState>();
  s.setSelf(2);
  s.setDelegate(1);
  s.setMap("anu1 version=3");
  s.setPlacement("hash");
  CHECK(cluster_view_from_wire(s.asReader()).serving);  // an older daemon never says otherwise
  s.setServing(false);
  auto members = s.initMembers(1);
  members[0].setId(2);
  members[0].setAddress("10.0.0.2:7000");
  members[0].setAlive(true);
  members[0].setShare(0.25);
  auto sets = members[0].initFileSets(2);
  sets.set(0, 7);
  sets.set(1, 9);
  members[0].getLatency().setServer(2);
  members[0].getLatency().setSeq(41);
  members[0].getLatency().setLatencyMs(1.5);
  members[0].getLatency().setRequests(300);
  members[0].setSlowdown(7);
  auto history = s.initHistory(1);
  history[0].setAtUnixMs(kAt);
  history[0].setAverageMs(2.0);
  history[0].setMapVersion(3);
  auto tuned = history[0].initServers(1);
  tuned[0].setServer(2);
  tuned[0].setLatencyMs(4.0);
  tuned[0].setDecision("scaled");
  tuned[0].setOldShare(0.5);
  tuned[0].setNewShare(0.25);
  auto moves = s.initMoves(1);
  moves[0].setSet(9);
  moves[0].setFrom(2);
  moves[0].setTo(1);
  moves[0].setAtUnixMs(kAt + 5);
  moves[0].setBytes(4096);
  moves[0].setDurationMs(12);
  moves[0].setOutcome("taken over");

  const MdsClusterView v = cluster_view_from_wire(s.asReader());
  CHECK(v.self == 2);
  CHECK(v.delegate == 1);
  CHECK(v.map == "anu1 version=3");
  CHECK(v.placement == "hash");
  CHECK_FALSE(v.serving);
  REQUIRE(v.members.size() == 1);
  CHECK(v.members[0].address == "10.0.0.2:7000");
  CHECK(v.members[0].alive);
  CHECK(v.members[0].share == 0.25);
  CHECK(v.members[0].file_sets == std::vector<uint16_t>{7, 9});
  CHECK(v.members[0].interval.seq == 41);
  CHECK(v.members[0].interval.latency_ms == 1.5);
  CHECK(v.members[0].interval.requests == 300);
  CHECK(v.members[0].slowdown == 7);
  REQUIRE(v.history.size() == 1);
  CHECK(v.history[0].at_unix_ms == kAt);
  CHECK(v.history[0].map_version == 3);
  REQUIRE(v.history[0].servers.size() == 1);
  CHECK(v.history[0].servers[0].decision == "scaled");
  CHECK(v.history[0].servers[0].old_share == 0.5);
  CHECK(v.history[0].servers[0].new_share == 0.25);
  REQUIRE(v.moves.size() == 1);
  CHECK(v.moves[0].set == 9);
  CHECK(v.moves[0].from == 2);
  CHECK(v.moves[0].to == 1);
  CHECK(v.moves[0].bytes == 4096);
  CHECK(v.moves[0].duration_ms == 12);
  CHECK(v.moves[0].outcome == "taken over");
}

TEST_CASE("the view shown is the delegate's own, else the newest map, else the lowest id") {
  std::vector<MdsAnswer> answers = {{mds_target(0), Status(Errc::timeout, "no answer")},
                                    {mds_target(1), view_of(1, 4)},
                                    {mds_target(2), view_of(2, 6)}};
  CHECK(pick_view(answers) == 2u);  // the delegate did not answer: the newer map
  answers[2].view = view_of(2, 4);
  CHECK(pick_view(answers) == 1u);  // same map: the lower id
  answers[0].view = view_of(0, 3);
  CHECK(pick_view(answers) == 0u);  // the delegate, even with an older map
  for (auto& a : answers) a.view = Status(Errc::unavailable, "down");
  CHECK_FALSE(pick_view(answers).has_value());
}

TEST_CASE("members take their state from who answered and the view's liveness") {
  std::vector<MdsAnswer> answers = {{mds_target(0), view_of(0)},
                                    {mds_target(1), Status(Errc::unavailable, "connection refused")},
                                    {mds_target(2), view_of(2)},
                                    {mds_target(3), view_of(3)}};
  const MdsReport r = build_mds_report(answers);
  REQUIRE(r.view_of == 0u);
  CHECK(r.map_version == 4);
  CHECK(r.partitions == 8);
  REQUIRE(r.rows.size() == 4);
  CHECK(r.rows[0].state == "up");
  CHECK(r.rows[1].state == "down");    // did not answer us
  CHECK(r.rows[2].state == "failed");  // answers, but the view counts it failed
  CHECK(r.rows[3].state == "failed");  // answers, but is not in the view
  CHECK_FALSE(r.rows[3].in_view);
  // A member that answers, alive by the view, but holds no lease: fenced.
  answers[1].view = view_of(1);
  answers[1].view->serving = false;
  CHECK(build_mds_report(answers).rows[1].state == "fenced");
  CHECK(r.rows[3].address == "127.0.0.1:7003");
  CHECK(r.asked[1].error == "unavailable: connection refused");

  // Shares from the map; the regions of each member cover its share of half
  // the interval, and nobody's regions overlap.
  CHECK(r.rows[0].share == doctest::Approx(0.5));
  CHECK(r.rows[1].share == doctest::Approx(0.25));
  double covered = 0;
  std::vector<MdsRegion> all;
  for (const auto& row : r.rows) {
    double mine = 0;
    for (const auto& g : row.regions) {
      CHECK(g.begin < g.end);
      mine += g.end - g.begin;
      all.push_back(g);
    }
    CHECK(mine == doctest::Approx(row.share / 2));
    covered += mine;
  }
  CHECK(covered == doctest::Approx(0.5));
  std::sort(all.begin(), all.end(), [](const MdsRegion& a, const MdsRegion& b) { return a.begin < b.begin; });
  for (size_t i = 1; i < all.size(); ++i) CHECK(all[i - 1].end <= all[i].begin);
}

TEST_CASE("each member's slowdown comes from its own answer; the others' are unknown") {
  MdsClusterView delegate = view_of(0), other = view_of(1);
  for (auto& m : delegate.members) m.slowdown = m.id == 0 ? 1 : 0;  // as members report
  for (auto& m : other.members) m.slowdown = m.id == 1 ? 7 : 0;
  const MdsReport r = build_mds_report({{mds_target(0), delegate}, {mds_target(1), other},
                                        {mds_target(2), Status(Errc::timeout, "no answer")}});
  REQUIRE(r.rows.size() == 3);
  CHECK(r.rows[0].member.slowdown == 1);
  CHECK(r.rows[1].member.slowdown == 7);
  CHECK(r.rows[2].member.slowdown == 0);
  const std::string text = render_mds(r, false);
  CHECK(text.find("mds1  127.0.0.1:7001  up     7x") != std::string::npos);
  CHECK(text.find("mds2  127.0.0.1:7002  down   ?") != std::string::npos);
  CHECK(render_mds_json(r).find("\"state\": \"down\", \"alive\": false, \"slowdown\": null,") != std::string::npos);
}

TEST_CASE("a member's file sets and interval come from its own answer, fresher than the delegate's") {
  MdsClusterView delegate = view_of(0), other = view_of(1);
  // mds1 has received set 9 since its last heartbeat to the delegate.
  for (auto& m : other.members)
    if (m.id == 1) {
      m.file_sets = {1, 4, 9};
      m.interval = {13, 6.5, 450};
    }
  const MdsReport r = build_mds_report({{mds_target(0), delegate}, {mds_target(1), other},
                                        {mds_target(2), Status(Errc::timeout, "no answer")}});
  REQUIRE(r.rows.size() == 3);
  CHECK(r.rows[1].member.file_sets == std::vector<uint16_t>{1, 4, 9});
  CHECK(r.rows[1].member.interval.seq == 13);
  CHECK(r.rows[0].member.file_sets == std::vector<uint16_t>{0, 3, 5});
  CHECK(r.rows[2].member.file_sets == std::vector<uint16_t>{2});  // silent: as the delegate last heard
}

TEST_CASE("moves from every member merge by time, a move both ends report counted once") {
  MdsClusterView a = view_of(0), b = view_of(1);
  a.moves = {move(5, 0, 1, kAt + 2000), move(3, 0, 2, kAt)};
  b.moves = {move(5, 0, 1, kAt + 2000), move(8, 1, 0, kAt + 1000, "unavailable: peer down")};
  const MdsReport r = build_mds_report({{mds_target(0), a}, {mds_target(1), b}});
  REQUIRE(r.moves.size() == 3);
  CHECK(r.moves[0].set == 3);
  CHECK(r.moves[1].set == 8);
  CHECK(r.moves[2].set == 5);
}

TEST_CASE("a receiver's record of a move is left out when the sender reported it, and kept otherwise") {
  MdsClusterView sender = view_of(1), receiver = view_of(0);
  sender.moves = {move(7, 1, 0, kAt + 40)};
  receiver.moves = {move(7, kUnknownMember, 0, kAt + 35, "received"),
                    move(9, kUnknownMember, 0, kAt + 50, "received")};  // its sender did not answer
  const MdsReport r = build_mds_report({{mds_target(0), receiver}, {mds_target(1), sender}});
  REQUIRE(r.moves.size() == 2);
  CHECK(r.moves[0].set == 7);
  CHECK(r.moves[0].from == 1);
  CHECK(r.moves[1].set == 9);
  CHECK(render_mds(r, false).find("    9  ?     mds0") != std::string::npos);
}

TEST_CASE("the tuning history comes from the answer with the most recent step") {
  MdsClusterView a = view_of(0), b = view_of(1);
  a.history = {{kAt, 2.0, 3, {}}};
  b.history = {{kAt, 2.0, 3, {}}, {kAt + 10000, 3.0, 4, {}}};
  const MdsReport r = build_mds_report({{mds_target(0), a}, {mds_target(1), b}});
  CHECK(r.view_of == 0u);
  REQUIRE(r.history.size() == 2);
  CHECK(r.history[1].map_version == 4);
}

TEST_CASE("the text shows the map, the members, the tuning steps and the moves") {
  MdsClusterView v = view_of(0);
  v.members[0].interval.service_ms = 1.25;  // its own: the others' are not known to it
  v.history = {{kAt, 4.0, 4,
                {{0, 2.5, "within band", 0.5, 0.5}, {1, 8.25, "scaled", 0.25, 0.125}, {2, 0, "underloaded", 0.25, 0.375}}}};
  v.moves = {move(4, 1, 2, kAt + 1500)};
  const MdsReport r = build_mds_report(
      {{mds_target(0), v}, {mds_target(1), view_of(1)}, {mds_target(2), Status(Errc::timeout, "no answer")}});
  const std::string text = render_mds(r, false);
  CHECK(text ==
        "MDS cluster: 3 member(s), delegate mds0, placement anu, map version 4 (8 partitions); as mds0 sees it\n"
        "MDS   ADDRESS         STATE  SLOWDOWN  FILESETS  LATENCY  SERVICE  REQUESTS  SHARE  REGIONS\n"
        "mds0  127.0.0.1:7000  up     -                3    2.5ms    1.2ms      1200  0.500  [0.000,0.250)\n"
        "mds1  127.0.0.1:7001  up     5x               2    8.2ms        -       400  0.250  [0.250,0.375)\n"
        "mds2  127.0.0.1:7002  down   3x               1        -        -         0  0.250  [0.375,0.500)\n"
        "\n"
        "Tuning, 1 step(s) (UTC):\n"
        "TIME      MAP  AVERAGE  MDS   LATENCY  DECISION     SHARE\n"
        "09:41:05    4    4.0ms  mds0    2.5ms  within band  0.500->0.500\n"
        "                        mds1    8.2ms  scaled       0.250->0.125\n"
        "                        mds2        -  underloaded  0.250->0.375\n"
        "\n"
        "Moves, 1 (UTC):\n"
        "TIME      SET  FROM  TO      BYTES  DURATION  OUTCOME\n"
        "09:41:06    4  mds1  mds2  3.0 MiB     420ms  shipped\n");

  const std::string verbose = render_mds(r, true);
  CHECK(verbose.find("File sets:\n  mds0: 0 3 5\n  mds1: 1 4\n  mds2: 2\n") != std::string::npos);
}

TEST_CASE("the text keeps the last steps and moves, and says how many there were") {
  MdsClusterView v = view_of(0);
  for (int i = 0; i < 8; ++i) v.history.push_back({kAt + i * 1000, 1.0, uint64_t(i), {}});
  for (uint16_t i = 0; i < 30; ++i) v.moves.push_back(move(i, 0, 1, kAt + i));
  const std::string text = render_mds(build_mds_report({{mds_target(0), v}}), false, 5, 20);
  CHECK(text.find("Tuning, last 5 of 8 steps (UTC):\n") != std::string::npos);
  CHECK(text.find("Moves, last 20 of 30 (UTC):\n") != std::string::npos);
  CHECK(text.find("09:41:07    2") == std::string::npos);  // step 2 is left out
  CHECK(text.find("09:41:08    3") != std::string::npos);
}

TEST_CASE("a cluster that never tunes and has moved nothing says so") {
  MdsClusterView v = view_of(0);
  v.placement = "round-robin";
  const std::string text = render_mds(build_mds_report({{mds_target(0), v}}), false);
  CHECK(text.find("\nTuning: none (placement round-robin is never tuned)\n") != std::string::npos);
  CHECK(text.find("\nMoves: none\n") != std::string::npos);
  v.placement = "anu";
  CHECK(render_mds(build_mds_report({{mds_target(0), v}}), false).find("\nTuning: no steps yet\n") !=
        std::string::npos);
}

TEST_CASE("an unreadable map is named, and the members keep the shares they reported") {
  MdsClusterView v = view_of(0);
  v.map = "not a map";
  v.members[0].share = 0.75;
  const MdsReport r = build_mds_report({{mds_target(0), v}});
  CHECK_FALSE(r.map_error.empty());
  CHECK(r.rows[0].share == 0.75);
  CHECK(r.rows[0].regions.empty());
  CHECK(render_mds(r, false).find("unreadable map (") != std::string::npos);
  CHECK(render_mds_json(r).find("\"map\": {\"version\": null") != std::string::npos);
}

TEST_CASE("the JSON holds the raw numbers, every step and move, and nulls for the unknown") {
  MdsClusterView v = view_of(0);
  v.history = {{kAt, 4.0, 4, {{1, 8.25, "scaled", 0.25, 0.125}}}};
  v.moves = {move(4, 1, 2, kAt + 1500)};
  const std::string json =
      render_mds_json(build_mds_report({{mds_target(0), v}, {mds_target(1), Status(Errc::timeout, "slow")}}));
  CHECK(json.rfind("{\n  \"view_of\": 0, \"delegate\": 0, \"placement\": \"anu\",\n", 0) == 0);
  CHECK(json.find("\"map\": {\"version\": 4, \"partitions\": 8, \"rounds\": 16, \"text\": \"anu1 version=4") !=
        std::string::npos);
  CHECK(json.find("{\"name\": \"mds1\", \"address\": \"127.0.0.1:7001\", \"answered\": false, \"error\": "
                  "\"timed out: slow\"}") != std::string::npos);
  CHECK(json.find("{\"id\": 1, \"name\": \"mds1\", \"address\": \"127.0.0.1:7001\", \"state\": \"down\", "
                  "\"alive\": true, \"slowdown\": 5, \"share\": 0.25, \"regions\": [[0.25, 0.375]], "
                  "\"file_sets\": [1, 4], \"interval\": {\"seq\": 12, \"latency_ms\": 8.25, \"requests\": 400, "
                  "\"busy\": 0, \"service_ms\": 0}}") !=
        std::string::npos);
  CHECK(json.find("{\"at_unix_ms\": 1795686065000, \"average_ms\": 4, \"map_version\": 4, \"servers\": "
                  "[{\"server\": 1, \"latency_ms\": 8.25, \"decision\": \"scaled\", \"old_share\": 0.25, "
                  "\"new_share\": 0.125}]}") != std::string::npos);
  CHECK(json.find("{\"set\": 4, \"from\": 1, \"to\": 2, \"at_unix_ms\": 1795686066500, \"bytes\": 3145728, "
                  "\"duration_ms\": 420, \"outcome\": \"shipped\"}") != std::string::npos);
  CHECK(json.substr(json.size() - 4) == "]\n}\n");

  const std::string none = render_mds_json(build_mds_report({{mds_target(0), Status(Errc::timeout, "slow")}}));
  CHECK(none.find("\"view_of\": null, \"delegate\": null, \"placement\": null,\n  \"map\": null,") !=
        std::string::npos);
  CHECK(none.find("\"members\": [\n    {\"id\": 0, \"name\": \"mds0\", \"address\": \"127.0.0.1:7000\", "
                  "\"state\": \"down\", \"alive\": null") != std::string::npos);
  CHECK(render_mds(build_mds_report({{mds_target(0), Status(Errc::timeout, "slow")}}), false).empty());
}

TEST_CASE("times print as the UTC clock") {
  CHECK(utc_clock(kAt) == "09:41:05");
  CHECK(utc_clock(kAt + 999) == "09:41:05");
  CHECK(utc_clock(0) == "00:00:00");
}

}  // namespace pvfs::ctl::mds_view_test
