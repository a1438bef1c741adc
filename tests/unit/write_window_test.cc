// Tests of fs/write_window.h: what a mount may acknowledge before the
// storage servers have it. The bytes in flight stay within the limit, two
// writes of the same bytes never travel together (the later one waits, so
// the last write wins), and a failure stays until fsync or close takes it.
#include <doctest/doctest.h>

#include "fs/write_window.h"

namespace pvfs {

constexpr uint64_t kMiB = uint64_t{1} << 20;

TEST_CASE("writes start until the limit of bytes in flight, and again as they finish") {
  WriteWindow w;
  const uint64_t limit = 4 * kMiB;
  for (uint64_t i = 0; i < 4; ++i) {
    REQUIRE(w.may_start(i * kMiB, kMiB, limit));
    w.start(i * kMiB, kMiB);
  }
  CHECK(w.bytes() == 4 * kMiB);
  CHECK(w.end() == 4 * kMiB);
  CHECK_FALSE(w.may_start(4 * kMiB, kMiB, limit));
  CHECK(w.may_start(4 * kMiB, 0, limit));  // nothing to carry
  w.finish(kMiB, kMiB, Status{});  // out of order: the servers answer as they please
  CHECK(w.may_start(4 * kMiB, kMiB, limit));
  CHECK(w.bytes() == 3 * kMiB);
  CHECK(w.end() == 4 * kMiB);
  w.finish(0, kMiB, Status{});
  w.finish(2 * kMiB, kMiB, Status{});
  w.finish(3 * kMiB, kMiB, Status{});
  CHECK(w.idle());
  CHECK(w.end() == 0);
  CHECK(w.error().ok());
}

TEST_CASE("a write larger than the limit starts alone, and nothing joins it") {
  WriteWindow w;
  CHECK(w.may_start(0, 8 * kMiB, 4 * kMiB));
  w.start(0, 8 * kMiB);
  CHECK_FALSE(w.may_start(8 * kMiB, 1, 4 * kMiB));
  w.finish(0, 8 * kMiB, Status{});
  CHECK(w.may_start(8 * kMiB, 1, 4 * kMiB));
}

TEST_CASE("a write waits while an earlier one of any of its bytes is in flight") {
  WriteWindow w;
  const uint64_t limit = 64 * kMiB;
  w.start(100, 50);  // [100, 150)
  CHECK_FALSE(w.may_start(100, 50, limit));
  CHECK_FALSE(w.may_start(149, 1, limit));
  CHECK_FALSE(w.may_start(0, 101, limit));
  CHECK(w.may_start(150, 10, limit));  // touching, not overlapping
  CHECK(w.may_start(0, 100, limit));
  w.finish(100, 50, Status{});
  CHECK(w.may_start(100, 50, limit));
}

TEST_CASE("the first failure is kept through later successes until it is taken, once") {
  WriteWindow w;
  w.start(0, 10);
  w.start(10, 10);
  w.start(20, 10);
  w.finish(10, 10, Status(Errc::no_space, "server 2 is full"));
  w.finish(0, 10, Status(Errc::io, "later"));
  w.finish(20, 10, Status{});
  CHECK(w.idle());
  REQUIRE_FALSE(w.error().ok());
  CHECK(w.error().code() == Errc::no_space);
  Status taken = w.take_error();
  CHECK(taken.code() == Errc::no_space);
  CHECK(w.error().ok());
  CHECK(w.take_error().ok());
}

}  // namespace pvfs
