// pvfs-ctl health against real daemons (issue 20): what an operator sees
// when all is well, when a storage server is killed, when a metadata server
// is paused, when slowed servers hold writes up and when files are removed
// while a server is down; the exit status a monitoring script tests; the
// MDS's pvfs_mds_health gauge; pvfs-cluster status printing the same
// verdict. And pvfs-ctl client on a real mount.
#include <csignal>
#include <cstdio>
#include <chrono>
#include <string>
#include <thread>

#include <doctest/doctest.h>

#include "tests/support/run_tool.h"
#include "tests/support/test_cluster.h"

namespace health_test {

namespace {

using pvfs::test::Outcome;
using pvfs::test::run_tool;
using pvfs::test::TestCluster;

Outcome ctl(TestCluster& t, std::vector<std::string> args) {
  args.push_back("-c");
  args.push_back(t.cluster().config_path().string());
  return run_tool("PVFS_CTL", t.dir(), args);
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The MDS's own verdict as its metrics carry it, polled until it is
// `level` or 15 s passed (it sees a dead server after heartbeat_timeout_ms).
bool mds_gauge_becomes(TestCluster& t, const std::string& mds, int level) {
  const std::string want = "pvfs_mds_health{daemon=\"" + mds + "\"} " + std::to_string(level);
  for (int i = 0; i < 150; ++i) {
    const Outcome o = ctl(t, {"stats", mds, "--prometheus"});
    if (has(o.out, want)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

}  // namespace

TEST_CASE("a healthy cluster is HEALTH_OK with exit 0, as text, JSON, the status alias and the MDS gauge") {
  TestCluster t;
  Outcome o = ctl(t, {"health"});
  CAPTURE(o);
  CHECK(o.status == 0);
  CHECK(o.out == "HEALTH_OK\n");
  o = ctl(t, {"status", "--json"});
  CAPTURE(o);
  CHECK(o.status == 0);
  CHECK(has(o.out, "\"status\": \"HEALTH_OK\""));
  CHECK(has(o.out, "\"checks\": []"));
  CHECK(mds_gauge_becomes(t, "mds0", 0));
}

TEST_CASE("a storage server killed with SIGKILL makes HEALTH_ERR with exit 2, naming it") {
  TestCluster t;
  REQUIRE(t.cluster().kill_daemon("server2", SIGKILL).ok());
  Outcome o = ctl(t, {"health", "-t", "1000"});
  CAPTURE(o);
  CHECK(o.status == 2);
  CHECK(o.out.rfind("HEALTH_ERR\n", 0) == 0);
  CHECK(has(o.out, "ERR  DAEMON_DOWN: server2 ("));
  CHECK(!has(o.out, "server1"));
  o = ctl(t, {"health", "--json", "-t", "1000"});
  CAPTURE(o);
  CHECK(has(o.out, "\"check\": \"DAEMON_DOWN\""));
  CHECK(mds_gauge_becomes(t, "mds0", 2));

  // pvfs-cluster status ends with the same verdict and exit status.
  o = run_tool("PVFS_CLUSTER", t.dir(), {"status", "--dir", t.cluster().dir().string()});
  CAPTURE(o);
  CHECK(o.status == 2);
  CHECK(has(o.out, "\nHEALTH_ERR\n  ERR  DAEMON_DOWN: server2 ("));
}

TEST_CASE("a paused metadata server member is named in the health reasons") {
  pvfs::ClusterOptions options;
  options.mds = 3;
  TestCluster t(options);
  REQUIRE(t.cluster().kill_daemon("mds1", SIGSTOP).ok());
  const Outcome o = ctl(t, {"health", "-t", "1000"});
  REQUIRE(t.cluster().kill_daemon("mds1", SIGCONT).ok());
  CAPTURE(o);
  CHECK(o.status >= 1);
  CHECK(has(o.out, "DAEMON_DOWN: mds1 ("));
  CHECK(has(o.out, "no answer within the timeout"));
  CHECK(!has(o.out, "mds0 ("));
  CHECK(!has(o.out, "mds2 ("));
}

TEST_CASE("pvfs-ctl client shows the bytes written and read through a mount and its operations") {
  if (pvfs::test::skip_without_fuse()) return;
  TestCluster t({}, true);
  const std::string file = (t.mnt() / "data").string();
  constexpr size_t kBytes = 3 * 1024 * 1024 + 123;
  {
    std::string data(kBytes, 'x');
    std::FILE* f = std::fopen(file.c_str(), "wb");
    REQUIRE(f != nullptr);
    CHECK(std::fwrite(data.data(), 1, data.size(), f) == data.size());
    CHECK(std::fclose(f) == 0);
  }
  Outcome o = run_tool("PVFS_CTL", t.dir(), {"client", t.mnt().string(), "--json"});
  CAPTURE(o);
  REQUIRE(o.status == 0);
  CHECK(has(o.out, "\"bytes_written\": " + std::to_string(kBytes) + ","));
  CHECK(has(o.out, "\"write\": {\"count\": "));
  CHECK(has(o.out, "\"create\": {\"count\": 1,"));

  // Live: one interval in which another MiB is written; only it counts.
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::FILE* f = std::fopen((t.mnt() / "more").c_str(), "wb");
    if (!f) return;
    std::string data(1 << 20, 'y');
    (void)std::fwrite(data.data(), 1, data.size(), f);
    std::fclose(f);
  });
  o = run_tool("PVFS_CTL", t.dir(), {"client", t.mnt().string(), "-n", "1", "-d", "2", "--json"});
  writer.join();
  CAPTURE(o);
  REQUIRE(o.status == 0);
  CHECK(has(o.out, "\"interval_s\": "));
  CHECK(has(o.out, "\"bytes_written\": 1048576,"));
  CHECK(has(o.out, "\"create\": {\"count\": 1,"));

  o = run_tool("PVFS_CTL", t.dir(), {"client", t.mnt().string()});
  CAPTURE(o);
  CHECK(o.status == 0);
  CHECK(has(o.out, "OPERATION"));
  CHECK(has(o.out, "written 4.0 MiB"));

  o = run_tool("PVFS_CTL", t.dir(), {"client", t.dir().string()});
  CAPTURE(o);
  CHECK(o.status == 1);
  CHECK(has(o.err, "not on a pvfs file system"));
}

TEST_CASE("writes held up by a slowed server show as slow requests naming it") {
  if (pvfs::test::skip_without_fuse()) return;
  TestCluster t({}, true);
  // Every server a thousand times slower: a 1 MiB write holds each for seconds.
  for (const char* id : {"0", "1", "2", "3"})
    REQUIRE(ctl(t, {"inject", id, "-f", "1000", "--for", "60"}).status == 0);
  std::thread writer([&] {
    std::FILE* f = std::fopen((t.mnt() / "slow").c_str(), "wb");
    if (!f) return;
    std::string data(8 << 20, 's');
    (void)std::fwrite(data.data(), 1, data.size(), f);
    std::fclose(f);
  });
  Outcome o;
  for (int i = 0; i < 100 && !has(o.out, "SLOW_REQUESTS"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    o = ctl(t, {"health", "--slow-ms", "300"});
  }
  for (const char* id : {"0", "1", "2", "3"}) (void)ctl(t, {"inject", id, "-f", "1"});
  writer.join();
  CAPTURE(o);
  CHECK(o.status == 1);
  CHECK(has(o.out, "HEALTH_WARN\n"));
  CHECK(has(o.out, "WARN SLOW_REQUESTS: server"));
  CHECK(has(o.out, "request(s) in progress, the oldest for "));
  CHECK(ctl(t, {"health"}).status == 0);  // drained: the default 30 s is not reached
}

TEST_CASE("files removed while a server is down make a delete backlog") {
  if (pvfs::test::skip_without_fuse()) return;
  TestCluster t({}, true);
  for (int i = 0; i < 3; ++i) {
    std::FILE* f = std::fopen((t.mnt() / ("f" + std::to_string(i))).c_str(), "wb");
    REQUIRE(f != nullptr);
    std::string data(4 << 20, 'd');  // one stripe on every server
    CHECK(std::fwrite(data.data(), 1, data.size(), f) == data.size());
    CHECK(std::fclose(f) == 0);
  }
  REQUIRE(t.cluster().kill_daemon("server3", SIGKILL).ok());
  for (int i = 0; i < 3; ++i) CHECK(std::filesystem::remove(t.mnt() / ("f" + std::to_string(i))));
  const Outcome o = ctl(t, {"health", "--backlog", "3", "-t", "1000"});
  CAPTURE(o);
  CHECK(o.status == 2);
  CHECK(has(o.out, "ERR  DAEMON_DOWN: server3 ("));
  CHECK(has(o.out, "WARN DELETE_BACKLOG: delete backlog: 3 unlinked files"));
}

}  // namespace health_test
