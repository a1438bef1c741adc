// Fault suite: a metadata server that dies or pauses while a file set is
// being shipped to it. New file sets are made on the member holding the
// root and shipped to the member the map gives them to; when that member
// stops answering after the last chunk went out, the sender cannot know
// whether it installed the set, and must not serve its own copy blindly.
// What a user must see: once the member is declared failed, every such
// file set is served again within seconds (by its installed copy, or by
// the sender's if it never arrived), files made in it are kept, and the
// member coming back does not bring a stale copy with it.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "tests/faults/mds_storm.h"
#include "tests/support/file_content.h"
#include "tests/support/run_tool.h"
#include "tests/support/test_cluster.h"

namespace mds_ship_test {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using pvfs::test::read_file;
using pvfs::test::TestCluster;

constexpr int kSets = 18;

pvfs::ClusterOptions three_members() {
  pvfs::ClusterOptions o;
  o.mds = 3;
  o.servers = 2;
  o.fileset_per_top_directory = true;
  o.mds_dead_after_ms = 3000;
  o.mds_tune_interval_ms = 60000;  // no tuning moves: only new file sets ship
  o.rpc_timeout_ms = 2000;
  return o;
}

bool write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  return out.good();
}

// The member to stop: not the delegate (the lowest id) and not the one
// holding the root, so that new file sets are made and shipped elsewhere.
size_t pick_victim(TestCluster& t) {
  // A fresh cluster makes its root once every member has answered; `up`
  // returns only after that, so the first write works at once.
  const fs::path ready = t.mnt() / "ready";
  REQUIRE(write_file(ready, "ready"));
  REQUIRE(read_file(ready) == "ready");
  for (size_t i = t.config().mds.size(); i-- > 1;)
    if (!fs::exists(t.config().mds[i].data_dir / "fileset-0")) return i;
  FAIL("no member other than the delegate is free of the root");
  return 0;
}

// Stops `victim` with SIGSTOP, makes kSets new file sets (about a third of
// which are shipped to it and stall), then applies `then` to it, and checks
// that a file can be made and read back in every set within 20 s of the
// member being declared failed.
std::map<fs::path, std::string> ship_to_stopped_member(TestCluster& t, size_t victim, int then) {
  const fs::path mnt = t.mnt();
  const std::string name = "mds" + std::to_string(t.config().mds[victim].id);
  REQUIRE(t.cluster().kill_daemon(name, SIGSTOP).ok());
  // A mkdir may wait for its set's ship, and fail (unacknowledged) if
  // that outlasts the RPC timeout: it is made again below.
  std::vector<std::thread> makers;
  for (int i = 0; i < kSets; ++i)
    makers.emplace_back([&mnt, i] {
      std::error_code ec;
      fs::create_directory(mnt / ("set" + std::to_string(i)), ec);
    });
  for (auto& m : makers) m.join();
  std::this_thread::sleep_for(1s);
  REQUIRE(t.cluster().kill_daemon(name, then).ok());
  const auto declared = Clock::now() + std::chrono::milliseconds(t.config().mds_dead_after_ms);

  std::map<fs::path, std::string> written;
  for (int i = 0; i < kSets; ++i) {
    const fs::path file = mnt / ("set" + std::to_string(i)) / "after";
    bool ok = false;
    while (!ok && Clock::now() < declared + 20s) {
      std::error_code ec;
      fs::create_directory(file.parent_path(), ec);
      ok = write_file(file, file.string()) && read_file(file) == file.string();
      if (!ok) std::this_thread::sleep_for(200ms);
    }
    CAPTURE(file);
    CHECK(ok);
    if (ok) written[file] = file.string();
  }
  return written;
}

void check_intact(const std::map<fs::path, std::string>& written) {
  size_t intact = 0;
  for (const auto& [file, text] : written)
    if (read_file(file) == text) ++intact;
  CHECK(intact == written.size());
  CHECK(written.size() == static_cast<size_t>(kSets));
}

void check_fsck_clean(TestCluster& t) {
  pvfs::test::Outcome fsck;
  const auto until = Clock::now() + 30s;
  do {
    fsck = pvfs::test::run_tool("PVFS_CTL", t.dir(), {"fsck", "-c", t.cluster().config_path().string()});
    if (fsck.status == 0) break;
    std::this_thread::sleep_for(1s);
  } while (Clock::now() < until);
  CAPTURE(fsck);
  CHECK(fsck.status == 0);
}

}  // namespace

TEST_CASE("file sets shipped to a member killed before it answered are served again, and nothing is lost") {
  if (pvfs::test::skip_without_fuse()) return;
  TestCluster t(three_members(), true);
  const size_t victim = pick_victim(t);
  const auto written = ship_to_stopped_member(t, victim, SIGKILL);
  check_intact(written);

  // Back, it rejoins without a stale copy of any of them.
  const std::string name = "mds" + std::to_string(t.config().mds[victim].id);
  REQUIRE(t.cluster().restart_daemon(name).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(t.config().mds_dead_after_ms));
  check_intact(written);
  check_fsck_clean(t);
}

TEST_CASE("a member paused while file sets were shipped to it does not install them when it resumes") {
  if (pvfs::test::skip_without_fuse()) return;
  TestCluster t(three_members(), true);
  const size_t victim = pick_victim(t);
  // Still stopped: SIGSTOP again is a no-op; it is declared failed, its
  // sets are settled by the senders, and files are made in them.
  const auto written = ship_to_stopped_member(t, victim, SIGSTOP);
  const std::string name = "mds" + std::to_string(t.config().mds[victim].id);
  REQUIRE(t.cluster().kill_daemon(name, SIGCONT).ok());
  // It reads the chunks queued during the pause; installing them would
  // serve copies without the files made meanwhile.
  std::this_thread::sleep_for(std::chrono::milliseconds(2 * t.config().mds_dead_after_ms));
  check_intact(written);
  check_fsck_clean(t);
}

}  // namespace mds_ship_test
