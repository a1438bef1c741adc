// In-process tests of server/storage_service: requests in over a memory
// connection, replies out, against a real service on a faulty store and a
// manual clock. Covers a full disk and a dying disk under acknowledged
// data, and the interleavings around the awaits of writes and fragment
// drops.
#include <doctest/doctest.h>

#include "tests/inprocess/storage_cluster.h"

namespace pvfs::test::storage_service_test {
namespace {

using Op = FaultyObjectStore::Op;

Status write(StorageCluster& c, uint32_t server, ObjectId o, uint64_t offset, std::span<const std::byte> data,
             uint64_t fragment = 0, bool sync = false) {
  rpc::OutMessage m;
  write_request(m, o, offset, fragment, sync);
  auto reply = c.call(server, m, data);
  return reply.status();
}

ReadResult read(StorageCluster& c, uint32_t server, ObjectId o, uint64_t offset, uint32_t length) {
  rpc::OutMessage m;
  read_request(m, o, offset, length);
  auto reply = c.call(server, m);
  REQUIRE_MESSAGE(reply.ok(), reply.status().to_string());
  return read_result(**reply);
}

std::vector<std::byte> slice(const std::vector<std::byte>& v, size_t from, size_t n) {
  return {v.begin() + static_cast<ptrdiff_t>(from), v.begin() + static_cast<ptrdiff_t>(from + n)};
}

proto::storage::Reply::SchedStatus::Reader sched(StorageCluster& c, uint32_t server,
                                                 std::unique_ptr<rpc::InMessage>& keep) {
  rpc::OutMessage m;
  sched_status_request(m);
  auto reply = c.call(server, m);
  REQUIRE_MESSAGE(reply.ok(), reply.status().to_string());
  keep = std::move(*reply);
  return keep->body<sp::Reply>().getSchedStatus();
}

}  // namespace

TEST_CASE("a full disk fails the write that did not fit and keeps every acknowledged byte readable") {
  StorageCluster c(1);
  const auto first = pattern(64 << 10, 1);
  REQUIRE(write(c, 1, oid(5), 0, first).ok());
  // Room for half of the next write: the store takes what fits, then ENOSPC.
  c.node(1).store->space_left(16 << 10);
  const auto second = pattern(32 << 10, 2);
  Status full = write(c, 1, oid(5), 64 << 10, second);
  CHECK(full.code() == Errc::no_space);
  CHECK(read(c, 1, oid(5), 0, 64 << 10).bytes == first);
  // The daemon stays up; once there is room again the write goes through.
  c.node(1).store->heal();
  REQUIRE(write(c, 1, oid(5), 64 << 10, second).ok());
  CHECK(read(c, 1, oid(5), 64 << 10, 32 << 10).bytes == second);
}

TEST_CASE("a failed home write over a redirected range keeps the redirect, so the acknowledged bytes stay found") {
  StorageCluster c(2);
  const auto remote = pattern(8192, 3);
  REQUIRE(write(c, 2, oid(9), 0, remote, /*fragment=*/77).ok());
  rpc::OutMessage r;
  redirect_request(r, oid(9), 0, remote.size(), 2, 77);
  REQUIRE(c.call(1, r).ok());

  c.node(1).store->fail(Op::write, Errc::io, 1);
  CHECK(write(c, 1, oid(9), 0, pattern(4096, 4)).code() == Errc::io);
  auto got = read(c, 1, oid(9), 0, 8192);
  REQUIRE(got.redirected.size() == 1);
  CHECK(got.redirected[0].offset == 0);
  CHECK(got.redirected[0].length == 8192);
  CHECK(got.redirected[0].server == 2);
  CHECK(got.redirected[0].fragment == 77);
}

TEST_CASE("a home write over a redirected range takes the range back once it is on disk") {
  StorageCluster c(2);
  REQUIRE(write(c, 2, oid(9), 0, pattern(8192, 3), 77).ok());
  rpc::OutMessage r;
  redirect_request(r, oid(9), 0, 8192, 2, 77);
  REQUIRE(c.call(1, r).ok());
  const auto mine = pattern(4096, 4);
  REQUIRE(write(c, 1, oid(9), 0, mine).ok());
  auto got = read(c, 1, oid(9), 0, 8192);
  CHECK(slice(got.bytes, 0, 4096) == mine);
  REQUIRE(got.redirected.size() == 1);
  CHECK(got.redirected[0].offset == 4096);
  CHECK(got.redirected[0].length == 4096);
}

TEST_CASE("two drops of one fragment racing on a slow disk both succeed and free it once") {
  StorageCluster c(2);
  REQUIRE(write(c, 2, oid(3), 0, pattern(4096, 5), 41).ok());
  REQUIRE(write(c, 2, oid(3), 0, pattern(1000, 6), 42).ok());
  c.node(2).fragments->stall(Op::remove);
  rpc::OutMessage d1, d2;
  drop_request(d1, oid(3), 41);
  drop_request(d2, oid(3), 41);
  auto first = c.send(2, d1);
  auto second = c.send(2, d2);
  // Both drops are on the disk at once: each found the fragment held
  // before either removed it.
  c.loop.run_until([&] { return c.node(2).fragments->stalled(Op::remove) == 2; });
  c.node(2).fragments->release(Op::remove);
  c.loop.run_until([&] { return first->has_value() && second->has_value(); });
  CHECK((*first)->ok());
  CHECK((*second)->ok());
  std::unique_ptr<rpc::InMessage> keep;
  auto s = sched(c, 2, keep);
  CHECK(s.getFragments() == 1);
  CHECK(s.getFragmentBytes() == 1000);
}

TEST_CASE("a store that dies mid-write fails the write, and after a restart every acknowledged write and redirect is there") {
  StorageCluster c(2);
  const auto a = pattern(12000, 11);
  REQUIRE(write(c, 1, oid(21), 0, a, 0, /*sync=*/true).ok());
  rpc::OutMessage r;
  redirect_request(r, oid(21), 65536, 4096, 2, 99);
  REQUIRE(c.call(1, r).ok());
  c.node(1).store->crash_at(Op::write);
  CHECK(write(c, 1, oid(21), 12000, pattern(5000, 12)).code() == Errc::io);
  // Still answering while its disk is gone.
  std::unique_ptr<rpc::InMessage> keep;
  CHECK(sched(c, 1, keep).getRedirectEntries() == 1);

  c.restart(1);
  auto got = read(c, 1, oid(21), 0, 12000);
  CHECK(got.bytes == a);
  auto far = read(c, 1, oid(21), 65536, 4096);
  REQUIRE(far.redirected.size() == 1);
  CHECK(far.redirected[0].server == 2);
  CHECK(far.redirected[0].fragment == 99);
}

TEST_CASE("loads learned from a client expire on the injected clock") {
  StorageCluster c(3);
  // A write that carries what the client saw of server 3.
  rpc::OutMessage m;
  write_request(m, oid(1), 0);
  auto seen = m.init_body<sp::Request>().getWrite().initSeen(1);
  seen[0].setServer(3);
  seen[0].setRequests(17);
  auto data = pattern(100, 1);
  REQUIRE(c.call(1, m, data).ok());
  auto probe = [&] {
    rpc::OutMessage p;
    p.init_body<sp::Request>().initProbe();
    auto reply = c.call(1, p);
    REQUIRE(reply.ok());
    auto others = (*reply)->body<sp::Reply>().getLoad().getOthers();
    return others.size() == 1 && others[0].getServer() == 3 && others[0].getRequests() == 17;
  };
  CHECK(probe());
  c.clock.advance(std::chrono::milliseconds(c.config.load_ttl_ms + 1));
  CHECK_FALSE(probe());
}

}  // namespace pvfs::test::storage_service_test
