// pvfs-ctl end to end: the real binary (path in $PVFS_CTL, set by meson)
// against a real local cluster, through a real FUSE mount for the layout and
// job commands. Each test starts its own cluster.
#include <sys/wait.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tests/support/test_cluster.h"

namespace {

namespace fs = std::filesystem;
using pvfs::test::TestCluster;

struct Outcome {
  int status = -1;
  std::string out, err;
};

// For CAPTURE: shown only when a check fails.
std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  return os << "exit " << o.status << "\n--- stdout\n" << o.out << "--- stderr\n" << o.err;
}

std::string quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string slurp(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string ctl_binary() {
  const char* path = std::getenv("PVFS_CTL");
  if (!path || !*path) FAIL("PVFS_CTL is not set: run this test through `meson test`");
  return path;
}

// Runs `pvfs-ctl ARGS` (with `env`, "NAME=value ...", in front) through the
// shell, capturing stdout and stderr in `scratch`.
Outcome ctl(const fs::path& scratch, const std::vector<std::string>& args, const std::string& env = {}) {
  std::string command = env.empty() ? "" : "env " + env + " ";
  command += quote(ctl_binary());
  for (const auto& a : args) command += " " + quote(a);
  command += " >" + quote((scratch / "ctl.out").string()) + " 2>" + quote((scratch / "ctl.err").string());
  Outcome o;
  int raw = std::system(command.c_str());
  o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  o.out = slurp(scratch / "ctl.out");
  o.err = slurp(scratch / "ctl.err");
  return o;
}

// The server ids of the object lines of getstripe's output for a file.
std::vector<std::string> object_servers(const std::string& getstripe_out) {
  std::istringstream in(getstripe_out);
  std::vector<std::string> servers;
  bool in_table = false;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::string index, server;
    words >> index >> server;
    if (index == "index") in_table = true;
    else if (in_table && !server.empty()) servers.push_back(server);
  }
  return servers;
}

bool skip_without_fuse() {
  if (pvfs::test::fuse_available()) return false;
  if (pvfs::test::fuse_required()) FAIL("/dev/fuse is missing, and CI=true requires FUSE tests to run");
  MESSAGE("skipping: /dev/fuse is not available");
  return true;
}

pvfs::ClusterOptions three_servers() {
  pvfs::ClusterOptions options;
  options.servers = 3;
  return options;
}

}  // namespace

TEST_CASE("setstripe -c 2 on a directory gives new files two distinct servers") {
  if (skip_without_fuse()) return;
  TestCluster cluster(three_servers(), true);
  const fs::path dir = cluster.mnt() / "two";
  fs::create_directory(dir);

  auto set = ctl(cluster.dir(), {"setstripe", "-c", "2", "-S", "64K", dir.string()});
  CAPTURE(set);
  REQUIRE(set.status == 0);
  CHECK(set.err.empty());

  auto policy = ctl(cluster.dir(), {"getstripe", dir.string()});
  CAPTURE(policy);
  REQUIRE(policy.status == 0);
  CHECK(policy.out.find("stripe_count:  2\n") != std::string::npos);
  CHECK(policy.out.find("stripe_size:   65536\n") != std::string::npos);
  CHECK(policy.out.find("servers:       any\n") != std::string::npos);

  { std::ofstream(dir / "file") << "x"; }
  auto file = ctl(cluster.dir(), {"getstripe", (dir / "file").string()});
  CAPTURE(file);
  REQUIRE(file.status == 0);
  CHECK(file.out.rfind((dir / "file").string() + "\n", 0) == 0);
  CHECK(file.out.find("stripe_count:  2\n") != std::string::npos);
  CHECK(file.out.find("stripe_size:   65536\n") != std::string::npos);
  auto servers = object_servers(file.out);
  REQUIRE(servers.size() == 2);
  CHECK(servers[0] != servers[1]);
}

TEST_CASE("setstripe with explicit servers and on a new path creates an empty file with them") {
  if (skip_without_fuse()) return;
  TestCluster cluster(three_servers(), true);
  const fs::path file = cluster.mnt() / "placed";
  auto set = ctl(cluster.dir(), {"setstripe", "-s", "2,0", file.string()});
  CAPTURE(set);
  REQUIRE(set.status == 0);
  CHECK(fs::is_regular_file(file));
  auto got = ctl(cluster.dir(), {"getstripe", file.string()});
  CAPTURE(got);
  REQUIRE(got.status == 0);
  CHECK(object_servers(got.out) == std::vector<std::string>{"2", "0"});
}

TEST_CASE("setstripe on a file that has data fails with one clear line") {
  if (skip_without_fuse()) return;
  TestCluster cluster(three_servers(), true);
  const fs::path file = cluster.mnt() / "full";
  { std::ofstream(file) << "some data"; }
  auto set = ctl(cluster.dir(), {"setstripe", "-c", "1", file.string()});
  CAPTURE(set);
  CHECK(set.status == 1);
  CHECK(set.out.empty());
  CHECK(set.err == "pvfs-ctl: setstripe " + file.string() +
                       ": Device or resource busy (the file is not empty)\n");
}

TEST_CASE("getstripe on a path outside pvfs says so in one line") {
  pvfs::test::TempDir elsewhere("pvfs-ctl");
  auto got = ctl(elsewhere.path(), {"getstripe", elsewhere.path().string()});
  CAPTURE(got);
  CHECK(got.status == 1);
  CHECK(got.err == "pvfs-ctl: getstripe " + elsewhere.path().string() +
                       ": not on a pvfs file system\n");
  auto missing = ctl(elsewhere.path(), {"getstripe", (elsewhere.path() / "nope").string()});
  CAPTURE(missing);
  CHECK(missing.status == 1);
  CHECK(missing.err.find("No such file or directory") != std::string::npos);
  auto usage = ctl(elsewhere.path(), {"setstripe", "-S", "4Q", "x"});
  CAPTURE(usage);
  CHECK(usage.status == 2);
  CHECK(usage.err.rfind("pvfs-ctl: ", 0) == 0);
}

TEST_CASE("jobs shows the bytes a job wrote through the mount") {
  if (skip_without_fuse()) return;
  TestCluster cluster(three_servers(), true);
  const fs::path file = cluster.mnt() / "by-job42";
  const std::string dd = "env PVFS_JOBID=job42 dd if=/dev/zero of=" + quote(file.string()) +
                         " bs=64k count=16 conv=fsync status=none";
  REQUIRE(std::system(dd.c_str()) == 0);

  auto jobs = ctl(cluster.dir(), {"jobs", "-c", cluster.cluster().config_path().string()});
  CAPTURE(jobs);
  REQUIRE(jobs.status == 0);
  CHECK(jobs.out.rfind("JOB", 0) == 0);
  std::istringstream lines(jobs.out);
  bool found = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("job42 ", 0) != 0) continue;
    found = true;
    // JOB OPS READ WRITTEN: 16 x 64 KiB written, nothing read.
    CHECK(line.size() >= std::string("1.0 MiB").size());
    CHECK(line.substr(line.size() - 7) == "1.0 MiB");
  }
  CHECK(found);

  auto per_daemon = ctl(cluster.dir(), {"jobs", "--per-daemon"},
                        "PVFS_CONFIG=" + quote(cluster.cluster().config_path().string()));
  CAPTURE(per_daemon);
  REQUIRE(per_daemon.status == 0);
  CHECK(per_daemon.out.find("mds0 (") != std::string::npos);
  CHECK(per_daemon.out.find("server2 (") != std::string::npos);
  CHECK(per_daemon.out.find("job42") != std::string::npos);
}

TEST_CASE("ping passes with every daemon up and names the one that was killed") {
  TestCluster cluster(three_servers());
  const std::string config = cluster.cluster().config_path().string();
  auto all_up = ctl(cluster.dir(), {"ping", "-c", config});
  CAPTURE(all_up);
  CHECK(all_up.status == 0);
  CHECK(all_up.err.empty());
  for (const char* name : {"mds0", "server0", "server1", "server2"})
    CHECK(all_up.out.find(name) != std::string::npos);
  // -c wins over PVFS_CONFIG.
  auto flag_first = ctl(cluster.dir(), {"ping", "-c", config}, "PVFS_CONFIG=/nonexistent.toml");
  CAPTURE(flag_first);
  CHECK(flag_first.status == 0);

  REQUIRE(cluster.cluster().kill_daemon("server1", SIGKILL).ok());
  auto one_down = ctl(cluster.dir(), {"ping"}, "PVFS_CONFIG=" + quote(config));
  CAPTURE(one_down);
  CHECK(one_down.status == 1);
  CHECK(one_down.err == "pvfs-ctl: ping: 1 of 4 daemons not ok: server1\n");
  std::istringstream lines(one_down.out);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("server1 ", 0) == 0) CHECK(line.find(" down ") != std::string::npos);
}

TEST_CASE("servers lists every storage server as alive with its space") {
  TestCluster cluster(three_servers());
  auto listed = ctl(cluster.dir(), {"servers", "-c", cluster.cluster().config_path().string()});
  CAPTURE(listed);
  REQUIRE(listed.status == 0);
  std::istringstream lines(listed.out);
  std::set<std::string> alive;
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string id, address, state;
    words >> id >> address >> state;
    if (state == "alive") alive.insert(id);
  }
  CHECK(alive == std::set<std::string>{"0", "1", "2"});
}
