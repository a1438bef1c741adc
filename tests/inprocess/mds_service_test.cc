// In-process tests of mds/mds_service (with the namespace transactions and
// permission checks under it): requests in over a memory connection as a
// client or a storage server sends them, replies out, on a manual clock.
// Storage servers, where a test needs them, are real StorageServices on
// the same memory network.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "mds/wall_clock.h"
#include "shared/name_hash.h"
#include "shared/rpc/convert.h"
#include "tests/inprocess/mds_node.h"
#include "tests/inprocess/storage_cluster.h"

namespace pvfs::test::mds_service_test {
namespace {

const Caller kRoot{0, 0, {}};

// One MDS beside `servers` storage servers, all on the cluster's loop,
// clock and network.
struct Site {
  explicit Site(unsigned servers, std::function<void(Config&)> tune = {}) : storage(servers) {
    storage.config.mds.push_back(DaemonEntry{1, MdsNode::address(1), dir.path() / "mds-1"});
    if (tune) tune(storage.config);
    mds = std::make_unique<MdsNode>(storage.loop, storage.net, storage.clock, storage.config, storage.key, 1,
                                    dir.path() / "mds-1");
  }
  // Registration (or a heartbeat) as storage server `id` would send it.
  Status heartbeat(uint32_t id, bool first = false) {
    auto& conn = servers_[id];
    if (!conn) conn = mds->connect({rpc::Kind::server, id});
    rpc::OutMessage m;
    auto r = request(m);
    auto info = first ? r.initRegisterServer() : r.initHeartbeat();
    info.setId(id);
    info.setAddress(StorageCluster::address(id).to_string());
    return mds->call(m, conn).status();
  }
  MdsNode::Reply mknod(InodeId parent, const std::string& name, uint32_t mode, const Caller& caller = kRoot,
                       std::shared_ptr<rpc::Connection> conn = nullptr) {
    rpc::OutMessage m;
    auto r = request(m, caller).initMknod();
    r.setParent(parent.value);
    r.setName(name);
    r.setMode(S_IFREG | mode);
    return mds->call(m, std::move(conn));
  }
  MdsNode::Reply mkdir(InodeId parent, const std::string& name, uint32_t mode, const Caller& caller = kRoot,
                       std::shared_ptr<rpc::Connection> conn = nullptr) {
    rpc::OutMessage m;
    auto r = request(m, caller).initMkdir();
    r.setParent(parent.value);
    r.setName(name);
    r.setMode(mode);
    return mds->call(m, std::move(conn));
  }
  MdsNode::Reply lookup(InodeId parent, const std::string& name) {
    rpc::OutMessage m;
    auto r = request(m, kRoot).initLookup();
    r.setParent(parent.value);
    r.setName(name);
    return mds->call(m);
  }
  MdsNode::Reply getattr(InodeId ino) {
    rpc::OutMessage m;
    request(m, kRoot).initGetattr().setIno(ino.value);
    return mds->call(m);
  }
  Status rename(InodeId parent, const std::string& name, InodeId to, const std::string& new_name) {
    rpc::OutMessage m;
    auto r = request(m, kRoot).initRename();
    r.setParent(parent.value);
    r.setName(name);
    r.setNewParent(to.value);
    r.setNewName(new_name);
    return mds->call(m).status();
  }

  test::TempDir dir{"pvfs-inprocess-mds"};
  StorageCluster storage;
  std::unique_ptr<MdsNode> mds;
  std::map<uint32_t, std::shared_ptr<rpc::Connection>> servers_;
};

Attr ok_attr(MdsNode::Reply r) {
  REQUIRE_MESSAGE(r.ok(), r.status().to_string());
  return attr_of(**r);
}

}  // namespace

TEST_CASE("a new file is stamped from the injected clock, and a later write moves its mtime with it") {
  Site s(1);
  REQUIRE(s.heartbeat(1, true).ok());
  const Attr made = ok_attr(s.mknod(kRootInode, "f", 0644));
  CHECK(made.mtime == mds::wall_now(s.storage.clock));
  CHECK(made.ctime == made.mtime);
  s.storage.clock.advance(std::chrono::hours(2));
  rpc::OutMessage m;
  auto u = request(m, kRoot).initUpdateSize();
  u.setIno(made.ino.value);
  u.setSize(100);
  u.setTouchMtime(true);
  const Attr grown = ok_attr(s.mds->call(m));
  CHECK(grown.size == 100);
  CHECK(grown.mtime.sec == made.mtime.sec + 7200);
  CHECK(grown.mtime.nsec == made.mtime.nsec);
}

TEST_CASE("a storage server whose heartbeats stopped on the injected clock gets no part of new files") {
  Site s(2);
  REQUIRE(s.heartbeat(1, true).ok());
  REQUIRE(s.heartbeat(2, true).ok());
  CHECK(ok_attr(s.mknod(kRootInode, "both", 0644)).layout.servers.size() == 2);
  s.storage.clock.advance(std::chrono::milliseconds(s.storage.config.heartbeat_timeout_ms + 1));
  REQUIRE(s.heartbeat(2).ok());
  const Attr later = ok_attr(s.mknod(kRootInode, "one", 0644));
  REQUIRE(later.layout.servers.size() == 1);
  CHECK(later.layout.servers[0] == ServerId(2));
  // And with no server heard from in time, a create fails and makes nothing.
  s.storage.clock.advance(std::chrono::milliseconds(s.storage.config.heartbeat_timeout_ms + 1));
  CHECK(s.mknod(kRootInode, "none", 0644).status().code() == Errc::io);
  CHECK(s.lookup(kRootInode, "none").status().code() == Errc::not_found);
}

TEST_CASE("root squash spares only the exempt client addresses") {
  Site s(1, [](Config& c) {
    c.root_squash = true;
    c.root_squash_except = {"127.0.0.2"};
  });
  REQUIRE(s.heartbeat(1, true).ok());
  s.storage.net.set_source_address("127.0.0.3");
  auto squashed = s.mds->connect();
  CHECK(s.mkdir(kRootInode, "by-squashed", 0755, kRoot, squashed).status().code() == Errc::access_denied);
  CHECK(s.lookup(kRootInode, "by-squashed").status().code() == Errc::not_found);
  s.storage.net.set_source_address("127.0.0.2");
  auto exempt = s.mds->connect();
  const Attr made = ok_attr(s.mkdir(kRootInode, "by-exempt", 0755, kRoot, exempt));
  CHECK(made.uid == 0);
}

TEST_CASE("a directory's group admits its members through their supplementary groups, and no one else") {
  Site s(1);
  REQUIRE(s.heartbeat(1, true).ok());
  const Attr dir = ok_attr(s.mkdir(kRootInode, "shared", 0770));
  rpc::OutMessage m;
  auto set = request(m, kRoot).initSetattr();
  set.setIno(dir.ino.value);
  set.setMask(mp::SET_GID);
  set.setGid(50);
  REQUIRE(s.mds->call(m).ok());

  const Caller member{1000, 1000, {7, 50}};
  const Caller stranger{1001, 1001, {7}};
  const Attr made = ok_attr(s.mknod(dir.ino, "ok", 0644, member));
  CHECK(made.uid == 1000);
  CHECK(s.mknod(dir.ino, "no", 0644, stranger).status().code() == Errc::access_denied);
  CHECK(s.lookup(dir.ino, "no").status().code() == Errc::not_found);
}

TEST_CASE("a rename over an existing file replaces it in one step") {
  Site s(1);
  REQUIRE(s.heartbeat(1, true).ok());
  const Attr a = ok_attr(s.mknod(kRootInode, "a", 0644));
  const Attr b = ok_attr(s.mknod(kRootInode, "b", 0644));
  REQUIRE(s.rename(kRootInode, "a", kRootInode, "b").ok());
  CHECK(s.lookup(kRootInode, "a").status().code() == Errc::not_found);
  const Attr now_b = ok_attr(s.lookup(kRootInode, "b"));
  CHECK(now_b.ino == a.ino);
  CHECK_FALSE(now_b.ino == b.ino);
  CHECK(now_b.nlink == 1);
}

TEST_CASE("a rename of a directory into its own subtree fails and changes nothing") {
  Site s(1);
  REQUIRE(s.heartbeat(1, true).ok());
  const Attr x = ok_attr(s.mkdir(kRootInode, "x", 0755));
  const Attr y = ok_attr(s.mkdir(x.ino, "y", 0755));
  CHECK(s.rename(kRootInode, "x", y.ino, "z").code() == Errc::invalid_argument);
  CHECK(ok_attr(s.lookup(kRootInode, "x")).ino == x.ino);
  CHECK(s.lookup(y.ino, "z").status().code() == Errc::not_found);
}

TEST_CASE("a client that dies while writing leaves its acknowledged bytes visible: the size comes from the servers") {
  Site s(2);
  REQUIRE(s.heartbeat(1, true).ok());
  REQUIRE(s.heartbeat(2, true).ok());
  auto writer = s.mds->connect();
  const Attr f = ok_attr(s.mknod(kRootInode, "log", 0644, kRoot, writer));
  rpc::OutMessage starts;
  auto u = request(starts, kRoot).initUpdateSize();
  u.setIno(f.ino.value);
  u.setWriter(mp::Request::UpdateSize::Writer::STARTS);
  REQUIRE(s.mds->call(starts, writer).ok());
  // The client's write reaches the object's server, and is acknowledged...
  const auto data = pattern(5000, 9);
  rpc::OutMessage w;
  write_request(w, ObjectId{f.ino, 0}, 0);
  REQUIRE(s.storage.call(f.layout.servers[0].value, w, data).ok());
  // ...then the client dies before telling the MDS the new size.
  writer->close();
  // The MDS's writer loop notices within its period (an asio timer); the
  // deadline only turns a hang into a failure.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (ok_attr(s.getattr(f.ino)).size != data.size()) {
    if (std::chrono::steady_clock::now() > give_up) FAIL("the size never came from the storage servers");
    s.storage.loop.io.run_one_for(std::chrono::milliseconds(10));
  }
}


// ---- directory leases (mds/dir_lease_table.h) ----

namespace {

// A client connection that answers every recallDirLease (or, when
// `answer` is false, none) and notes the directories recalled.
struct LeaseHolder {
  LeaseHolder(Site& s, bool answer) : recalled(std::make_shared<std::vector<uint64_t>>()) {
    conn = s.mds->connect({rpc::Kind::client, 0},
                          [seen = recalled, answer](std::shared_ptr<rpc::Connection> c,
                                                    std::unique_ptr<rpc::InMessage> msg) -> asio::awaitable<void> {
                            seen->push_back(msg->body<mp::Request>().getRecallDirLease());
                            if (!answer) co_return;  // never answered: the MDS waits the lease out
                            rpc::OutMessage reply;
                            reply.init_body<mp::Reply>().setNone();
                            co_await c->reply(msg->id(), reply);
                          });
  }
  // leaseDir of `dir` as `caller`: the hashes of its names, or the failure.
  Result<std::vector<uint64_t>> lease(Site& s, InodeId dir, const Caller& caller = kRoot) {
    rpc::OutMessage m;
    request(m, caller).initLeaseDir().setIno(dir.value);
    auto reply = s.mds->call(m, conn);
    if (!reply) return reply.status();
    auto l = (*reply)->body<mp::Reply>().getDirLease();
    REQUIRE(l.getKey().size() == key.size());
    std::memcpy(key.data(), l.getKey().begin(), key.size());
    term_ms = l.getTermMs();
    std::vector<uint64_t> names;
    for (uint64_t h : l.getNames()) names.push_back(h);
    return names;
  }
  bool lists(const std::vector<uint64_t>& names, const std::string& name) const {
    return std::find(names.begin(), names.end(), name_hash(key, name)) != names.end();
  }
  std::shared_ptr<std::vector<uint64_t>> recalled;
  std::shared_ptr<rpc::Connection> conn;
  NameHashKey key{};
  uint32_t term_ms = 0;
};

}  // namespace

TEST_CASE("a directory lease lists every name, and another client's new name recalls it before its reply") {
  Site s(1);
  REQUIRE(s.heartbeat(1, true).ok());
  const Attr d = ok_attr(s.mkdir(kRootInode, "d", 0755));
  ok_attr(s.mknod(d.ino, "a", 0644));
  ok_attr(s.mknod(d.ino, "b", 0644));
  LeaseHolder holder(s, true);
  auto names = holder.lease(s, d.ino);
  REQUIRE(names.ok());
  CHECK(names->size() == 2);
  CHECK(holder.lists(*names, "a"));
  CHECK(holder.lists(*names, "b"));
  CHECK_FALSE(holder.lists(*names, "c"));
  CHECK(holder.term_ms == 1000);
  // The holder's own create recalls nothing; another client's does, and
  // its reply comes after the recall was answered.
  ok_attr(s.mknod(d.ino, "mine", 0644, kRoot, holder.conn));
  CHECK(holder.recalled->empty());
  ok_attr(s.mknod(d.ino, "theirs", 0644));
  CHECK(*holder.recalled == std::vector<uint64_t>{d.ino.value});
  // Recalled once: the next name recalls nothing until the lease is asked for again.
  ok_attr(s.mkdir(d.ino, "sub", 0755));
  CHECK(holder.recalled->size() == 1);
  REQUIRE(holder.lease(s, d.ino).ok());
  CHECK(s.rename(kRootInode, "d", kRootInode, "d2").ok());  // names in d unchanged: no recall
  CHECK(holder.recalled->size() == 1);
  CHECK(s.rename(d.ino, "a", d.ino, "a2").ok());  // a new name in d
  CHECK(holder.recalled->size() == 2);
  // A leased directory removed: its holder would answer "absent" where the
  // MDS says stale.
  const Attr sub = ok_attr(s.lookup(d.ino, "sub"));
  REQUIRE(holder.lease(s, sub.ino).ok());
  rpc::OutMessage m;
  auto r = request(m, kRoot).initRmdir();
  r.setParent(d.ino.value);
  r.setName("sub");
  REQUIRE(s.mds->call(m).ok());
  CHECK(holder.recalled->size() == 3);
  CHECK(holder.recalled->back() == sub.ino.value);
}

TEST_CASE("a lease holder that does not answer its recall is waited out, and the name is added") {
  Site s(1);
  REQUIRE(s.heartbeat(1, true).ok());
  const Attr d = ok_attr(s.mkdir(kRootInode, "d", 0755));
  LeaseHolder silent(s, false);
  REQUIRE(silent.lease(s, d.ino).ok());
  const Attr made = ok_attr(s.mknod(d.ino, "new", 0644));
  CHECK(silent.recalled->size() == 1);
  CHECK(ok_attr(s.lookup(d.ino, "new")).ino == made.ino);
}

TEST_CASE("a lease is refused without read permission, past dir_lease_max_entries, and when leases are off") {
  Site s(1, [](Config& c) { c.dir_lease_max_entries = 3; });
  REQUIRE(s.heartbeat(1, true).ok());
  const Attr d = ok_attr(s.mkdir(kRootInode, "d", 0711));  // search, not read, for others
  LeaseHolder holder(s, true);
  CHECK(holder.lease(s, d.ino, Caller{1000, 1000, {}}).code() == Errc::access_denied);
  for (const char* name : {"1", "2", "3"}) ok_attr(s.mknod(d.ino, name, 0644));
  CHECK(holder.lease(s, d.ino).ok());
  ok_attr(s.mknod(d.ino, "4", 0644));
  CHECK(holder.lease(s, d.ino).code() == Errc::too_big);
  CHECK(holder.lease(s, InodeId(0x0000'0000'0000'9999ULL)).code() == Errc::stale);

  Site off(1, [](Config& c) { c.dir_lease_ms = 0; });
  LeaseHolder asker(off, true);
  CHECK(asker.lease(off, kRootInode).code() == Errc::not_supported);
}

}  // namespace pvfs::test::mds_service_test
