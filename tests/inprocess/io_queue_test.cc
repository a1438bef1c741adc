// In-process tests of server/io_queue: the real queue and elevator over a
// faulty store on the disk pool, a manual clock for deadlines. A stalled
// read on another object keeps the disk busy (depth 1) while requests
// queue up, so what is merged and in which order is decided by the test,
// not by timing.
#include <doctest/doctest.h>

#include "server/disk_object_store.h"
#include "server/io_queue.h"
#include "shared/clock.h"
#include "tests/inprocess/loop.h"
#include "tests/support/faulty_object_store.h"
#include "tests/support/temp_dir.h"

namespace pvfs::test::io_queue_test {
namespace {

using Op = FaultyObjectStore::Op;

ObjectId oid(uint64_t ino) { return ObjectId{InodeId(ino), 0}; }

std::vector<std::byte> bytes(size_t n, uint8_t seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>(seed + i * 7);
  return v;
}

struct Fixture {
  explicit Fixture(unsigned depth = 1) {
    auto d = DiskObjectStore::open(dir.path());
    REQUIRE(d.ok());
    disk = std::move(*d);
    store = std::make_unique<FaultyObjectStore>(*disk);
    IoQueueOptions o;
    o.depth = depth;
    o.inline_ops.max_bytes = 0;  // everything on the pool, where a stall cannot block the test
    queue = std::make_unique<IoQueue>(loop.io.get_executor(), pool, o, elevator::BandwidthTable::flat(1 << 30),
                                      clock);
  }
  ~Fixture() {
    store->heal();
    loop.settle();
    pool.join();
  }
  IoQueue::Op op(ObjectId o, uint64_t offset) {
    IoQueue::Op x;
    x.store = store.get();
    x.key = x.elevator_key = o;
    x.offset = offset;
    return x;
  }
  // Occupies the one disk slot with a read of another object until release().
  std::shared_ptr<std::optional<Result<size_t>>> block_disk() {
    store->stall(Op::read);
    auto x = op(oid(999), 0);
    x.out = std::span<std::byte>(scratch);
    auto slot = loop.spawn(queue->submit(x));
    loop.run_until([&] { return store->stalled(Op::read) == 1; });
    return slot;
  }

  TempDir dir;
  Loop loop;
  ManualClock clock;
  asio::thread_pool pool{2};
  std::unique_ptr<DiskObjectStore> disk;
  std::unique_ptr<FaultyObjectStore> store;
  std::unique_ptr<IoQueue> queue;
  std::vector<std::byte> scratch = std::vector<std::byte>(512);
};

}  // namespace

TEST_CASE("adjacent writes merged into one disk write all fail when it fails") {
  Fixture f;
  const auto a = bytes(4096, 1), b = bytes(4096, 2);
  auto blocker = f.block_disk();
  auto w1 = f.op(oid(1), 0);
  w1.write = true;
  w1.data = a;
  auto w2 = f.op(oid(1), 4096);
  w2.write = true;
  w2.data = b;
  auto first = f.loop.spawn(f.queue->submit(w1));
  auto second = f.loop.spawn(f.queue->submit(w2));
  f.loop.settle();
  f.store->fail(Op::write, Errc::io, 1);  // one failure: the merged write's
  f.store->release(Op::read);
  f.loop.run_until([&] { return first->has_value() && second->has_value(); });
  CHECK((*first)->status().code() == Errc::io);
  CHECK((*second)->status().code() == Errc::io);
  CHECK(f.store->calls(Op::write) == 0);
}

TEST_CASE("a merged read hands each request its own bytes, short at the object's end") {
  Fixture f;
  const auto data = bytes(6000, 3);
  REQUIRE(f.disk->write(oid(2), 0, data, false).ok());
  auto blocker = f.block_disk();
  std::vector<std::byte> out1(4096), out2(4096);
  auto r1 = f.op(oid(2), 0);
  r1.out = out1;
  auto r2 = f.op(oid(2), 4096);
  r2.out = out2;
  auto first = f.loop.spawn(f.queue->submit(r1));
  auto second = f.loop.spawn(f.queue->submit(r2));
  f.loop.settle();
  f.store->release(Op::read);
  f.loop.run_until([&] { return first->has_value() && second->has_value(); });
  REQUIRE((*first)->ok());
  REQUIRE((*second)->ok());
  CHECK(***first == 4096);
  CHECK(***second == 6000 - 4096);
  CHECK(std::equal(out1.begin(), out1.end(), data.begin()));
  CHECK(std::equal(out2.begin(), out2.begin() + (6000 - 4096), data.begin() + 4096));
  // One disk read for both (and the blocker's).
  CHECK(f.queue->stats().dispatches == 2);
}

TEST_CASE("queued requests expire their dynamic deadlines on the injected clock, not on the machine's") {
  Fixture f;
  auto run_reads = [&](bool advance) {
    auto blocker = f.block_disk();
    std::vector<std::vector<std::byte>> outs(4, std::vector<std::byte>(4096));
    std::vector<std::shared_ptr<std::optional<Result<size_t>>>> reads;
    for (uint64_t i = 0; i < 4; ++i) {
      auto r = f.op(oid(10 + i), 0);
      r.out = outs[i];
      reads.push_back(f.loop.spawn(f.queue->submit(r)));
    }
    f.loop.settle();
    if (advance) f.clock.advance(std::chrono::hours(1));
    f.store->release(Op::read);
    f.loop.run_until([&] {
      for (auto& r : reads)
        if (!r->has_value()) return false;
      return blocker->has_value();
    });
  };
  // However long the machine took, the clock did not move: nothing expired.
  run_reads(false);
  CHECK(f.queue->stats().dynamic_expiries == 0);
  run_reads(true);
  CHECK(f.queue->stats().dynamic_expiries > 0);
}

TEST_CASE("a read of a range whose write is on the disk waits for it and sees the new bytes") {
  Fixture f(/*depth=*/2);  // room on the disk for the read beside the write
  const auto old_bytes = bytes(4096, 4), new_bytes = bytes(4096, 5);
  REQUIRE(f.disk->write(oid(3), 0, old_bytes, false).ok());
  f.store->stall(Op::write);
  auto w = f.op(oid(3), 0);
  w.write = true;
  w.data = new_bytes;
  auto written = f.loop.spawn(f.queue->submit(w));
  f.loop.run_until([&] { return f.store->stalled(Op::write) == 1; });
  std::vector<std::byte> out(4096);
  auto r = f.op(oid(3), 0);
  r.out = out;
  auto read = f.loop.spawn(f.queue->submit(r));
  f.loop.settle();
  CHECK_FALSE(read->has_value());
  f.store->release(Op::write);
  f.loop.run_until([&] { return written->has_value() && read->has_value(); });
  REQUIRE((*read)->ok());
  CHECK(out == new_bytes);
}

}  // namespace pvfs::test::io_queue_test
