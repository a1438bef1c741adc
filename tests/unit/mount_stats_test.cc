// The mount's counters (fs/mount_stats.h) as pvfs-ctl client reads them:
// what render() writes, parse_mount_stats() reads back, and text it did not
// write is refused naming the line.
#include <doctest/doctest.h>

#include <chrono>

#include "fs/mount_stats.h"

using namespace std::chrono_literals;

TEST_CASE("operations, bytes and counters survive render and parse") {
  pvfs::MountStats s;
  s.op("write", false, 100us);
  s.op("write", false, 300us);
  s.op("lookup", true, 10us);
  s.bytes_written = 4096;
  s.bytes_read = 7;
  s.mds_retries = 2;
  s.mds_redirects = 1;
  s.cache_hits = 5;
  s.busy_waits = 4;
  s.writes_behind = 9;
  s.behind_waits = 6;
  s.behind_failures = 1;
  auto view = pvfs::parse_mount_stats(s.render("pieces_home 3\n"));
  REQUIRE(view.ok());
  CHECK(view->counters.at("bytes_written") == 4096);
  CHECK(view->counters.at("bytes_read") == 7);
  CHECK(view->counters.at("mds_retries") == 2);
  CHECK(view->counters.at("mds_redirects") == 1);
  CHECK(view->counters.at("cache_hits") == 5);
  CHECK(view->counters.at("busy_waits") == 4);
  CHECK(view->counters.at("writes_behind") == 9);
  CHECK(view->counters.at("behind_waits") == 6);
  CHECK(view->counters.at("behind_failures") == 1);
  CHECK(view->counters.at("pieces_home") == 3);
  REQUIRE(view->ops.count("write") == 1);
  CHECK(view->ops.at("write").count == 2);
  CHECK(view->ops.at("write").errors == 0);
  CHECK(view->ops.at("write").sum_us == doctest::Approx(400));
  CHECK(view->ops.at("write").p99_us >= 300);
  CHECK(view->ops.at("lookup").errors == 1);
}

TEST_CASE("a live interval's percentiles are the interval's own, not the mount's since it started") {
  pvfs::MountStats s;
  for (int i = 0; i < 100; ++i) s.op("getattr", false, 1ms);
  auto before = pvfs::parse_mount_stats(s.render());
  for (int i = 0; i < 10; ++i) s.op("getattr", false, 10us);
  auto now = pvfs::parse_mount_stats(s.render());
  REQUIRE(before.ok());
  REQUIRE(now.ok());
  const auto& op = now->ops.at("getattr");
  CHECK(op.has_buckets);
  CHECK(op.p99_us >= 1000);  // since the mount started
  auto interval = pvfs::interval_percentiles(op, before->ops.at("getattr"));
  REQUIRE(interval.has_value());
  CHECK(interval->first >= 10);
  CHECK(interval->first <= 16);
  CHECK(interval->second <= 16);
  // An operation first seen in the interval: all of it is the interval's.
  auto fresh = pvfs::interval_percentiles(op, pvfs::MountStatsView::Op{});
  REQUIRE(fresh.has_value());
  CHECK(fresh->second >= 1000);
  // An older pvfsmount's text has no buckets: no interval figure to give.
  auto old = pvfs::parse_mount_stats("op getattr 110 0 100100 1024 1024\n");
  REQUIRE(old.ok());
  CHECK_FALSE(old->ops.at("getattr").has_buckets);
  CHECK_FALSE(pvfs::interval_percentiles(old->ops.at("getattr"), before->ops.at("getattr")).has_value());
}

TEST_CASE("a malformed operation line is refused naming it; unknown keys with words are skipped") {
  auto bad = pvfs::parse_mount_stats("bytes_read 1\nop write 1 x 0 0 0\n");
  REQUIRE(!bad.ok());
  CHECK(bad.status().detail().find("op write 1 x") != std::string::npos);
  CHECK_FALSE(pvfs::parse_mount_stats("op write 1 0 5 8 8 3:x\n").ok());
  CHECK_FALSE(pvfs::parse_mount_stats("op write 1 0 5 8 8 40:1\n").ok());  // no bucket 40
  CHECK_FALSE(pvfs::parse_mount_stats("op write 1 0 5 8 8 junk\n").ok());
  auto newer = pvfs::parse_mount_stats("policy preassign\nbytes_read 9\n");
  REQUIRE(newer.ok());
  CHECK(newer->counters.size() == 1);
}
