// Unit tests of mds/group_commit.h: which sync covers which caller, and
// that callers arriving while a sync runs share the next one. Pure.
#include "mds/group_commit.h"

#include <doctest/doctest.h>

namespace pvfs::mds {
namespace {

TEST_CASE("a caller arriving while no sync runs starts one that covers it") {
  GroupCommit g;
  CHECK_FALSE(g.should_start());
  const uint64_t ticket = g.arrive();
  REQUIRE(g.should_start());
  g.start();
  CHECK_FALSE(g.done(ticket));
  g.finish();
  CHECK(g.done(ticket));
  CHECK_FALSE(g.should_start());
}

TEST_CASE("a caller arriving while a sync runs is not covered by it but by the next") {
  GroupCommit g;
  const uint64_t first = g.arrive();
  g.start();
  const uint64_t late = g.arrive();  // its commits may postdate the running sync's start
  CHECK_FALSE(g.should_start());      // one at a time
  g.finish();
  CHECK(g.done(first));
  CHECK_FALSE(g.done(late));
  REQUIRE(g.should_start());
  g.start();
  g.finish();
  CHECK(g.done(late));
}

TEST_CASE("callers arriving during one sync share a single next sync") {
  GroupCommit g;
  g.arrive();
  g.start();
  uint64_t tickets[5];
  for (auto& t : tickets) t = g.arrive();
  g.finish();
  REQUIRE(g.should_start());
  g.start();
  g.finish();
  for (auto t : tickets) CHECK(g.done(t));
  CHECK_FALSE(g.should_start());  // two syncs served six callers
}

TEST_CASE("callers arriving before a sync starts share it") {
  GroupCommit g;
  const uint64_t a = g.arrive();
  const uint64_t b = g.arrive();
  CHECK(a == b);
  g.start();
  g.finish();
  CHECK(g.done(a));
  CHECK(g.done(b));
}

}  // namespace
}  // namespace pvfs::mds
