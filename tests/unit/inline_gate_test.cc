// Unit tests of policy/elevator/inline_gate: which disk operations a storage
// server may run on its network thread. Pure: service times are given.
#include "policy/elevator/inline_gate.h"

#include <doctest/doctest.h>

namespace pvfs::elevator {
namespace {

using namespace std::chrono_literals;

InlineGate warmed(InlineOptions o, std::chrono::nanoseconds each, bool write = true) {
  InlineGate g(o);
  for (uint32_t i = 0; i < InlineGate::kWarmup; ++i) g.observe(write, false, 4096, each);
  return g;
}

TEST_CASE("small non-sync operations run inline only once the store has proven fast") {
  InlineGate g(InlineOptions{});
  for (uint32_t i = 0; i + 1 < InlineGate::kWarmup; ++i) {
    CHECK_FALSE(g.should_inline(true, false, 4096));
    g.observe(true, false, 4096, 10us);
  }
  CHECK_FALSE(g.should_inline(true, false, 4096));
  g.observe(true, false, 4096, 10us);
  CHECK(g.should_inline(true, false, 4096));
  // Reads have their own record: fast writes prove nothing about them.
  CHECK_FALSE(g.should_inline(false, false, 4096));
}

TEST_CASE("sync writes, operations above the limit and a zero limit never run inline") {
  InlineGate g = warmed(InlineOptions{}, 5us);
  CHECK_FALSE(g.should_inline(true, true, 4096));
  CHECK_FALSE(g.should_inline(true, false, (1 << 20) + 1));
  CHECK(g.should_inline(true, false, 1 << 20));
  InlineGate small = warmed(InlineOptions{64 << 10, 200us}, 5us);
  CHECK_FALSE(small.should_inline(true, false, (64 << 10) + 1));
  CHECK(small.should_inline(true, false, 64 << 10));
  InlineGate off = warmed(InlineOptions{0, 200us}, 5us);
  CHECK_FALSE(off.should_inline(true, false, 4096));
}

TEST_CASE("a large operation's time counts per 64 KiB, a small one's whole") {
  // 1 MiB in 1.6 ms is 100 µs per 64 KiB: fast under a 200 µs bound.
  InlineGate large(InlineOptions{});
  for (uint32_t i = 0; i < InlineGate::kWarmup; ++i) large.observe(true, false, 1 << 20, 1600us);
  CHECK(large.average(true) == 100us);
  CHECK(large.should_inline(true, false, 1 << 20));
  // The same 1.6 ms for 4 KiB (or 64 KiB) is a slow store.
  InlineGate small(InlineOptions{});
  for (uint32_t i = 0; i < InlineGate::kWarmup; ++i) small.observe(true, false, 4096, 1600us);
  CHECK(small.average(true) == 1600us);
  CHECK_FALSE(small.should_inline(true, false, 1 << 20));
  CHECK_FALSE(small.should_inline(true, false, 4096));
  // 1 MiB in 4 ms (250 µs per 64 KiB) is slow too.
  InlineGate slow(InlineOptions{});
  for (uint32_t i = 0; i < InlineGate::kWarmup; ++i) slow.observe(false, false, 1 << 20, 4ms);
  CHECK_FALSE(slow.should_inline(false, false, 1 << 20));
}

TEST_CASE("a slow store sends operations back to the pool, and a recovered one brings them inline") {
  InlineGate g = warmed(InlineOptions{}, 10us);
  REQUIRE(g.should_inline(true, false, 4096));
  g.observe(true, false, 4096, 5ms);  // one stall on the device
  CHECK_FALSE(g.should_inline(true, false, 4096));
  CHECK(g.average(true) > 200us);
  int fast = 0;
  while (!g.should_inline(true, false, 4096) && fast < 100) {
    g.observe(true, false, 4096, 10us);  // measured on the pool meanwhile
    ++fast;
  }
  CHECK(fast > 5);    // not at once: a stall weighs for a while
  CHECK(fast < 100);  // but not forever
}

TEST_CASE("sync operations and those above the limit do not move the average") {
  InlineGate g = warmed(InlineOptions{}, 10us);
  g.observe(true, true, 4096, 50ms);             // fdatasync time says nothing about inline writes
  g.observe(true, false, (1 << 20) + 4096, 50ms);  // nor does a write too large to run inline
  CHECK(g.should_inline(true, false, 4096));
  CHECK(g.average(true) == 10us);
}

TEST_CASE("a store slower than the bound never runs inline") {
  InlineGate g = warmed(InlineOptions{}, 300us, false);
  CHECK_FALSE(g.should_inline(false, false, 4096));
}

}  // namespace
}  // namespace pvfs::elevator
