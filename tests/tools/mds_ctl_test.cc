// pvfs-ctl mds end to end, and the MDS-cluster options of the local
// cluster: the real binary (path in $PVFS_CTL, set by meson) against real
// clusters of one and of three metadata servers, some started with
// --slowdown, one killed and restarted. No mount needed.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "tests/support/run_tool.h"
#include "tests/support/test_cluster.h"

namespace mds_ctl_test {

namespace {

namespace fs = std::filesystem;
using pvfs::test::Outcome;
using pvfs::test::slurp;
using pvfs::test::TestCluster;
using Clock = std::chrono::steady_clock;

Outcome ctl(const fs::path& scratch, const std::vector<std::string>& args) {
  return pvfs::test::run_tool("PVFS_CTL", scratch, args);
}

// The line of `pvfs-ctl mds --json` that describes member `name`.
std::string member_json(const std::string& json, const std::string& name) {
  const auto at = json.find("{\"id\": " + name.substr(3) + ", \"name\": \"" + name + "\"");
  if (at == std::string::npos) return {};
  return json.substr(at, json.find('\n', at) - at);
}

// Runs `pvfs-ctl mds --json` until `done(outcome)` or 15 s have passed;
// returns the last outcome.
template <typename Done>
Outcome mds_json_until(TestCluster& tc, Done done) {
  const auto deadline = Clock::now() + std::chrono::seconds(15);
  Outcome o;
  do {
    o = ctl(tc.dir(), {"mds", "--json", "-c", tc.cluster().config_path().string()});
    if (done(o)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  } while (Clock::now() < deadline);
  return o;
}

std::string cmdline_of(int pid) {
  std::string text = slurp(fs::path("/proc") / std::to_string(pid) / "cmdline");
  for (char& c : text)
    if (c == '\0') c = ' ';
  return text;
}

int pid_of(pvfs::LocalCluster& cluster, const std::string& name) {
  for (const auto& d : cluster.daemons())
    if (d.name == name) return d.running ? d.pid : 0;
  return 0;
}

}  // namespace

TEST_CASE("mds shows a lone metadata server that owns the whole map") {
  pvfs::ClusterOptions options;
  options.servers = 1;
  TestCluster tc(options);
  const Outcome o = ctl(tc.dir(), {"mds", "-c", tc.cluster().config_path().string()});
  CAPTURE(o);
  REQUIRE(o.status == 0);
  CHECK(o.err.empty());
  CHECK(o.out.rfind("MDS cluster: 1 member(s), delegate mds0, placement anu, map version ", 0) == 0);
  CHECK(o.out.find("; as mds0 sees it\n") != std::string::npos);
  CHECK(o.out.find("\nmds0  127.0.0.1:") != std::string::npos);
  CHECK(o.out.find("  up  ") != std::string::npos);
  CHECK(o.out.find("1.000  [") != std::string::npos);  // the whole mapped half
  CHECK(o.out.find("\nMoves: none\n") != std::string::npos);
}

TEST_CASE("mds shows each member's slowdown, a killed member as down, and the slowdown again after a restart") {
  pvfs::ClusterOptions options;
  options.servers = 1;
  options.mds = 3;
  options.mds_slowdown = {1, 3, 5};
  options.mds_tune_interval_ms = 1000;
  TestCluster tc(options);
  const std::string config = tc.cluster().config_path().string();
  CHECK(slurp(tc.cluster().config_path()).find("tune_interval_ms = 1000") != std::string::npos);

  Outcome o = mds_json_until(tc, [](const Outcome& o) {
    return o.status == 0 && member_json(o.out, "mds2").find("\"state\": \"up\"") != std::string::npos;
  });
  CAPTURE(o);
  REQUIRE(o.status == 0);
  CHECK(member_json(o.out, "mds0").find("\"slowdown\": 1,") != std::string::npos);
  CHECK(member_json(o.out, "mds1").find("\"slowdown\": 3,") != std::string::npos);
  CHECK(member_json(o.out, "mds2").find("\"slowdown\": 5,") != std::string::npos);
  CHECK(cmdline_of(pid_of(tc.cluster(), "mds1")).find(" --slowdown 3") != std::string::npos);

  REQUIRE(tc.cluster().kill_daemon("mds2", SIGKILL).ok());
  o = ctl(tc.dir(), {"mds", "-c", config});
  CAPTURE(o);
  CHECK(o.status == 1);
  CHECK(o.err.find("pvfs-ctl: mds: mds2 (127.0.0.1:") != std::string::npos);
  CHECK(o.out.find("\nmds2  127.0.0.1:") != std::string::npos);
  CHECK(o.out.find("  down  ") != std::string::npos);
  CHECK(o.out.find("\nmds1  ") != std::string::npos);

  // A restart gives it its --slowdown again, from run/mds2.args.
  REQUIRE(tc.cluster().restart_daemon("mds2").ok());
  CHECK(cmdline_of(pid_of(tc.cluster(), "mds2")).find(" --slowdown 5") != std::string::npos);
  o = mds_json_until(tc, [](const Outcome& o) {
    return o.status == 0 && member_json(o.out, "mds2").find("\"state\": \"up\"") != std::string::npos;
  });
  CAPTURE(o);
  CHECK(o.status == 0);
  CHECK(member_json(o.out, "mds2").find("\"slowdown\": 5,") != std::string::npos);
}

TEST_CASE("a local cluster refuses a slowdown list that does not match its metadata servers") {
  pvfs::test::TempDir dir;
  pvfs::ClusterOptions options;
  options.dir = dir.path() / "cluster";
  options.mds = 2;
  options.mds_slowdown = {1, 3, 5};
  auto cluster = pvfs::LocalCluster::up(options);
  CHECK(cluster.code() == pvfs::Errc::invalid_argument);
  CHECK(cluster.status().detail() == "--mds-slowdown gives 3 factor(s) for 2 metadata server(s)");
  CHECK_FALSE(fs::exists(options.dir / "pvfs.toml"));
  options.mds_slowdown = {1, 0.5};
  CHECK(pvfs::LocalCluster::up(options).status().detail() == "--mds-slowdown factor 0.5 is not in [1, 1000]");
  options.mds_slowdown = {};
  options.mds_placement = "random";
  CHECK(pvfs::LocalCluster::up(options).status().detail() ==
        "unknown MDS placement 'random': use anu, hash or round-robin");
}

}  // namespace mds_ctl_test
