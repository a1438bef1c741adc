// Write-behind through a real mount (pvfsmount(8), write_behind=): a
// write() returns once pvfsmount has started it, up to a limit of bytes
// in flight per file, so one writer's next write overlaps the last one's
// trip to the servers. Nothing it acknowledged is lost or hidden: the
// writer sees its bytes and size at once, a write behind that fails is
// reported by the next write, fsync or close, and what was fsynced before
// stays. The storage servers are paused (SIGSTOP) or killed (SIGKILL) to
// hold writes in flight.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>
#include <vector>

#include "fs/client.h"
#include "fs/mount_stats.h"
#include "tests/integration/session.h"

namespace pvfs::test::write_behind_test {
namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr uint64_t kSeed = 21;

void signal_servers(TestCluster& c, int sig) {
  for (uint32_t i = 0; i < c.config().servers.size(); ++i)
    REQUIRE(c.cluster().kill_daemon(fmt::format("server{}", i), sig).ok());
}

// Writes `count` MiB of the pattern to `fd`, one write() each, counting
// those that returned in `done`; false if one failed.
bool write_mibs(int fd, int count, std::atomic<int>& done) {
  std::vector<std::byte> block(kMiB);
  for (int i = 0; i < count; ++i) {
    fill_pattern(block, kSeed, i * kMiB);
    if (::write(fd, block.data(), kMiB) != static_cast<ssize_t>(kMiB)) return false;
    done.fetch_add(1);
  }
  return true;
}

// A file "f" on `c`'s mount written `count` MiB, one write() each, by a
// thread of its own, while every storage server is paused (SIGSTOP).
// resume() (or the destructor) lets the servers go and waits for it.
struct PausedWrites {
  PausedWrites(TestCluster& cluster, int count) : c(cluster) {
    fd = ::open((c.mnt() / "f").c_str(), O_CREAT | O_RDWR, 0644);
    REQUIRE(fd >= 0);
    signal_servers(c, SIGSTOP);
    writer = std::thread([this, count] { wrote = write_mibs(fd, count, done); });
  }
  ~PausedWrites() {
    if (!writer.joinable()) return;
    for (uint32_t i = 0; i < c.config().servers.size(); ++i)
      (void)c.cluster().kill_daemon(fmt::format("server{}", i), SIGCONT);
    writer.join();
  }
  void resume() {
    signal_servers(c, SIGCONT);
    writer.join();
  }

  TestCluster& c;
  int fd = -1;
  std::atomic<int> done{0};
  bool wrote = false;
  std::thread writer;
};

// Whether `fd` holds `bytes` of the pattern, read from the start.
std::string pattern_check(int fd, size_t bytes) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return std::string("fstat: ") + std::strerror(errno);
  if (static_cast<size_t>(st.st_size) != bytes) return fmt::format("size {} instead of {}", st.st_size, bytes);
  std::vector<std::byte> got(bytes);
  const ssize_t n = ::pread(fd, got.data(), bytes, 0);
  if (n != static_cast<ssize_t>(bytes)) return fmt::format("read {} of {} bytes", n, bytes);
  if (auto bad = pattern_mismatch(got, kSeed, 0)) return fmt::format("wrong byte at {}", *bad);
  return "";
}

}  // namespace

TEST_CASE("a pvfsmount stopped with SIGTERM while writes are behind sends them before it exits") {
  if (skip_without_fuse()) return;
  TestCluster c(with_servers(2), true, "write_behind=4M");
  PausedWrites w(c, 3);
  REQUIRE(eventually([&] { return w.done.load() == 3; }));  // all three behind
  const int mounter = pvfsmount_pid(std::filesystem::absolute(c.mnt()));
  REQUIRE(mounter > 0);
  REQUIRE(::kill(mounter, SIGTERM) == 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  w.resume();
  CHECK(w.wrote);
  CHECK(eventually([&] { return ::kill(mounter, 0) != 0; }));
  ::close(w.fd);  // the mount is gone: only frees the descriptor

  // The file was never closed: the MDS takes its size from the servers
  // once the writer's connection is gone (pvfs-mds(8)).
  Session s(c.config());
  auto found = s.lookup(kRootInode, "f");
  REQUIRE_MESSAGE(found.ok(), found.status().to_string());
  uint64_t size = 0;
  CHECK_MESSAGE(eventually([&] {
                  auto attr = s.getattr(found->ino);
                  size = attr ? attr->size : 0;
                  return size == 3 * kMiB;
                }),
                "size stayed ", size);
  auto file = s.open(found->ino, O_RDONLY);
  REQUIRE(file.ok());
  AlignedBuffer got(3 * kMiB);
  auto n = s.read(**file, 0, got.span());
  REQUIRE(n.ok());
  CHECK(*n == 3 * kMiB);
  CHECK(pattern_mismatch(got.span(0, *n), kSeed, 0) == std::nullopt);
  CHECK(s.release(*file).ok());
}

TEST_CASE("with the storage servers paused, write() returns for 4 MiB of a file, the next waits, and all is there after") {
  if (skip_without_fuse()) return;
  TestCluster c(with_servers(2), true, "write_behind=4M");
  PausedWrites w(c, 6);
  // A liveness bound: without write-behind not even the first returns.
  const bool four_returned = eventually([&] { return w.done.load() >= 4; });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const int returned_while_paused = w.done.load();
  w.resume();
  CHECK(four_returned);
  CHECK(returned_while_paused == 4);  // the fifth waited for room
  CHECK(w.wrote);
  const int fd = w.fd;
  // The writer sees its size and bytes at once, before any close.
  CHECK(pattern_check(fd, 6 * kMiB) == "");
  CHECK(::close(fd) == 0);
  // What pvfs-ctl client shows: six answered early, the fifth (at least)
  // after waiting for room, none failed.
  CHECK(mount_counter(c.mnt(), "writes_behind") == 6);
  CHECK(mount_counter(c.mnt(), "behind_waits") >= 1);
  CHECK(mount_counter(c.mnt(), "behind_failures") == 0);
  const int again = ::open((c.mnt() / "f").c_str(), O_RDONLY);
  REQUIRE(again >= 0);
  CHECK(pattern_check(again, 6 * kMiB) == "");
  ::close(again);
}

TEST_CASE("without write_behind (the default), write() waits for the storage servers") {
  if (skip_without_fuse()) return;
  TestCluster c(with_servers(2), true);
  PausedWrites w(c, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  const int returned_while_paused = w.done.load();
  w.resume();
  CHECK(returned_while_paused == 0);
  CHECK(w.wrote);
  CHECK(pattern_check(w.fd, kMiB) == "");
  CHECK(::close(w.fd) == 0);
  CHECK(mount_counter(c.mnt(), "writes_behind") == 0);
}

TEST_CASE("a write behind that fails is reported by close, and what was fsynced before stays readable") {
  if (skip_without_fuse()) return;
  ClusterOptions options = with_servers(1);
  options.rpc_timeout_ms = 1000;
  options.write_behind_bytes = 4 << 20;  // from the config's [client] section, no mount option
  TestCluster c(options, true);
  const auto path = c.mnt() / "f";
  const int fd = ::open(path.c_str(), O_CREAT | O_RDWR, 0644);
  REQUIRE(fd >= 0);
  std::atomic<int> done{0};
  REQUIRE(write_mibs(fd, 1, done));
  REQUIRE(::fsync(fd) == 0);

  REQUIRE(c.cluster().kill_daemon("server0", SIGKILL).ok());
  std::vector<std::byte> block(kMiB, std::byte{0x5a});
  // Acknowledged before the server could say anything...
  CHECK(::pwrite(fd, block.data(), kMiB, kMiB) == static_cast<ssize_t>(kMiB));
  // ...so close says it: the caller learns the write was lost.
  errno = 0;
  const int closed = ::close(fd);
  const int close_errno = errno;
  CHECK(closed == -1);
  CHECK_MESSAGE(close_errno != 0, std::strerror(close_errno));
  CHECK(mount_counter(c.mnt(), "behind_failures") == 1);

  REQUIRE(c.cluster().restart_daemon("server0").ok());
  int again = -1;
  // The mount's next calls to the restarted server may still fail fast for a moment.
  CHECK(eventually([&] {
    if (again < 0) again = ::open(path.c_str(), O_RDONLY);
    return again >= 0 && pattern_check(again, kMiB) == "";
  }));
  if (again >= 0) {
    CHECK(pattern_check(again, kMiB) == "");
    ::close(again);
  }
}

}  // namespace pvfs::test::write_behind_test
