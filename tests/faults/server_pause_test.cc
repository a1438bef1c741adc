// Fault suite: a storage server paused (SIGSTOP) for longer than the
// clients' RPC timeout while they write files striped over every server,
// then resumed (SIGCONT). Writes to it fail or wait while it is stopped;
// what a user must see afterwards: every file whose writes and close
// returned success reads back with its content, and the resumed server
// stays up (peers re-send the same pull-back and garbage requests to it).
// Run twice: on a default mount, and with write-behind (pvfsmount(8)
// write_behind), where a write may have been answered before the pause
// made it fail: close must then say so, so the file is not acknowledged.
#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "tests/faults/ack_log.h"
#include "tests/support/test_cluster.h"

namespace server_pause_test {

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using pvfs::test::AckLog;
using pvfs::test::TestCluster;

constexpr int kWriters = 3;

}  // namespace

// The scenario on a mount with `mount_options`.
void writes_through_a_pause(const std::string& mount_options) {
  pvfs::ClusterOptions o;
  o.servers = 4;
  o.rpc_timeout_ms = 2000;
  o.stripe_size = 256 << 10;  // files of 0.3-1.3 MiB touch every server
  TestCluster t(o, true, mount_options);
  const fs::path mnt = t.mnt();
  AckLog log;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> failed{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w)
    writers.emplace_back([&, w] {
      for (uint64_t n = 0; !stop; ++n) {
        const fs::path file = mnt / ("w" + std::to_string(w) + "-" + std::to_string(n));
        const std::string content = AckLog::content_for(file.string(), (300 << 10) + (n % 5) * (250 << 10));
        if (pvfs::test::write_whole(file, content)) log.acknowledged(file, content);
        else ++failed;
      }
    });
  std::this_thread::sleep_for(1500ms);
  REQUIRE(t.cluster().kill_daemon("server1", SIGSTOP).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(2 * o.rpc_timeout_ms) + 2s);
  REQUIRE(t.cluster().kill_daemon("server1", SIGCONT).ok());
  std::this_thread::sleep_for(4s);
  stop = true;
  for (auto& th : writers) th.join();
  MESSAGE("writes that failed during the pause (not acknowledged): " << failed.load());

  const auto tally = log.verify(30s);
  MESSAGE("acknowledged " << tally.acknowledged << ", verified " << tally.verified << ", lost "
                          << tally.lost);
  CHECK(tally.acknowledged > 20);
  CHECK(tally.lost == 0);
  CAPTURE(tally.first_lost);
  // The resumed server is still up and serving.
  bool alive = false;
  for (const auto& d : t.cluster().daemons())
    if (d.name == "server1") alive = d.running;
  CHECK(alive);
  const fs::path after = mnt / "after-resume";
  const std::string content = AckLog::content_for(after.string(), 2 << 20);
  CHECK(pvfs::test::write_whole(after, content));
  CHECK(pvfs::test::read_file(after) == content);
}

TEST_CASE("every write acknowledged while a storage server was paused is readable after it resumes") {
  if (pvfs::test::skip_without_fuse()) return;
  writes_through_a_pause("");
}

TEST_CASE("with write-behind, every file whose close succeeded during a storage server's pause reads back") {
  if (pvfs::test::skip_without_fuse()) return;
  writes_through_a_pause("write_behind=4M");
}

}  // namespace server_pause_test
