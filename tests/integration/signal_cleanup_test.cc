// A test program stopped by a signal (meson's timeout, Ctrl-C) leaves no
// daemon, mount or network namespace behind (tests/support/signal_cleanup.h).
// The outer case runs this same program on the two inner ones, which start
// a mounted cluster and a network namespace and wait to be stopped; the
// inner cases are skipped unless asked for (doctest's --no-skip). The ANU
// benchmark (tests/bench/anu_bench, six daemons) stopped by a Ctrl-C
// leaves none behind either.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "tests/support/file_content.h"
#include "tests/support/netns_hosts.h"
#include "tests/support/signal_cleanup.h"
#include "tests/support/temp_dir.h"
#include "tests/support/test_cluster.h"

namespace pvfs::test::signal_cleanup_test {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr const char* kReportVar = "PVFS_SIGNAL_TEST_REPORT";

// What the inner case writes once it is up: its cluster's folder, its
// mount point, its namespaces' prefix (empty without netns).
struct Report {
  fs::path dir, mnt;
  std::string netns_prefix;
};

bool mounted(const fs::path& point) {
  std::ifstream info("/proc/self/mountinfo");
  for (std::string line; std::getline(info, line);)
    if (line.find(" " + point.string() + " ") != std::string::npos) return true;
  return false;
}

std::set<std::string> netns_named(const std::string& prefix) {
  std::set<std::string> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/run/netns", ec))
    if (entry.path().filename().string().rfind(prefix + "-", 0) == 0) found.insert(entry.path().filename());
  return found;
}

template <typename Predicate>
bool eventually(Predicate done, std::chrono::seconds limit) {
  const auto deadline = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

// Made in one case and kept for the next, as the posix tests share one
// cluster: doctest takes the signals over at each case's start, so this is
// what shows that the handler is put back.
std::optional<Hosts>& held_hosts() {
  static std::optional<Hosts> hosts;
  return hosts;
}
std::unique_ptr<TestCluster>& held_cluster() {
  static std::unique_ptr<TestCluster> cluster;
  return cluster;
}

TEST_CASE("held 1: a mounted cluster and a network namespace, kept after the case" * doctest::skip()) {
  const char* report = std::getenv(kReportVar);
  REQUIRE(report != nullptr);
  std::string prefix;
  if (can_run_netns()) {
    prefix = "pvfssig" + std::to_string(::getpid());
    TempDir logs("pvfs-signal-netns");
    const std::string problem = held_hosts().emplace().create(prefix, {{"a", 1}}, logs.path() / "netns.log");
    REQUIRE_MESSAGE(problem.empty(), problem);
  }
  held_cluster() = std::make_unique<TestCluster>(ClusterOptions{}, /*mount=*/true);
  const TestCluster& cluster = *held_cluster();
  std::ofstream(report) << cluster.dir().string() << "\n" << cluster.mnt().string() << "\n" << prefix << "\n";
}

TEST_CASE("held 2: waiting to be stopped" * doctest::skip()) {
  std::this_thread::sleep_for(120s);
  FAIL("not stopped within 120 s");
}

TEST_CASE("a test program stopped by SIGTERM kills its daemons, unmounts and deletes its namespaces") {
  if (skip_without_fuse()) return;
  TempDir scratch("pvfs-signal");
  const fs::path report_file = scratch.path() / "report";
  const fs::path output = scratch.path() / "inner.log";
  const std::string self = fs::read_symlink("/proc/self/exe");

  const pid_t inner = ::fork();
  REQUIRE(inner >= 0);
  if (inner == 0) {
    ::setenv(kReportVar, report_file.c_str(), 1);
    const int log = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log >= 0) {
      ::dup2(log, 1);
      ::dup2(log, 2);
    }
    ::execl(self.c_str(), self.c_str(), "--source-file=*/signal_cleanup_test.cc", "--no-skip=true",
            "--test-case=held *", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const bool up = eventually([&] { return fs::exists(report_file) && fs::file_size(report_file) > 0; }, 60s);
  if (!up) {
    ::kill(inner, SIGKILL);
    ::waitpid(inner, nullptr, 0);
    FAIL("the inner case did not come up:\n" << pvfs::test::read_text(output));
  }
  Report report;
  {
    std::ifstream in(report_file);
    std::string dir, mnt;
    std::getline(in, dir);
    std::getline(in, mnt);
    std::getline(in, report.netns_prefix);
    report.dir = dir;
    report.mnt = mnt;
  }
  const std::vector<pid_t> daemons = processes_mentioning(report.dir.string());
  CHECK(mounted(report.mnt));
  CHECK(daemons.size() >= 3);  // an MDS, a storage server, pvfsmount
  if (!report.netns_prefix.empty()) CHECK(netns_named(report.netns_prefix).size() == 2);

  REQUIRE(::kill(inner, SIGTERM) == 0);
  int status = 0;
  REQUIRE(::waitpid(inner, &status, 0) == inner);
  CHECK_MESSAGE(WIFSIGNALED(status), "the program should die of the signal, status " << status);
  if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == SIGTERM);

  CHECK_FALSE(mounted(report.mnt));
  CHECK(eventually([&] { return processes_mentioning(report.dir.string()).empty(); }, 10s));
  // process_alive (local_cluster.h): a zombie is not running, but one whose
  // threads are still exiting is.
  for (pid_t pid : daemons)
    CHECK_MESSAGE(eventually([&] { return !process_alive(pid); }, 5s), "process " << pid << " is still running");
  // Removed, unless the developer asked to keep test folders for their logs.
  if (!keep_test_dirs()) CHECK_FALSE(fs::exists(report.dir));
  if (!report.netns_prefix.empty()) CHECK(netns_named(report.netns_prefix).empty());

  // Whatever the inner program left when the checks above failed.
  undo_test_folder(report.dir);
  for (const auto& ns : netns_named(report.netns_prefix.empty() ? "-" : report.netns_prefix))
    shell("ip netns del " + ns + " 2>/dev/null");
}

TEST_CASE("the ANU benchmark stopped by SIGINT (a Ctrl-C) kills its six daemons and removes its folder") {
  const char* root = std::getenv("PVFS_BUILD_ROOT");
  REQUIRE_MESSAGE(root != nullptr, "PVFS_BUILD_ROOT is not set (meson sets it)");
  const std::string bench = (fs::path(root) / "tests/bench/anu_bench").string();
  REQUIRE_MESSAGE(::access(bench.c_str(), X_OK) == 0, bench << " is not built");
  TempDir scratch("pvfs-signal-anu");
  const fs::path output = scratch.path() / "bench.log";

  const pid_t run = ::fork();
  REQUIRE(run >= 0);
  if (run == 0) {
    const int log = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log >= 0) {
      ::dup2(log, 1);
      ::dup2(log, 2);
    }
    ::execl(bench.c_str(), bench.c_str(), "--policies", "hash", "--duration", "120", "--workdir",
            scratch.path().c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Its folder is scratch/pvfs-anu.PID: wait for five metadata servers and
  // a storage server started there.
  const std::string work = (scratch.path() / ("pvfs-anu." + std::to_string(run))).string();
  const bool up = eventually([&] { return processes_mentioning(work).size() >= 6; }, 60s);
  if (!up) {
    ::kill(run, SIGKILL);
    ::waitpid(run, nullptr, 0);
    undo_folder(work, true);
    FAIL("the benchmark's six daemons did not come up:\n" << pvfs::test::read_text(output));
  }
  const std::vector<pid_t> daemons = processes_mentioning(work);

  REQUIRE(::kill(run, SIGINT) == 0);
  int status = 0;
  REQUIRE(::waitpid(run, &status, 0) == run);
  CAPTURE(pvfs::test::read_text(output));
  CHECK_MESSAGE(WIFSIGNALED(status), "the benchmark should die of the signal, status " << status);
  if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == SIGINT);
  for (pid_t pid : daemons)
    CHECK_MESSAGE(eventually([&] { return !process_alive(pid); }, 10s), "process " << pid << " is still running");
  CHECK_FALSE(fs::exists(work));

  undo_folder(work, true);  // whatever the benchmark left when the checks above failed
}

}  // namespace pvfs::test::signal_cleanup_test
