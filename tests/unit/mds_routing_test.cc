// Unit tests of routing metadata requests in an MDS cluster: which file set
// each request kind is routed by (rpc::route_of), which member owns a file
// set under each placement policy (placement::owner_of), and the client's
// router and retry rules (fs/mds_router.h). Pure; no sockets, no sleeps.
#include "fs/mds_router.h"
#include "policy/placement/policy.h"
#include "shared/rpc/mds_route.h"

#include <doctest/doctest.h>

#include <capnp/message.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace pvfs {
namespace {

namespace mp = proto::mds;
using placement::AnuMap;
using placement::Policy;
using std::chrono::milliseconds;

// An inode of file set `set`.
uint64_t in_set(uint16_t set) { return InodeId::make(FileSetId(set), 77).value; }

std::optional<FileSetId> route(const std::function<void(mp::Request::Builder)>& fill) {
  capnp::MallocMessageBuilder message;
  auto req = message.initRoot<mp::Request>();
  fill(req);
  return rpc::route_of(req.asReader());
}

template <typename T>
T must(Result<T> r) {
  REQUIRE(r.ok());
  return std::move(*r);
}

AnuMap uniform(std::vector<MdsId> ids, uint64_t version = 1) {
  return must(AnuMap::uniform(ids, placement::kDefaultRounds, version));
}

TEST_CASE("every request on an inode is routed by that inode's file set") {
  struct Kind {
    const char* name;
    std::function<void(mp::Request::Builder, uint64_t)> fill;
  };
  const std::vector<Kind> kinds = {
      {"getattr", [](auto r, uint64_t i) { r.initGetattr().setIno(i); }},
      {"setattr", [](auto r, uint64_t i) { r.initSetattr().setIno(i); }},
      {"readlink", [](auto r, uint64_t i) { r.initReadlink().setIno(i); }},
      {"readdir", [](auto r, uint64_t i) { r.initReaddir().setIno(i); }},
      {"setxattr", [](auto r, uint64_t i) { r.initSetxattr().setIno(i); }},
      {"getxattr", [](auto r, uint64_t i) { r.initGetxattr().setIno(i); }},
      {"listxattr", [](auto r, uint64_t i) { r.initListxattr().setIno(i); }},
      {"removexattr", [](auto r, uint64_t i) { r.initRemovexattr().setIno(i); }},
      {"access", [](auto r, uint64_t i) { r.initAccess().setIno(i); }},
      {"open", [](auto r, uint64_t i) { r.initOpen().setIno(i); }},
      {"updateSize", [](auto r, uint64_t i) { r.initUpdateSize().setIno(i); }},
      {"setLayout", [](auto r, uint64_t i) { r.initSetLayout().setIno(i); }},
      {"getLayoutPolicy", [](auto r, uint64_t i) { r.initGetLayoutPolicy().setIno(i); }},
      {"releaseOrphan", [](auto r, uint64_t i) { r.initReleaseOrphan().setIno(i); }},
      {"holdOrphan", [](auto r, uint64_t i) { r.initHoldOrphan().setIno(i); }},
      {"openFiles", [](auto r, uint64_t i) { r.initOpenFiles().initInos(1).set(0, i); }},
      {"makeFileSet", [](auto r, uint64_t i) { r.initMakeFileSet().setIno(i); }},
      {"lock", [](auto r, uint64_t i) { r.initLock().setIno(i); }},
      {"lockStatus", [](auto r, uint64_t i) { r.setLockStatus(i); }},
  };
  uint16_t set = 1;
  for (const auto& kind : kinds) {
    CAPTURE(kind.name);
    ++set;
    CHECK(route([&](auto r) { kind.fill(r, in_set(set)); }) == FileSetId(set));
  }
}

TEST_CASE("pvfs-ctl locks without an inode goes to any member") {
  CHECK(route([](auto r) { r.setLockStatus(0); }) == std::nullopt);
}

TEST_CASE("every request on a name is routed by its parent directory's file set") {
  struct Kind {
    const char* name;
    std::function<void(mp::Request::Builder, uint64_t)> fill;
  };
  const std::vector<Kind> kinds = {
      {"lookup", [](auto r, uint64_t p) { r.initLookup().setParent(p); }},
      {"mknod", [](auto r, uint64_t p) { r.initMknod().setParent(p); }},
      {"mkdir", [](auto r, uint64_t p) { r.initMkdir().setParent(p); }},
      {"unlink", [](auto r, uint64_t p) { r.initUnlink().setParent(p); }},
      {"rmdir", [](auto r, uint64_t p) { r.initRmdir().setParent(p); }},
      {"symlink", [](auto r, uint64_t p) { r.initSymlink().setParent(p); }},
  };
  uint16_t set = 100;
  for (const auto& kind : kinds) {
    CAPTURE(kind.name);
    ++set;
    CHECK(route([&](auto r) { kind.fill(r, in_set(set)); }) == FileSetId(set));
  }
}

TEST_CASE("rename is routed by its source directory and link by its new parent") {
  CHECK(route([](auto r) {
          auto m = r.initRename();
          m.setParent(in_set(5));
          m.setNewParent(in_set(6));
        }) == FileSetId(5));
  CHECK(route([](auto r) {
          auto l = r.initLink();
          l.setIno(in_set(7));
          l.setNewParent(in_set(8));
        }) == FileSetId(8));
}

TEST_CASE("the root directory routes to file set 0 and the top file set to 65535") {
  CHECK(route([](auto r) { r.initGetattr().setIno(kRootInode.value); }) == FileSetId(0));
  CHECK(route([](auto r) { r.initLookup().setParent(in_set(0xffff)); }) == FileSetId(0xffff));
}

TEST_CASE("requests about the cluster or the daemon are not routed: any member answers") {
  CHECK(route([](auto r) { r.setStatfs(); }) == std::nullopt);
  CHECK(route([](auto r) { r.setGetServers(); }) == std::nullopt);
  CHECK(route([](auto r) { r.initRegisterServer().setId(3); }) == std::nullopt);
  CHECK(route([](auto r) { r.initHeartbeat().setId(3); }) == std::nullopt);
  CHECK(route([](auto r) { r.setStatus(); }) == std::nullopt);
  CHECK(route([](auto r) { r.setMetrics(); }) == std::nullopt);
  CHECK(route([](auto r) { r.setSetLogLevel("debug"); }) == std::nullopt);
  CHECK(route([](auto r) { r.initScanFiles().setAfter(in_set(9)); }) == std::nullopt);
  CHECK(route([](auto r) { r.setGetMap(); }) == std::nullopt);
  CHECK(route([](auto r) { r.setClusterStatus(); }) == std::nullopt);
}

TEST_CASE("round-robin puts file set n on the (n mod k)-th member in id order") {
  const AnuMap map = uniform({MdsId(9), MdsId(3), MdsId(7)});
  const std::vector<MdsId> by_id = {MdsId(3), MdsId(7), MdsId(9)};
  for (uint16_t n = 0; n < 100; ++n) {
    CAPTURE(n);
    CHECK(placement::owner_of(map, Policy::round_robin, FileSetId(n)) == by_id[n % 3]);
  }
  CHECK(placement::owner_of(map, Policy::round_robin, FileSetId(0xffff)) == by_id[0xffff % 3]);
}

TEST_CASE("hash and anu placement follow the map, however it is tuned") {
  const std::vector<placement::ServerShare> shares = {{MdsId(1), 0.6}, {MdsId(2), 0.1}, {MdsId(4), 0.3}};
  const AnuMap tuned = must(AnuMap::from_shares(shares));
  const AnuMap even = uniform({MdsId(1), MdsId(2), MdsId(4)});
  std::map<uint32_t, int> owned;
  for (uint32_t n = 0; n < 2000; ++n) {
    const FileSetId set(static_cast<uint16_t>(n * 31));
    CAPTURE(set.value);
    for (const AnuMap* map : {&tuned, &even}) {
      CHECK(placement::owner_of(*map, Policy::anu, set) == map->locate(set));
      CHECK(placement::owner_of(*map, Policy::hash, set) == map->locate(set));
    }
    ++owned[placement::owner_of(tuned, Policy::anu, set).value];
  }
  // Every member of the tuned map owns some sets, the largest share the most.
  CHECK(owned[1] > owned[4]);
  CHECK(owned[4] > owned[2]);
  CHECK(owned[2] > 0);
}

TEST_CASE("the placement policy names parse back and anything else is refused") {
  for (Policy p : {Policy::anu, Policy::hash, Policy::round_robin})
    CHECK(placement::parse_policy(placement::policy_name(p)) == p);
  CHECK(placement::parse_policy("roundrobin") == std::nullopt);
  CHECK(placement::parse_policy("") == std::nullopt);
}

// --- the client's router ------------------------------------------------

TEST_CASE("before any member sends a map, the router guesses an even map at version 0") {
  MdsRouter router({MdsId(2), MdsId(0), MdsId(5)}, Policy::anu);
  CHECK(router.map().version() == 0);
  CHECK(router.map().servers() == std::vector<MdsId>{MdsId(0), MdsId(2), MdsId(5)});
  CHECK(router.target(FileSetId(7)) == router.map().locate(FileSetId(7)));
  // Any map a member sends is newer than the guess.
  CHECK(router.adopt(uniform({MdsId(0), MdsId(2), MdsId(5)}, 1)));
  CHECK(router.map().version() == 1);
}

TEST_CASE("the router takes only newer maps") {
  MdsRouter router({MdsId(1), MdsId(2)}, Policy::anu);
  const AnuMap v3 = uniform({MdsId(1), MdsId(2)}, 3);
  CHECK(router.adopt(v3));
  CHECK_FALSE(router.adopt(v3));
  CHECK_FALSE(router.adopt(uniform({MdsId(1)}, 2)));
  CHECK_FALSE(router.adopt(AnuMap{}));
  CHECK(router.map() == v3);
  const AnuMap v4 = must(v3.remove_server(MdsId(2)));
  CHECK(router.adopt(v4));
  CHECK(router.map().version() == 4);
}

TEST_CASE("of two maps of one version, router and members settle on the one with the smaller text") {
  // Two delegates at once (each thought the other dead) both made version 2.
  const AnuMap a = uniform({MdsId(1), MdsId(2)}, 2), b = uniform({MdsId(1), MdsId(3)}, 2);
  const AnuMap& smaller = a.serialize() < b.serialize() ? a : b;
  const AnuMap& larger = a.serialize() < b.serialize() ? b : a;
  CHECK(placement::supersedes(smaller, larger));
  CHECK_FALSE(placement::supersedes(larger, smaller));
  CHECK_FALSE(placement::supersedes(smaller, smaller));
  MdsRouter router({MdsId(1), MdsId(2), MdsId(3)}, Policy::anu);
  REQUIRE(router.adopt(larger));
  CHECK(router.adopt(smaller));  // what the members settled on
  CHECK_FALSE(router.adopt(larger));
  CHECK(router.map() == smaller);
}

TEST_CASE("of two maps of one version the one made by the delegate with the lower id wins, through the text form too") {
  AnuMap by_member_2 = uniform({MdsId(1), MdsId(3)}, 2);
  by_member_2.set_issuer(MdsId(2));
  AnuMap by_member_1 = uniform({MdsId(2), MdsId(3)}, 2);
  by_member_1.set_issuer(MdsId(1));
  auto parsed_2 = AnuMap::parse(by_member_2.serialize());
  auto parsed_1 = AnuMap::parse(by_member_1.serialize());
  REQUIRE(parsed_1.ok());
  REQUIRE(parsed_2.ok());
  CHECK(parsed_1->issuer() == MdsId(1));
  CHECK(*parsed_2 == by_member_2);
  CHECK(placement::supersedes(*parsed_1, *parsed_2));
  CHECK_FALSE(placement::supersedes(*parsed_2, *parsed_1));
  // A map with an issuer beats one of the same version without; a newer version beats both.
  const AnuMap anonymous = uniform({MdsId(1), MdsId(2)}, 2);
  CHECK(placement::supersedes(by_member_2, anonymous));
  CHECK_FALSE(placement::supersedes(anonymous, by_member_2));
  CHECK(placement::supersedes(uniform({MdsId(1), MdsId(2)}, 3), by_member_1));
  // A saved map from before issuers were recorded still parses.
  CHECK(AnuMap::parse(anonymous.serialize()).ok());
  CHECK(AnuMap::parse(anonymous.serialize() + " by=x").code() == Errc::invalid_argument);
}

TEST_CASE("a routed request goes to its file set's owner and follows the map when a member leaves") {
  for (Policy policy : {Policy::anu, Policy::hash, Policy::round_robin}) {
    CAPTURE(placement::policy_name(policy));
    MdsRouter router({MdsId(1), MdsId(2), MdsId(3)}, policy);
    const AnuMap before = uniform({MdsId(1), MdsId(2), MdsId(3)}, 5);
    REQUIRE(router.adopt(before));
    int moved = 0;
    for (uint16_t n = 0; n < 300; ++n)
      CHECK(router.target(FileSetId(n)) == placement::owner_of(before, policy, FileSetId(n)));
    const AnuMap after = must(before.remove_server(MdsId(2)));
    REQUIRE(router.adopt(after));
    for (uint16_t n = 0; n < 300; ++n) {
      const MdsId owner = router.target(FileSetId(n));
      CHECK(owner == placement::owner_of(after, policy, FileSetId(n)));
      CHECK(owner != MdsId(2));
      moved += placement::owner_of(before, policy, FileSetId(n)) != owner;
    }
    CHECK(moved > 0);
  }
}

TEST_CASE("with one configured member every request goes to it, whatever the map says") {
  MdsRouter router({MdsId(0)}, Policy::anu);
  REQUIRE(router.adopt(uniform({MdsId(4), MdsId(6)}, 2)));
  for (uint16_t n = 0; n < 50; ++n) CHECK(router.target(FileSetId(n)) == MdsId(0));
  CHECK(router.target(std::nullopt) == MdsId(0));
  CHECK(router.target(std::nullopt, 3) == MdsId(0));
}

TEST_CASE("unrouted requests go to the members in config order, from the last that answered") {
  MdsRouter router({MdsId(4), MdsId(1), MdsId(8)}, Policy::anu);
  CHECK(router.target(std::nullopt) == MdsId(4));
  CHECK(router.target(std::nullopt, 1) == MdsId(1));
  CHECK(router.target(std::nullopt, 2) == MdsId(8));
  CHECK(router.target(std::nullopt, 3) == MdsId(4));
  router.answered(MdsId(8));
  CHECK(router.target(std::nullopt) == MdsId(8));
  CHECK(router.target(std::nullopt, 1) == MdsId(4));
  router.answered(MdsId(99));  // not configured: ignored
  CHECK(router.target(std::nullopt) == MdsId(8));
}

// --- retry rules ----------------------------------------------------------

TEST_CASE("a stale map reply retries at once with a newer map, else asks the others and pauses") {
  MdsRetry retry(false, true, 3);
  CHECK(retry.after(MdsMiss::stale_map, true) == MdsNext{});
  CHECK(retry.after(MdsMiss::stale_map, false) ==
        MdsNext{.ask_others = true, .pause = MdsRetry::kStalePause});
  CHECK(MdsRetry::kStalePause == milliseconds(50));
}

TEST_CASE("a file set still arriving is retried with pauses doubling from 20 ms up to 500 ms") {
  MdsRetry retry(false, true, 2);
  std::vector<milliseconds> pauses;
  for (int i = 0; i < 8; ++i) {
    const MdsNext next = retry.after(MdsMiss::again, false);
    CHECK_FALSE(next.give_up);
    CHECK_FALSE(next.ask_others);
    pauses.push_back(next.pause);
  }
  const std::vector<milliseconds> expected = {milliseconds(20),  milliseconds(40),  milliseconds(80),
                                              milliseconds(160), milliseconds(320), milliseconds(500),
                                              milliseconds(500), milliseconds(500)};
  CHECK(pauses == expected);
}

TEST_CASE("a request lost in flight is retried only when it is idempotent") {
  MdsRetry mutating(false, true, 3);
  CHECK(mutating.after(MdsMiss::lost, false).give_up);
  MdsRetry reading(true, true, 3);
  CHECK(reading.after(MdsMiss::lost, false) ==
        MdsNext{.ask_others = true, .pause = MdsRetry::kUnreachablePause});
}

TEST_CASE("an unreachable owner makes the call ask the others for a newer map, for any request") {
  MdsRetry mutating(false, true, 3);
  for (int i = 0; i < 3; ++i)
    CHECK(mutating.after(MdsMiss::unreachable, false) ==
          MdsNext{.ask_others = true, .pause = MdsRetry::kUnreachablePause});
  CHECK(mutating.skip() == 0);
  MdsRetry alone(false, true, 1);
  CHECK(alone.after(MdsMiss::unreachable, false) == MdsNext{.pause = MdsRetry::kUnreachablePause});
}

TEST_CASE("an unrouted request tries every member before pausing") {
  MdsRetry retry(true, false, 3);
  CHECK(retry.after(MdsMiss::unreachable, false) == MdsNext{});
  CHECK(retry.skip() == 1);
  CHECK(retry.after(MdsMiss::lost, false) == MdsNext{});
  CHECK(retry.skip() == 2);
  CHECK(retry.after(MdsMiss::unreachable, false) == MdsNext{.pause = MdsRetry::kUnreachablePause});
  CHECK(retry.skip() == 3);
  MdsRetry alone(true, false, 1);
  CHECK(alone.after(MdsMiss::unreachable, false) == MdsNext{.pause = MdsRetry::kUnreachablePause});
}

TEST_CASE("a router and its retries walk a cluster in memory: stale replies converge on the owner") {
  // Three members; the client starts from the guess, members hold map v7
  // where member 2 has left. Each attempt at a non-owner says stale_map and
  // hands over v7; the client must reach the true owner in one retry.
  const AnuMap members_map = must(uniform({MdsId(1), MdsId(2), MdsId(3)}, 6).remove_server(MdsId(2)));
  for (uint16_t n = 0; n < 200; ++n) {
    CAPTURE(n);
    MdsRouter router({MdsId(1), MdsId(2), MdsId(3)}, Policy::anu);
    MdsRetry retry(false, true, 3);
    const FileSetId set(n);
    const MdsId owner = members_map.locate(set);
    int attempts = 0;
    for (MdsId to = router.target(set); to != owner; to = router.target(set)) {
      REQUIRE(++attempts < 3);
      const bool newer = router.adopt(members_map);
      const MdsNext next = retry.after(MdsMiss::stale_map, newer);
      CHECK_FALSE(next.give_up);
      CHECK(next.pause == milliseconds(0));
    }
    CHECK(router.target(set) == owner);
  }
}

}  // namespace
}  // namespace pvfs
