// Fault suite: an overloaded daemon is slow, not failed. A metadata server
// that serves one request at a time (pvfs-mds --slowdown) is given more
// creates at once than it serves within the RPC timeout; a storage server
// slowed by pvfs-ctl inject is given more writes at once than it serves
// within it. What a user must see: every create and write returns success
// and reads back, because the busy daemon says so and the mount keeps
// waiting ([timeouts] busy_limit_ms, shared/rpc/connection.h); with
// busy_limit_ms = 0 the same load fails some of them with EIO (so the load
// does outlast the timeout); and a daemon paused (SIGSTOP) while calls wait
// still fails them a timeout after its last word, losing nothing that was
// acknowledged.
#include <fcntl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "tests/faults/ack_log.h"
#include "tests/support/run_tool.h"
#include "tests/support/test_cluster.h"

namespace busy_server_test {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using pvfs::test::AckLog;
using pvfs::test::TestCluster;

constexpr uint32_t kTimeoutMs = 400;

// One MDS serving one request at a time, 50 ms each: 24 creates at once
// (a LOOKUP and a CREATE each, in 24 directories, since the kernel takes
// creates in one directory one at a time) queue for over a second.
pvfs::ClusterOptions slow_mds(uint32_t busy_limit_ms) {
  pvfs::ClusterOptions o;
  o.servers = 1;
  o.mds = 1;
  o.rpc_timeout_ms = kTimeoutMs;
  o.rpc_busy_limit_ms = busy_limit_ms;
  o.mds_slowdown = {1.0};
  o.mds_service_us = 50000;
  return o;
}

// The mount's count of calls answered after their timeout had passed
// (busy_waits in user.pvfs.client_stats, pvfsmount(8)); -1 if unreadable.
long busy_waits(const fs::path& mnt) {
  std::string text(1 << 16, '\0');
  const ssize_t n = ::getxattr(mnt.c_str(), "user.pvfs.client_stats", text.data(), text.size());
  if (n < 0) return -1;
  text.resize(static_cast<size_t>(n));
  std::istringstream lines(text);
  std::string key;
  long value = 0;
  while (lines >> key >> value)
    if (key == "busy_waits") return value;
  return -1;
}

struct Burst {
  size_t ok = 0, failed = 0;
};

constexpr int kCreates = 24;

// Makes the directories create_burst() uses, under `root`.
void make_dirs(const fs::path& root) {
  for (int i = 0; i < kCreates; ++i) REQUIRE(fs::create_directory(root / ("d" + std::to_string(i))));
}

// kCreates threads each create one file at once, each in its own directory
// under `root`; what succeeded is logged in `log`. Each thread's outcome is
// awaited for at most `patience` (a hang is a failure, not a stuck test).
Burst create_burst(const fs::path& root, AckLog& log, std::chrono::seconds patience) {
  std::vector<std::future<bool>> done;
  for (int i = 0; i < kCreates; ++i)
    done.push_back(std::async(std::launch::async, [&log, file = root / ("d" + std::to_string(i)) / "f"] {
      const std::string content = AckLog::content_for(file.string());
      if (!pvfs::test::write_whole(file, content)) return false;
      log.acknowledged(file, content);
      return true;
    }));
  Burst b;
  const auto until = Clock::now() + patience;
  for (auto& f : done) {
    REQUIRE_MESSAGE(f.wait_until(until) == std::future_status::ready, "a create still hangs after "
                                                                          << patience.count() << " s");
    (f.get() ? b.ok : b.failed)++;
  }
  return b;
}

}  // namespace

TEST_CASE("creates queued at a metadata server for longer than the timeout all succeed") {
  if (pvfs::test::skip_without_fuse()) return;
  TestCluster t(slow_mds(300000), true);
  make_dirs(t.mnt());
  AckLog log;
  const auto began = Clock::now();
  const Burst b = create_burst(t.mnt(), log, 120s);
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - began);
  MESSAGE(kCreates << " creates at once took " << took.count() << " ms against a " << kTimeoutMs
                   << " ms timeout");
  CHECK(b.failed == 0);
  CHECK(b.ok == kCreates);
  const long waited = busy_waits(t.mnt());
  MESSAGE("calls kept waiting past the timeout: " << waited);
  CHECK(waited > 0);
  const auto tally = log.verify(30s);
  CHECK(tally.lost == 0);
  CAPTURE(tally.first_lost);
}

TEST_CASE("with busy_limit_ms = 0 the same creates fail with EIO past the timeout") {
  if (pvfs::test::skip_without_fuse()) return;
  TestCluster t(slow_mds(0), true);
  make_dirs(t.mnt());
  AckLog log;
  const Burst b = create_burst(t.mnt(), log, 120s);
  MESSAGE("without waiting while busy: " << b.ok << " created, " << b.failed << " failed");
  CHECK(b.failed > 0);
  CHECK(busy_waits(t.mnt()) == 0);
  const auto tally = log.verify(30s);
  CHECK(tally.lost == 0);
}

TEST_CASE("a metadata server paused while creates wait for it fails them a timeout later, losing none") {
  if (pvfs::test::skip_without_fuse()) return;
  TestCluster t(slow_mds(300000), true);
  make_dirs(t.mnt());
  AckLog log;
  Burst b;
  {
    auto burst = std::async(std::launch::async, [&] { return create_burst(t.mnt(), log, 60s); });
    std::this_thread::sleep_for(300ms);
    REQUIRE(t.cluster().kill_daemon("mds" + std::to_string(t.config().mds[0].id), SIGSTOP).ok());
    // Every create returns (most with EIO) long before the 300 s busy
    // limit: the paused server says nothing, so its last word ages out.
    const bool returned = burst.wait_for(60s) == std::future_status::ready;
    REQUIRE(t.cluster().kill_daemon("mds" + std::to_string(t.config().mds[0].id), SIGCONT).ok());
    REQUIRE_MESSAGE(returned, "creates still wait for a paused metadata server after 60 s");
    b = burst.get();
  }
  MESSAGE("during the pause: " << b.ok << " created, " << b.failed << " failed");
  CHECK(b.failed > 0);
  const auto tally = log.verify(30s);
  CHECK(tally.lost == 0);
  CAPTURE(tally.first_lost);
}

TEST_CASE("writes queued at a slowed storage server for longer than the timeout all succeed and read back") {
  if (pvfs::test::skip_without_fuse()) return;
  pvfs::ClusterOptions o;
  o.servers = 1;
  o.rpc_timeout_ms = kTimeoutMs;
  TestCluster t(o, true);
  // Each 1 MiB write holds the server for 120 times what it took to serve:
  // a hundred milliseconds or more each, one at a time. (At 60 times, 8
  // writes took 727 ms on a fast machine, short of the premise below; at
  // 120 times 1502-1640 ms there.)
  const auto inject = pvfs::test::run_tool(
      "PVFS_CTL", t.dir(),
      {"inject", std::to_string(t.config().servers[0].id), "-f", "120", "-c", t.cluster().config_path().string()});
  REQUIRE_MESSAGE(inject.status == 0, inject);
  constexpr int kWriters = 8;
  std::vector<std::string> contents(kWriters);
  for (int i = 0; i < kWriters; ++i) contents[i] = AckLog::content_for("w" + std::to_string(i), 1 << 20);
  for (auto& c : contents) c.resize(1 << 20);
  const auto began = Clock::now();
  std::vector<std::future<bool>> done;
  for (int i = 0; i < kWriters; ++i)
    done.push_back(std::async(std::launch::async, [&, i] {
      return pvfs::test::write_whole(t.mnt() / ("w" + std::to_string(i)), contents[i]);
    }));
  int ok = 0;
  for (auto& f : done) {
    REQUIRE(f.wait_for(300s) == std::future_status::ready);
    ok += f.get();
  }
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - began);
  MESSAGE(kWriters << " writes of 1 MiB at once took " << took.count() << " ms against a " << kTimeoutMs
                   << " ms timeout");
  // The premise: the queue outlasted the timeout, so some write waited past it.
  CHECK(took.count() > 2 * kTimeoutMs);
  CHECK(ok == kWriters);
  CHECK(busy_waits(t.mnt()) > 0);
  (void)pvfs::test::run_tool("PVFS_CTL", t.dir(),
                             {"inject", std::to_string(t.config().servers[0].id), "-f", "1", "-c",
                              t.cluster().config_path().string()});
  for (int i = 0; i < kWriters; ++i) CHECK(pvfs::test::read_file(t.mnt() / ("w" + std::to_string(i))) == contents[i]);
}

}  // namespace busy_server_test
