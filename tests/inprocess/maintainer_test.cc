// In-process tests of server/maintainer: two storage servers on a memory
// network, the maintainer's rounds run one at a time by the test, a
// manual clock for the garbage grace, and a faulty store that holds a
// pull's disk write while client requests arrive (the interleavings
// around the pull's awaits).
#include <doctest/doctest.h>

#include "tests/inprocess/storage_cluster.h"

namespace pvfs::test::maintainer_test {
namespace {

using Op = FaultyObjectStore::Op;

Status write(StorageCluster& c, uint32_t server, ObjectId o, uint64_t offset, std::span<const std::byte> data,
             uint64_t fragment = 0) {
  rpc::OutMessage m;
  write_request(m, o, offset, fragment);
  return c.call(server, m, data).status();
}

ReadResult read(StorageCluster& c, uint32_t server, ObjectId o, uint64_t offset, uint32_t length) {
  rpc::OutMessage m;
  read_request(m, o, offset, length);
  auto reply = c.call(server, m);
  REQUIRE_MESSAGE(reply.ok(), reply.status().to_string());
  return read_result(**reply);
}

// Writes `data` as fragment `fragment` on server 2 and redirects
// [offset, offset + size) of `o` there on its home, server 1: what a
// client's two-choice write does.
void redirect_to_2(StorageCluster& c, ObjectId o, uint64_t offset, std::span<const std::byte> data,
                   uint64_t fragment) {
  REQUIRE(write(c, 2, o, offset, data, fragment).ok());
  rpc::OutMessage r;
  redirect_request(r, o, offset, data.size(), 2, fragment);
  REQUIRE(c.call(1, r).ok());
}

uint64_t held_fragments(StorageCluster& c, uint32_t server) {
  rpc::OutMessage m;
  sched_status_request(m);
  auto reply = c.call(server, m);
  REQUIRE(reply.ok());
  return (*reply)->body<sp::Reply>().getSchedStatus().getFragments();
}

std::vector<std::byte> slice(const std::vector<std::byte>& v, size_t from, size_t n) {
  return {v.begin() + static_cast<ptrdiff_t>(from), v.begin() + static_cast<ptrdiff_t>(from + n)};
}

}  // namespace

TEST_CASE("a pull brings redirected bytes home, and the fragment goes only after the grace on the clock") {
  StorageCluster c(2);
  const auto x = pattern(16384, 1);
  redirect_to_2(c, oid(7), 0, x, 501);
  CHECK(c.loop.run(c.node(1).maintainer->pull_round()) == 1);
  auto got = read(c, 1, oid(7), 0, 16384);
  CHECK(got.redirected.empty());
  CHECK(got.bytes == x);

  // Readers that got the old redirect may still read the fragment.
  c.loop.run(c.node(1).maintainer->collect_round());
  CHECK(held_fragments(c, 2) == 1);
  c.clock.advance(std::chrono::milliseconds(c.config.fragment_gc_grace_ms));
  c.loop.run(c.node(1).maintainer->collect_round());
  CHECK(held_fragments(c, 2) == 0);
}

TEST_CASE("a client write that arrives while a pull is copying waits for it and wins") {
  StorageCluster c(2);
  const auto old_bytes = pattern(8192, 2);
  redirect_to_2(c, oid(8), 0, old_bytes, 502);
  // The pull is waiting for the holder's read of the old bytes.
  c.node(2).fragments->stall(Op::read);
  auto pulled = c.loop.spawn(c.node(1).maintainer->pull_round());
  c.loop.run_until([&] { return c.node(2).fragments->stalled(Op::read) == 1; });
  // The pull holds the object: the client's write waits at its gate, or
  // the old bytes the pull is about to copy would land over it.
  const auto fresh = pattern(4096, 3);
  rpc::OutMessage m;
  write_request(m, oid(8), 0);
  auto written = c.send(1, m, fresh);
  c.loop.settle();
  CHECK_FALSE(written->has_value());
  c.node(2).fragments->release(Op::read);
  c.loop.run_until([&] { return pulled->has_value() && written->has_value(); });
  CHECK(**pulled == 1);
  REQUIRE((*written)->ok());
  auto got = read(c, 1, oid(8), 0, 8192);
  CHECK(got.redirected.empty());
  CHECK(slice(got.bytes, 0, 4096) == fresh);
  CHECK(slice(got.bytes, 4096, 4096) == slice(old_bytes, 4096, 4096));
}

TEST_CASE("a redirect made while a pull is on the disk is not erased by the pull") {
  StorageCluster c(2);
  const auto old_bytes = pattern(8192, 4);
  redirect_to_2(c, oid(9), 0, old_bytes, 503);
  c.node(1).store->stall(Op::write);
  auto pulled = c.loop.spawn(c.node(1).maintainer->pull_round());
  c.loop.run_until([&] { return c.node(1).store->stalled(Op::write) == 1; });
  // A newer two-choice write of the first 2 KiB goes to server 2 meanwhile.
  const auto newer = pattern(2048, 5);
  REQUIRE(write(c, 2, oid(9), 0, newer, 504).ok());
  rpc::OutMessage r;
  redirect_request(r, oid(9), 0, 2048, 2, 504);
  REQUIRE(c.call(1, r).ok());
  c.node(1).store->release(Op::write);
  c.loop.run_until([&] { return pulled->has_value(); });
  auto got = read(c, 1, oid(9), 0, 8192);
  REQUIRE(got.redirected.size() == 1);
  CHECK(got.redirected[0].offset == 0);
  CHECK(got.redirected[0].length == 2048);
  CHECK(got.redirected[0].fragment == 504);
  CHECK(slice(got.bytes, 2048, 6144) == slice(old_bytes, 2048, 6144));
}

TEST_CASE("a remove that arrives while a pull is on the disk waits for it and leaves nothing behind") {
  StorageCluster c(2);
  redirect_to_2(c, oid(10), 0, pattern(8192, 6), 505);
  c.node(1).store->stall(Op::write);
  auto pulled = c.loop.spawn(c.node(1).maintainer->pull_round());
  c.loop.run_until([&] { return c.node(1).store->stalled(Op::write) == 1; });
  rpc::OutMessage m;
  remove_request(m, oid(10));
  auto removed = c.send(1, m);
  c.loop.settle();
  CHECK_FALSE(removed->has_value());
  c.node(1).store->release(Op::write);
  c.loop.run_until([&] { return pulled->has_value() && removed->has_value(); });
  REQUIRE((*removed)->ok());
  auto got = read(c, 1, oid(10), 0, 8192);
  CHECK(got.bytes.empty());
  CHECK(got.redirected.empty());
  // And the fragment becomes garbage, dropped after the grace.
  c.clock.advance(std::chrono::milliseconds(c.config.fragment_gc_grace_ms));
  c.loop.run(c.node(1).maintainer->collect_round());
  CHECK(held_fragments(c, 2) == 0);
}

TEST_CASE("a pull from an unreachable server keeps the entry and its bytes stay found") {
  StorageCluster c(2);
  const auto x = pattern(4096, 7);
  redirect_to_2(c, oid(11), 0, x, 506);
  c.net.unlisten(StorageCluster::address(2));
  c.net.cut(StorageCluster::address(2));
  CHECK(c.loop.run(c.node(1).maintainer->pull_round()) == 0);
  auto got = read(c, 1, oid(11), 0, 4096);
  REQUIRE(got.redirected.size() == 1);
  CHECK(got.redirected[0].server == 2);
}

TEST_CASE("a pull cut off mid-copy keeps the entry, and the next round completes it") {
  StorageCluster c(2);
  const auto x = pattern(8192, 8);
  redirect_to_2(c, oid(12), 0, x, 507);
  // The holder's reply to the pull's read never comes: the link is cut
  // while it is held.
  c.node(2).fragments->stall(Op::read);
  auto pulled = c.loop.spawn(c.node(1).maintainer->pull_round());
  c.loop.run_until([&] { return c.node(2).fragments->stalled(Op::read) == 1; });
  c.net.cut(StorageCluster::address(2));
  c.node(2).fragments->release(Op::read);
  c.loop.run_until([&] { return pulled->has_value(); });
  CHECK(**pulled == 0);
  CHECK(read(c, 1, oid(12), 0, 8192).redirected.size() == 1);
  // The holder still counts its cut-off read until the disk pool finishes
  // it, and a busy holder is skipped; the daemon's next round comes an
  // interval later, by when it has.
  c.loop.run_until([&] { return c.node(2).service->idle(); });
  CHECK(c.loop.run(c.node(1).maintainer->pull_round()) == 1);
  auto got = read(c, 1, oid(12), 0, 8192);
  CHECK(got.redirected.empty());
  CHECK(got.bytes == x);
}

TEST_CASE("a home disk with no room keeps its entries readable, and pulls wait for room instead of reading "
          "the fragments every round") {
  StorageCluster c(2);
  const auto x = pattern(8192, 9);
  redirect_to_2(c, oid(13), 0, x, 508);
  c.node(1).store->space_left(0);
  CHECK(c.loop.run(c.node(1).maintainer->pull_round()) == 0);
  const uint64_t reads = c.node(2).fragments->calls(Op::read);
  CHECK(reads >= 1);
  auto got = read(c, 1, oid(13), 0, 8192);
  REQUIRE(got.redirected.size() == 1);
  CHECK(got.redirected[0].server == 2);

  // Rounds come every 100 ms: they leave the holder alone while the wait lasts.
  for (int i = 0; i < 5; ++i) CHECK(c.loop.run(c.node(1).maintainer->pull_round()) == 0);
  c.node(1).store->heal();
  CHECK(c.loop.run(c.node(1).maintainer->pull_round()) == 0);
  CHECK(c.node(2).fragments->calls(Op::read) == reads);

  // Room again, and the wait over: the pull completes.
  c.clock.advance(std::chrono::seconds(1));
  CHECK(c.loop.run(c.node(1).maintainer->pull_round()) == 1);
  got = read(c, 1, oid(13), 0, 8192);
  CHECK(got.redirected.empty());
  CHECK(got.bytes == x);
}

}  // namespace pvfs::test::maintainer_test
