// The health verdict (policy/health): which inputs make HEALTH_WARN or
// HEALTH_ERR, and that each reason names what it is about.
#include <doctest/doctest.h>

#include <string>

#include "policy/health/health.h"

namespace {

using namespace pvfs::health;

Daemon up(std::string name, bool mds) {
  Daemon d;
  d.name = std::move(name);
  d.address = "127.0.0.1:7000";
  d.is_mds = mds;
  d.reachable = true;
  d.clock_offset_ms = 0;
  return d;
}

Inputs healthy() {
  Inputs in;
  in.daemons = {up("mds0", true), up("mds1", true), up("server0", false), up("server1", false)};
  in.space = {{"server0", 100, 50}, {"server1", 100, 80}};
  in.delete_backlog = 3;
  return in;
}

bool names(const Verdict& v, const std::string& check, const std::string& word) {
  for (const auto& r : v.reasons)
    if (r.check == check && r.text.find(word) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("a cluster with every daemon up, room and no backlog is HEALTH_OK with no reasons") {
  const Verdict v = judge(healthy(), Thresholds{});
  CHECK(v.level == Level::ok);
  CHECK(v.reasons.empty());
  CHECK(render(v) == "HEALTH_OK\n");
}

TEST_CASE("a storage server down is an error naming it") {
  Inputs in = healthy();
  in.daemons[3].reachable = false;
  in.daemons[3].why = "timeout";
  const Verdict v = judge(in, Thresholds{});
  CHECK(v.level == Level::err);
  REQUIRE(v.reasons.size() == 1);
  CHECK(names(v, "DAEMON_DOWN", "server1"));
  CHECK(names(v, "DAEMON_DOWN", "timeout"));
}

TEST_CASE("a metadata server down warns while another answers and is an error when none does") {
  Inputs in = healthy();
  in.daemons[1].reachable = false;
  Verdict v = judge(in, Thresholds{});
  CHECK(v.level == Level::warn);
  CHECK(names(v, "DAEMON_DOWN", "mds1"));
  in.daemons[0].reachable = false;
  v = judge(in, Thresholds{});
  CHECK(v.level == Level::err);
  CHECK(v.reasons.size() == 2);
}

TEST_CASE("a server warns from 90% full and is an error from 97%") {
  Inputs in = healthy();
  in.space[0] = {"server0", 1000, 101};  // 89.9%
  CHECK(judge(in, Thresholds{}).level == Level::ok);
  in.space[0].free_bytes = 100;  // 90%
  Verdict v = judge(in, Thresholds{});
  CHECK(v.level == Level::warn);
  CHECK(names(v, "SERVER_FULL", "server0 90% full"));
  in.space[0].free_bytes = 30;  // 97%
  v = judge(in, Thresholds{});
  CHECK(v.level == Level::err);
  CHECK(names(v, "SERVER_FULL", "server0 97% full"));
  in.space[0] = {"server0", 0, 0};  // not reported yet: no division by zero, no reason
  CHECK(judge(in, Thresholds{}).level == Level::ok);
}

TEST_CASE("a request in progress past the threshold warns, naming the daemon and the age") {
  Inputs in = healthy();
  in.daemons[2].in_progress = 4;
  in.daemons[2].oldest_request_ms = 29999;
  CHECK(judge(in, Thresholds{}).level == Level::ok);
  in.daemons[2].oldest_request_ms = 45000;
  const Verdict v = judge(in, Thresholds{});
  CHECK(v.level == Level::warn);
  CHECK(names(v, "SLOW_REQUESTS", "server0: 4 request(s) in progress, the oldest for 45 s"));
}

TEST_CASE("a delete backlog at the threshold warns; an unknown one says nothing") {
  Inputs in = healthy();
  Thresholds limits;
  limits.delete_backlog_files = 500;
  in.delete_backlog = 499;
  CHECK(judge(in, limits).level == Level::ok);
  in.delete_backlog = 500;
  CHECK(names(judge(in, limits), "DELETE_BACKLOG", "500 unlinked files"));
  in.delete_backlog.reset();
  CHECK(judge(in, limits).level == Level::ok);
}

TEST_CASE("a metadata server under its disk reserve is an error, within twice it a warning; no reserve, nothing") {
  Inputs in = healthy();
  const uint64_t mib = 1 << 20;
  in.mds_space = {{"mds0", 128 * mib, 64 * mib}};
  CHECK(judge(in, Thresholds{}).level == Level::ok);
  in.mds_space[0].free_bytes = 100 * mib;
  auto v = judge(in, Thresholds{});
  CHECK(v.level == Level::warn);
  CHECK(names(v, "MDS_FULL", "mds0: 100.0 MiB free on its data disk, within twice the reserve of 64.0 MiB"));
  in.mds_space[0].free_bytes = 10 * mib;
  v = judge(in, Thresholds{});
  CHECK(v.level == Level::err);
  CHECK(names(v, "MDS_FULL", "under the reserve of 64.0 MiB (new files and directories fail with ENOSPC"));
  in.mds_space[0].reserve_bytes = 0;
  CHECK(judge(in, Thresholds{}).level == Level::ok);
}

TEST_CASE("a fenced member warns and a file set nobody serves is an error, errors listed first") {
  Inputs in = healthy();
  in.fenced = {"mds1"};
  in.unserved = {{3, "mds1"}};
  const Verdict v = judge(in, Thresholds{});
  CHECK(v.level == Level::err);
  REQUIRE(v.reasons.size() == 2);
  CHECK(v.reasons[0].check == "FILESET_UNSERVED");
  CHECK(v.reasons[0].text.find("file set 3") != std::string::npos);
  CHECK(v.reasons[0].text.find("mds1") != std::string::npos);
  CHECK(v.reasons[1].check == "MDS_FENCED");
  const std::string text = render(v);
  CHECK(text.rfind("HEALTH_ERR\n  ERR  FILESET_UNSERVED: file set 3", 0) == 0);
}

TEST_CASE("clock skew counts only what the round trips cannot explain") {
  Inputs in = healthy();
  in.daemons[3].clock_offset_ms = 1500;
  in.daemons[3].offset_error_ms = 600;  // 1500 - 600 = 900: could be measurement
  CHECK(judge(in, Thresholds{}).level == Level::ok);
  in.daemons[3].offset_error_ms = 2;
  in.daemons[0].clock_offset_ms = -300;
  const Verdict v = judge(in, Thresholds{});
  CHECK(v.level == Level::warn);
  REQUIRE(v.reasons.size() == 1);
  CHECK(names(v, "CLOCK_SKEW", "server1 is 1.8 s ahead of mds0"));
  in.daemons[3].reachable = false;  // a down daemon's offset is not used
  in.daemons[3].why = "refused";
  CHECK(!names(judge(in, Thresholds{}), "CLOCK_SKEW", "server1"));
}
