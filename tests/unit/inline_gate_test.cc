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

TEST_CASE("sync writes, large operations and a zero bound never run inline") {
  InlineGate g = warmed(InlineOptions{}, 5us);
  CHECK_FALSE(g.should_inline(true, true, 4096));
  CHECK_FALSE(g.should_inline(true, false, (64 << 10) + 1));
  CHECK(g.should_inline(true, false, 64 << 10));
  InlineGate off = warmed(InlineOptions{0, 200us}, 5us);
  CHECK_FALSE(off.should_inline(true, false, 4096));
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

TEST_CASE("sync and large operations do not move the average") {
  InlineGate g = warmed(InlineOptions{}, 10us);
  g.observe(true, true, 4096, 50ms);       // fdatasync time says nothing about inline writes
  g.observe(true, false, 1 << 20, 50ms);  // nor does a 1 MiB write
  CHECK(g.should_inline(true, false, 4096));
  CHECK(g.average(true) == 10us);
}

TEST_CASE("a store slower than the bound never runs inline") {
  InlineGate g = warmed(InlineOptions{}, 300us, false);
  CHECK_FALSE(g.should_inline(false, false, 4096));
}

}  // namespace
}  // namespace pvfs::elevator
