// The storage server's I/O queue with QoS windows (server/io_queue.h and
// policy/qos/gate.h), in process: a real ObjectStore in a temporary
// directory, a real io_context and disk pool. A job outside the current
// window waits for its window; with the policy off, plans are ignored and
// every job is served as before. These tests assert order, not speed: the
// waits they allow are far longer than the work.
#include "server/io_queue.h"

#include <doctest/doctest.h>

#include <array>
#include <functional>

#include "tests/support/temp_dir.h"

namespace pvfs {
namespace {

using namespace std::chrono_literals;
using pvfs::test::TempDir;

struct Rig {
  TempDir dir{"io-queue-qos"};
  std::unique_ptr<ObjectStore> store;
  asio::io_context io;
  asio::thread_pool pool{1};
  std::unique_ptr<IoQueue> queue;
  std::array<std::byte, 4096> data{};

  explicit Rig(qos::QosPolicy policy) {
    auto s = ObjectStore::open(dir.path());
    REQUIRE(s.ok());
    store = std::move(*s);
    IoQueueOptions o;
    o.depth = 1;
    o.qos = policy;
    queue = std::make_unique<IoQueue>(io.get_executor(), pool, o, elevator::BandwidthTable::flat(100 << 20));
  }
  ~Rig() { pool.join(); }

  // Writes 4 KiB to object `ino` for `job`; sets `done` when it completes.
  void write(uint64_t ino, std::string job, bool& done) {
    asio::co_spawn(
        io,
        [this, ino, job = std::move(job), &done]() -> asio::awaitable<void> {
          IoQueue::Op op;
          op.store = store.get();
          op.key = ObjectId{InodeId(ino), 0};
          op.elevator_key = op.key;
          op.write = true;
          op.data = data;
          op.job = job;
          auto r = co_await queue->submit(op);
          CHECK(r.ok());
          done = true;
        },
        asio::detached);
  }

  // Runs the loop until `until` holds or `limit` passes; whether it held.
  bool run(const std::function<bool()>& until, std::chrono::milliseconds limit = 5000ms) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!until() && std::chrono::steady_clock::now() < end) {
      io.restart();
      io.run_for(10ms);
    }
    return until();
  }
};

qos::Plan only(std::string job, std::chrono::milliseconds length) {
  return qos::Plan{length, {{qos::WindowKind::dedicated, std::move(job), length}}, {}};
}

TEST_CASE("a job outside the current window waits until its window, then goes") {
  Rig rig(qos::QosPolicy::ushape);
  rig.queue->install_plan(only("b", 60'000ms), rig.queue->now());
  bool a = false, b = false;
  rig.write(1, "a", a);
  CHECK_FALSE(rig.run([&] { return a; }, 300ms));  // b's window: a waits
  rig.write(2, "b", b);
  CHECK(rig.run([&] { return b; }));
  CHECK_FALSE(a);
  CHECK(rig.queue->window().kind == qos::WindowGate::Current::Kind::dedicated);
  rig.queue->clear_plan();  // the window is gone: a goes at once
  CHECK(rig.run([&] { return a; }));
}

TEST_CASE("when the window ends the queue serves the jobs it held back without being asked") {
  Rig rig(qos::QosPolicy::average);
  // One period of 400 ms for b; after it no plan is in force: open.
  rig.queue->install_plan(only("b", 400ms), rig.queue->now());
  bool a = false;
  rig.write(1, "a", a);
  CHECK(rig.run([&] { return a; }));
  CHECK(rig.queue->window().kind == qos::WindowGate::Current::Kind::open);
}

TEST_CASE("with QoS off a plan is ignored and every job is served") {
  Rig rig(qos::QosPolicy::off);
  rig.queue->install_plan(only("b", 60'000ms), rig.queue->now());
  bool a = false;
  rig.write(1, "a", a);
  CHECK(rig.run([&] { return a; }));
  // Switching off at run time drops a plan already in force.
  Rig on(qos::QosPolicy::ushape);
  on.queue->install_plan(only("b", 60'000ms), on.queue->now());
  bool held = false;
  on.write(1, "a", held);
  CHECK_FALSE(on.run([&] { return held; }, 200ms));
  on.queue->set_qos_policy(qos::QosPolicy::off);
  CHECK(on.run([&] { return held; }));
}

TEST_CASE("qos policy names parse and print, and nothing else parses") {
  for (auto p : {qos::QosPolicy::off, qos::QosPolicy::average, qos::QosPolicy::ushape})
    CHECK(qos::parse_qos_policy(qos::qos_policy_name(p)) == p);
  CHECK_FALSE(qos::parse_qos_policy("fast"));
  CHECK_FALSE(qos::parse_qos_policy(""));
}

}  // namespace
}  // namespace pvfs
