// The client against a metadata server cluster faked in this process: each
// member answers from the map it is given (getMap, staleMap for file sets it
// does not own, again while a set is "arriving"), so a test can change the
// maps, stop a member or hold a set back and watch the client find the
// owner. Real connections on loopback, no daemons; the member side of the
// cluster is tested with the real pvfs-mds elsewhere.
#include <sys/stat.h>

#include <doctest/doctest.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "fs/client.h"
#include "policy/placement/policy.h"
#include "shared/proto/mds.capnp.h"
#include "shared/rpc/convert.h"
#include "shared/rpc/fan_out.h"
#include "shared/rpc/mds_route.h"
#include "shared/rpc/rpc_server.h"
#include "shared/rpc/run_sync.h"
#include "shared/secret.h"
#include "tests/support/temp_dir.h"

namespace pvfs::test::client_routing_test {
namespace {

namespace mp = proto::mds;
using placement::AnuMap;
using placement::Policy;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

const Credentials kRoot{};

template <typename T>
T must(Result<T> r) {
  REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  return std::move(*r);
}

// One member: what it believes and what it was asked.
struct FakeMember {
  uint32_t id = 0;
  AnuMap map;
  bool knows_getmap = true;  // false: answers getMap like a pvfs-mds without a cluster
  int again_left = 0;        // answer this many owned requests with again first
  int served = 0;            // requests on a file set answered
  int stale = 0;             // staleMap replies
  int again = 0;             // again replies
  int unrouted = 0;          // statfs and getServers answered
  int maps = 0;              // getMap answered
  std::unique_ptr<rpc::RpcServer> server;
};

class FakeCluster {
 public:
  FakeCluster(asio::io_context& io, std::vector<uint32_t> ids, Policy policy = Policy::anu)
      : io_(io), policy_(policy) {
    config.secret_file = dir_.path() / "secret.key";
    REQUIRE(generate_secret(config.secret_file).ok());
    key_ = must(load_secret(config.secret_file));
    config.rpc_timeout_ms = 3000;
    config.connect_timeout_ms = 1000;
    config.mds_placement = policy;
    std::vector<MdsId> members;
    for (uint32_t id : ids) members.push_back(MdsId(id));
    const AnuMap first = must(AnuMap::uniform(members));
    for (uint32_t id : ids) {
      auto m = std::make_unique<FakeMember>();
      m->id = id;
      m->map = first;
      FakeMember* self = m.get();
      m->server = must(rpc::RpcServer::listen(
          io_, Endpoint{"127.0.0.1", 0}, key_,
          [this, self](std::shared_ptr<rpc::Connection> conn, std::unique_ptr<rpc::InMessage> msg) {
            return handle(*self, std::move(conn), std::move(msg));
          },
          milliseconds(1000)));
      m->server->start();
      config.mds.push_back(DaemonEntry{id, Endpoint{"127.0.0.1", m->server->port()}, {}});
      members_[id] = std::move(m);
    }
  }
  ~FakeCluster() {
    for (auto& [id, m] : members_) m->server->stop();
  }

  FakeMember& member(uint32_t id) { return *members_.at(id); }
  // Every member (or those listed) now holds `map`.
  void set_map(const AnuMap& map, std::vector<uint32_t> only = {}) {
    for (auto& [id, m] : members_)
      if (only.empty() || std::find(only.begin(), only.end(), id) != only.end()) m->map = map;
  }
  int total(int FakeMember::*counter) const {
    int n = 0;
    for (const auto& [id, m] : members_) n += (*m).*counter;
    return n;
  }

  Config config;

 private:
  asio::awaitable<void> handle(FakeMember& m, std::shared_ptr<rpc::Connection> conn,
                               std::unique_ptr<rpc::InMessage> msg) {
    auto req = msg->body<mp::Request>();
    rpc::OutMessage out;
    auto reply = out.init_body<mp::Reply>();
    if (req.isGetMap()) {
      if (!m.knows_getmap) co_return co_await conn->reply_error(msg->id(), Status(Errc::not_supported));
      ++m.maps;
      reply.setMap(m.map.serialize());
      co_return co_await conn->reply(msg->id(), out);
    }
    if (req.isGetServers() || req.isStatfs()) {
      ++m.unrouted;
      if (req.isGetServers()) reply.initServers(0);
      else reply.initStatfs().setTotalInodes(m.id);  // tells the test who answered
      co_return co_await conn->reply(msg->id(), out);
    }
    auto set = rpc::route_of(req);
    if (!set) co_return co_await conn->reply_error(msg->id(), Status(Errc::not_supported));
    if (placement::owner_of(m.map, policy_, *set) != MdsId(m.id)) {
      ++m.stale;
      co_return co_await conn->reply_error(msg->id(), Status(Errc::stale_map, "not mine"));
    }
    if (m.again_left > 0) {
      --m.again_left;
      ++m.again;
      co_return co_await conn->reply_error(msg->id(), Status(Errc::again, "arriving"));
    }
    ++m.served;
    Attr attr;
    attr.ino = InodeId::make(*set, 1);
    attr.mode = S_IFDIR | 0755;
    attr.nlink = 2;
    rpc::to_wire(attr, reply.initAttr());
    co_await conn->reply(msg->id(), out);
  }

  asio::io_context& io_;
  Policy policy_;
  TempDir dir_{"pvfs-routing"};
  Secret key_;
  std::map<uint32_t, std::unique_ptr<FakeMember>> members_;
};

InodeId dir_in(uint16_t set) { return InodeId::make(FileSetId(set), 1); }

struct Started {
  asio::io_context io;
  std::unique_ptr<FakeCluster> cluster;
  std::unique_ptr<Client> client;
  Started(std::vector<uint32_t> ids, Policy policy = Policy::anu,
          std::function<void(FakeCluster&)> before_start = {}) {
    cluster = std::make_unique<FakeCluster>(io, ids, policy);
    if (before_start) before_start(*cluster);
    client = must(Client::create(io, cluster->config));
    Status st = rpc::run_sync(io, client->start());
    REQUIRE_MESSAGE(st.ok(), st.to_string());
  }
  template <typename T>
  T run(asio::awaitable<T> task) {
    return rpc::run_sync(io, std::move(task));
  }
};

TEST_CASE("the client learns the map at start and sends each request to its file set's owner") {
  Started t({1, 2, 3}, Policy::anu, [](FakeCluster& c) {
    const std::vector<placement::ServerShare> shares = {{MdsId(1), 0.6}, {MdsId(2), 0.3}, {MdsId(3), 0.1}};
    c.set_map(must(AnuMap::from_shares(shares, placement::kDefaultRounds, 4)));
  });
  CHECK(t.cluster->member(1).maps == 1);
  const AnuMap& map = t.cluster->member(1).map;
  std::map<uint32_t, int> expected;
  for (uint16_t set = 0; set < 60; ++set) {
    auto attr = t.run(t.client->getattr(kRoot, dir_in(set)));
    REQUIRE_MESSAGE(attr.ok(), attr.status().to_string());
    CHECK(attr->ino == dir_in(set));
    ++expected[map.locate(FileSetId(set)).value];
  }
  for (uint32_t id : {1u, 2u, 3u}) {
    CAPTURE(id);
    CHECK(t.cluster->member(id).served == expected[id]);
  }
  CHECK(t.cluster->total(&FakeMember::stale) == 0);
}

TEST_CASE("round-robin placement sends file set n to the (n mod k)-th member") {
  Started t({4, 5, 6}, Policy::round_robin);
  for (uint16_t set = 0; set < 9; ++set) REQUIRE(t.run(t.client->getattr(kRoot, dir_in(set))).ok());
  for (uint32_t id : {4u, 5u, 6u}) CHECK(t.cluster->member(id).served == 3);
}

TEST_CASE("a client with an old map is told so, fetches the new one and retries at the new owner") {
  Started t({1, 2, 3});
  const AnuMap old_map = t.cluster->member(1).map;
  // Member 3 leaves the map; the client still holds the old one.
  const AnuMap new_map = must(old_map.remove_server(MdsId(3)));
  t.cluster->set_map(new_map);
  int moved = 0;
  for (uint16_t set = 0; set < 60; ++set) {
    // mkdir is not idempotent: retried after staleMap all the same, as the
    // member did not apply it.
    auto made = t.run(t.client->mkdir(kRoot, dir_in(set), "d", 0755));
    REQUIRE_MESSAGE(made.ok(), made.status().to_string());
    moved += old_map.locate(FileSetId(set)) != new_map.locate(FileSetId(set));
  }
  REQUIRE(moved > 0);
  CHECK(t.cluster->member(3).served == 0);
  // Told once (by whichever member saw the old map's mistake first), then
  // the client routes by the new map.
  CHECK(t.cluster->total(&FakeMember::stale) == 1);
  CHECK(t.cluster->total(&FakeMember::served) == 60);
}

TEST_CASE("calls told of a new map at the same moment share one getMap") {
  Started t({1, 2, 3});
  const AnuMap old_map = t.cluster->member(1).map;
  const AnuMap new_map = must(old_map.remove_server(MdsId(3)));
  t.cluster->set_map(new_map);
  const int maps_before = t.cluster->total(&FakeMember::maps);
  std::vector<asio::awaitable<Status>> calls;
  int sets = 0;
  for (uint16_t set = 0; sets < 30; ++set) {
    if (old_map.locate(FileSetId(set)) != MdsId(3)) continue;
    ++sets;
    calls.push_back([](Client& client, InodeId dir) -> asio::awaitable<Status> {
      auto attr = co_await client.getattr(kRoot, dir);
      co_return attr.status();
    }(*t.client, dir_in(set)));
  }
  Status st = t.run(rpc::run_all(std::move(calls)));
  REQUIRE_MESSAGE(st.ok(), st.to_string());
  CHECK(t.cluster->member(3).stale == 30);
  CHECK(t.cluster->total(&FakeMember::maps) - maps_before == 1);
  CHECK(t.cluster->total(&FakeMember::served) == 30);
}

TEST_CASE("a member whose map is behind the client's makes it pause and ask the others") {
  Started t({1, 2});
  const AnuMap v1 = t.cluster->member(1).map;
  const AnuMap v2 = must(v1.with_shares(std::vector<placement::ServerShare>{{MdsId(1), 0.9}, {MdsId(2), 0.1}}));
  // Find a set that moves from 2 to 1 in v2; member 1 learns v2 late.
  uint16_t set = 0;
  while (!(v1.locate(FileSetId(set)) == MdsId(2) && v2.locate(FileSetId(set)) == MdsId(1))) ++set;
  t.cluster->set_map(v2, {2});
  asio::steady_timer later(t.io, milliseconds(150));
  later.async_wait([&](asio::error_code) { t.cluster->set_map(v2, {1}); });
  const auto started = Clock::now();
  auto attr = t.run(t.client->getattr(kRoot, dir_in(set)));
  REQUIRE_MESSAGE(attr.ok(), attr.status().to_string());
  CHECK(Clock::now() - started >= milliseconds(150));
  CHECK(t.cluster->member(1).served == 1);
  CHECK(t.cluster->member(1).stale >= 1);
}

TEST_CASE("a file set still arriving at its owner is retried with growing pauses until served") {
  Started t({1, 2});
  const uint32_t owner = t.cluster->member(1).map.locate(FileSetId(7)).value;
  t.cluster->member(owner).again_left = 4;
  const auto started = Clock::now();
  auto attr = t.run(t.client->getattr(kRoot, dir_in(7)));
  REQUIRE_MESSAGE(attr.ok(), attr.status().to_string());
  CHECK(t.cluster->member(owner).again == 4);
  CHECK(t.cluster->member(owner).served == 1);
  CHECK(Clock::now() - started >= milliseconds(20 + 40 + 80 + 160));
}

TEST_CASE("a file set that never arrives fails with a timeout, not a hang") {
  Started t({1, 2}, Policy::anu, [](FakeCluster& c) { c.config.rpc_timeout_ms = 600; });
  const uint32_t owner = t.cluster->member(1).map.locate(FileSetId(3)).value;
  t.cluster->member(owner).again_left = 1 << 20;
  const auto started = Clock::now();
  auto attr = t.run(t.client->getattr(kRoot, dir_in(3)));
  CHECK(attr.code() == Errc::timeout);
  CHECK(Clock::now() - started < milliseconds(600 + 500));
}

TEST_CASE("when the owner is down the client waits for a map without it and goes to the new owner") {
  Started t({1, 2, 3});
  const AnuMap v1 = t.cluster->member(1).map;
  uint16_t set = 0;
  while (v1.locate(FileSetId(set)) != MdsId(2)) ++set;
  t.cluster->member(2).server->stop();
  // The delegate notices after a while and re-hashes member 2's sets.
  asio::steady_timer later(t.io, milliseconds(400));
  later.async_wait([&](asio::error_code) { t.cluster->set_map(must(v1.remove_server(MdsId(2))), {1, 3}); });
  const auto started = Clock::now();
  auto attr = t.run(t.client->getattr(kRoot, dir_in(set)));
  REQUIRE_MESSAGE(attr.ok(), attr.status().to_string());
  CHECK(Clock::now() - started >= milliseconds(400));
  CHECK(t.cluster->member(1).served + t.cluster->member(3).served == 1);
}

TEST_CASE("a client routing by another placement policy than the members' times out and says why, once") {
  Started t({1, 2, 3}, Policy::round_robin, [](FakeCluster& c) {
    c.config.mds_placement = Policy::anu;
    c.config.rpc_timeout_ms = 300;
  });
  const AnuMap& map = t.cluster->member(1).map;
  std::vector<uint16_t> disputed;
  for (uint16_t set = 0; disputed.size() < 2; ++set)
    if (map.locate(FileSetId(set)) != placement::owner_of(map, Policy::round_robin, FileSetId(set)))
      disputed.push_back(set);
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64);
  spdlog::default_logger()->sinks().push_back(sink);
  for (uint16_t set : disputed) CHECK(t.run(t.client->getattr(kRoot, dir_in(set))).code() == Errc::timeout);
  spdlog::default_logger()->sinks().pop_back();
  int warnings = 0;
  for (const auto& line : sink->last_formatted())
    warnings += line.find("[mds_cluster] placement") != std::string::npos;
  CHECK(warnings == 1);
}

TEST_CASE("requests without a file set go to the first member that answers") {
  Started t({1, 2, 3});
  auto fs = t.run(t.client->statfs(kRoot));
  REQUIRE(fs.ok());
  CHECK(fs->total_inodes == 1);
  t.cluster->member(1).server->stop();
  const auto started = Clock::now();
  fs = t.run(t.client->statfs(kRoot));
  REQUIRE_MESSAGE(fs.ok(), fs.status().to_string());
  CHECK(fs->total_inodes == 2);
  CHECK(Clock::now() - started < milliseconds(500));
  // And it stays with the one that answered.
  fs = t.run(t.client->statfs(kRoot));
  REQUIRE(fs.ok());
  CHECK(fs->total_inodes == 2);
}

TEST_CASE("with one member that knows nothing of maps, everything goes to it as before") {
  Started t({0}, Policy::anu, [](FakeCluster& c) { c.member(0).knows_getmap = false; });
  for (uint16_t set : {0, 1, 500, 65535}) REQUIRE(t.run(t.client->getattr(kRoot, dir_in(set))).ok());
  CHECK(t.cluster->member(0).served == 4);
  CHECK(t.cluster->member(0).stale == 0);
}

TEST_CASE("a client that knows one member of a larger cluster fails at once and says why") {
  asio::io_context io;
  FakeCluster cluster(io, {1, 2, 3});
  Config one = cluster.config;
  one.mds = {cluster.config.mds[0]};
  one.mds[0].id = 0;  // as pvfsmount HOST:PORT makes it
  auto client = must(Client::create(io, one));
  REQUIRE(rpc::run_sync(io, client->start()).ok());
  uint16_t set = 0;
  while (cluster.member(1).map.locate(FileSetId(set)) == MdsId(1)) ++set;
  const auto started = Clock::now();
  auto attr = rpc::run_sync(io, client->getattr(kRoot, dir_in(set)));
  CHECK(attr.code() == Errc::io);
  CHECK(attr.status().detail().find("configuration file") != std::string::npos);
  CHECK(Clock::now() - started < milliseconds(500));
  // Its own file sets are still served.
  while (cluster.member(1).map.locate(FileSetId(set)) != MdsId(1)) ++set;
  CHECK(rpc::run_sync(io, client->getattr(kRoot, dir_in(set))).ok());
}

TEST_CASE("the client starts when only a later member of the config is up") {
  asio::io_context io;
  FakeCluster cluster(io, {1, 2});
  cluster.member(1).server->stop();
  auto client = must(Client::create(io, cluster.config));
  Status st = rpc::run_sync(io, client->start());
  REQUIRE_MESSAGE(st.ok(), st.to_string());
  CHECK(cluster.member(2).maps == 1);
}

}  // namespace
}  // namespace pvfs::test::client_routing_test
