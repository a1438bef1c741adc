// In-process tests of mds/cluster/mds_cluster: two members on a memory
// network and a manual clock. Their heartbeat and fence loops run on short
// asio timers; leases, liveness and intervals are measured on the manual
// clock, so nothing lapses until the test advances it.
#include <capnp/message.h>
#include <doctest/doctest.h>

#include <map>

#include "tests/inprocess/mds_node.h"
#include "tests/support/temp_dir.h"

namespace pvfs::test::mds_cluster_test {
namespace {

struct Pair {
  Pair() {
    key.fill(3);
    config.heartbeat_interval_ms = 20;  // loop pacing only: time itself is the manual clock
    config.rpc_timeout_ms = 30000;
    config.connect_timeout_ms = 30000;
    for (uint32_t id : {1u, 2u})
      config.mds.push_back(DaemonEntry{id, MdsNode::address(id), dir.path() / ("mds-" + std::to_string(id))});
    start();
  }
  ~Pair() { nodes.clear(); }

  void start() {
    for (uint32_t id : {1u, 2u})
      nodes.push_back(std::make_unique<MdsNode>(loop, net, clock, config, key, id,
                                                dir.path() / ("mds-" + std::to_string(id))));
  }
  // Both members stop, and start again on their data dirs.
  void restart() {
    nodes.clear();
    start();
  }
  bool root_made() { return node(1).filesets().has(FileSetId(0)) || node(2).filesets().has(FileSetId(0)); }

  MdsNode& node(uint32_t id) { return *nodes.at(id - 1); }
  // Runs the loops (and their short timers) until `done()`; fails after 30 s.
  void until(const std::function<bool()>& done) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done()) {
      if (std::chrono::steady_clock::now() > give_up) FAIL("never happened");
      loop.io.run_one_for(std::chrono::milliseconds(5));
    }
  }
  void partition(bool cut) {
    for (uint32_t id : {1u, 2u}) {
      net.refuse(MdsNode::address(id), cut);
      if (cut) net.cut(MdsNode::address(id));
    }
  }
  Errc getattr_root(uint32_t id) {
    rpc::OutMessage m;
    request(m).initGetattr().setIno(kRootInode.value);
    return node(id).call(m).status().code();
  }

  TempDir dir{"pvfs-inprocess-mds-cluster"};
  Loop loop;
  ManualClock clock;
  rpc::MemoryNetwork net{loop.io.get_executor()};
  Config config;
  Secret key{};
  std::vector<std::unique_ptr<MdsNode>> nodes;
};

}  // namespace

TEST_CASE("of two members exactly one serves the root, and the other sends clients to it") {
  Pair p;
  // The root is made once both members have heard each other.
  p.until([&] { return p.node(1).filesets().has(FileSetId(0)) || p.node(2).filesets().has(FileSetId(0)); });
  const uint32_t owner = p.node(1).filesets().has(FileSetId(0)) ? 1 : 2;
  const uint32_t other = 3 - owner;
  CHECK_FALSE(p.node(other).filesets().has(FileSetId(0)));
  // Both serve once each holds a lease from the delegate's answers.
  p.until([&] {
    return p.node(owner).cluster().admit(FileSetId(0)).ok() &&
           p.node(other).cluster().admit(FileSetId(0)).code() == Errc::stale_map;
  });
  CHECK(p.getattr_root(owner) == Errc::ok);
  CHECK(p.getattr_root(other) == Errc::stale_map);
}

TEST_CASE("a cluster stopped before its members first met makes its root when they do") {
  Pair p;
  p.partition(true);
  for (int i = 0; i < 50; ++i) p.loop.io.run_one_for(std::chrono::milliseconds(5));
  REQUIRE_FALSE(p.root_made());
  // Each saved its map; a fresh cluster with a saved map is still fresh.
  p.restart();
  p.partition(false);
  p.until([&] { return p.root_made(); });
  CHECK(p.node(1).filesets().has(FileSetId(0)) != p.node(2).filesets().has(FileSetId(0)));
}

TEST_CASE("a member cut off from the delegate stops serving when its lease lapses on the clock, and serves again when healed") {
  Pair p;
  p.until([&] { return p.node(1).cluster().serving() && p.node(2).cluster().serving(); });
  p.partition(true);
  // However long the machine takes, no lease lapses while the clock stands.
  p.loop.settle();
  CHECK(p.node(2).cluster().serving());
  p.clock.advance(std::chrono::milliseconds(p.config.mds_lease() + 1));
  p.until([&] { return !p.node(2).cluster().serving(); });
  // Fenced: it admits nothing, whoever owns the set.
  CHECK(p.node(2).cluster().admit(FileSetId(0)).code() == Errc::again);
  p.partition(false);
  p.until([&] { return p.node(2).cluster().serving(); });
}

TEST_CASE("a member's heartbeat answer carries the requests that arrived per file set to the other members") {
  Pair p;
  p.config.mds_tune_interval_ms = 1000;
  p.restart();
  p.until([&] { return p.node(1).cluster().serving() && p.node(2).cluster().serving() && p.root_made(); });
  const uint32_t owner = p.node(1).filesets().has(FileSetId(0)) ? 1 : 2;
  const uint32_t other = 3 - owner;
  for (int i = 0; i < 5; ++i) {
    rpc::OutMessage m;
    request(m).initGetattr().setIno(kRootInode.value);
    REQUIRE(p.node(owner).call(m).ok());
  }
  p.clock.advance(std::chrono::milliseconds(1100));  // the owner's interval closes at its next heartbeat
  // What the other member heard in the owner's answer to its heartbeat.
  auto heard = [&]() -> std::map<uint16_t, uint64_t> {
    capnp::MallocMessageBuilder message;
    auto state = message.initRoot<mp::Reply::ClusterState>();
    p.node(other).cluster().fill_status(state);
    std::map<uint16_t, uint64_t> out;
    for (auto member : state.getMembers())
      if (member.getId() == owner && member.getLatency().getIntervalMs() >= 1000)
        for (auto s : member.getLatency().getSets()) out[s.getSet()] += s.getRequests();
    return out;
  };
  p.until([&] { return !heard().empty(); });
  CHECK(heard() == std::map<uint16_t, uint64_t>{{0, 5}});
}

}  // namespace pvfs::test::mds_cluster_test
