// What survives crashes, through a real mount of real daemons: fsync and
// fdatasync of a file and fsync of a directory return only after the MDS
// has synced the file set (its per-set sync counter moved by then), while
// write and close do not wait for a sync; and the bytes a pvfsmount
// acknowledged before it was killed with SIGKILL are readable, with their
// size, from another client within a bounded time, redirected ranges
// included; a pvfsmount stopped while a change waits on a paused MDS
// exits cleanly, keeping what it acknowledged; appends placed before an
// MDS was killed are not overwritten by appends placed after its restart.
// Needs /dev/fuse (but the case of a storage server that is down).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/session.h"
#include "utils/common/metrics_probe.h"

namespace pvfs::test::durability_test {
namespace {

using std::chrono::milliseconds;

// The MDS's count of syncs made for clients' fsyncs of file set 0.
double fsync_syncs(const Config& config) {
  auto key = load_secret(config.secret_file);
  REQUIRE_MESSAGE(key.ok(), key.status().to_string());
  auto families = fetch_metrics(DaemonKind::mds, config.mds.at(0).address, *key, milliseconds(5000));
  REQUIRE_MESSAGE(families.ok(), families.status().to_string());
  return metrics::sum(*families, "pvfs_mds_fsync_syncs_total", {{"fileset", "0"}});
}


// Writes `length` bytes of pattern `seed` at `offset` of descriptor `fd`.
void write_pattern(int fd, uint64_t seed, uint64_t offset, size_t length) {
  AlignedBuffer buffer(length);
  fill_pattern(buffer.span(), seed, offset);
  REQUIRE(::pwrite(fd, buffer.data(), length, static_cast<off_t>(offset)) == static_cast<ssize_t>(length));
}

// Waits up to `within` for `ino`'s size, as `s` sees it, to be `bytes`.
void wait_for_size(Session& s, InodeId ino, uint64_t bytes, milliseconds within) {
  uint64_t size = 0;
  CHECK_MESSAGE(eventually([&] {
                  auto attr = s.getattr(ino);
                  size = attr ? attr->size : 0;
                  return size == bytes;
                }, within),
                "inode ", ino.value, ": size stayed ", size, " instead of ", bytes);
}

// Checks that `ino` holds `bytes` bytes of pattern `seed`, read through `s`.
void check_contents(Session& s, InodeId ino, uint64_t seed, size_t bytes) {
  auto file = s.open(ino, O_RDONLY);
  REQUIRE(file.ok());
  AlignedBuffer got(bytes);
  auto n = s.read(**file, 0, got.span());
  REQUIRE(n.ok());
  CHECK(*n == bytes);
  auto bad = pattern_mismatch(got.span(0, *n), seed, 0);
  CHECK_MESSAGE(!bad, "inode ", ino.value, ": first wrong byte at ", bad.value_or(0));
  CHECK(s.release(*file).ok());
}

TEST_CASE("fsync of a file or a directory returns after the MDS synced it; write and close do not") {
  if (skip_without_fuse()) return;
  TestCluster tc(with_servers(2), true);
  const std::string file = (tc.mnt() / "f").string();
  const std::string dir = (tc.mnt() / "d").string();
  REQUIRE(::mkdir(dir.c_str(), 0755) == 0);

  const double before = fsync_syncs(tc.config());
  int fd = ::open(file.c_str(), O_CREAT | O_WRONLY, 0644);
  REQUIRE(fd >= 0);
  write_pattern(fd, 1, 0, 3 << 20);
  REQUIRE(::close(fd) == 0);
  CHECK(fsync_syncs(tc.config()) == before);

  fd = ::open(file.c_str(), O_WRONLY);
  REQUIRE(fd >= 0);
  write_pattern(fd, 1, 3 << 20, 4096);
  REQUIRE(::fsync(fd) == 0);
  const double after_fsync = fsync_syncs(tc.config());
  CHECK(after_fsync >= before + 1);

  write_pattern(fd, 1, (3 << 20) + 4096, 4096);
  REQUIRE(::fdatasync(fd) == 0);
  const double after_fdatasync = fsync_syncs(tc.config());
  CHECK(after_fdatasync >= after_fsync + 1);
  REQUIRE(::close(fd) == 0);

  REQUIRE(::mknod((dir + "/entry").c_str(), S_IFREG | 0644, 0) == 0);
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  REQUIRE(dfd >= 0);
  REQUIRE(::fsync(dfd) == 0);
  CHECK(fsync_syncs(tc.config()) >= after_fdatasync + 1);
  ::close(dfd);
}

TEST_CASE("bytes acknowledged by a pvfsmount killed before close are readable with their size") {
  if (skip_without_fuse()) return;
  TestCluster tc(with_servers(3), true);
  const std::string path = (tc.mnt() / "unclosed").string();
  // Past several 1 MiB stripes and not stripe-aligned, written in pieces
  // out of order so that the last write is not the one that ends the file.
  constexpr uint64_t kSeed = 7;
  constexpr size_t kBytes = (5 << 20) + 12345;
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY, 0644);
  REQUIRE(fd >= 0);
  write_pattern(fd, kSeed, 4 << 20, kBytes - (4 << 20));
  write_pattern(fd, kSeed, 0, 4 << 20);

  const int mounter = pvfsmount_pid(std::filesystem::absolute(tc.mnt()));
  REQUIRE(mounter > 0);
  REQUIRE(::kill(mounter, SIGKILL) == 0);
  REQUIRE(eventually([&] { return ::kill(mounter, 0) != 0; }));
  ::close(fd);  // the mount is gone: only frees the descriptor

  Session s(tc.config());
  auto found = s.lookup(kRootInode, "unclosed");
  REQUIRE_MESSAGE(found.ok(), found.status().to_string());
  wait_for_size(s, found->ino, kBytes, milliseconds(5000));
  check_contents(s, found->ino, kSeed, kBytes);
}

TEST_CASE("after an MDS restart an idle writer announces itself again, so its size survives it") {
  if (skip_without_fuse()) return;
  TestCluster tc(with_servers(2), true);
  const std::string path = (tc.mnt() / "idle").string();
  constexpr size_t kBytes = (3 << 20) + 5;
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY, 0644);
  REQUIRE(fd >= 0);
  write_pattern(fd, 11, 0, kBytes);

  // The restarted MDS knows nothing of the announcement made to the old
  // one; the mount must repeat it although it writes nothing more.
  REQUIRE(tc.cluster().kill_daemon("mds0", SIGKILL).ok());
  REQUIRE(tc.cluster().restart_daemon("mds0").ok());
  auto key = load_secret(tc.config().secret_file);
  REQUIRE(key.ok());
  CHECK(eventually([&] {
    auto families = fetch_metrics(DaemonKind::mds, tc.config().mds.at(0).address, *key, milliseconds(2000));
    return families && metrics::sum(*families, "pvfs_mds_files_being_written") == 1;
  }, milliseconds(10000)));

  const int mounter = pvfsmount_pid(std::filesystem::absolute(tc.mnt()));
  REQUIRE(mounter > 0);
  REQUIRE(::kill(mounter, SIGKILL) == 0);
  REQUIRE(eventually([&] { return ::kill(mounter, 0) != 0; }));
  ::close(fd);

  Session s(tc.config());
  auto found = s.lookup(kRootInode, "idle");
  REQUIRE(found.ok());
  wait_for_size(s, found->ino, kBytes, milliseconds(5000));
}

TEST_CASE("a dead writer's sizes count the ranges redirected to other servers") {
  ClusterOptions options = with_servers(3);
  options.maintainer_threads = 0;  // redirected ranges stay in fragments
  TestCluster tc(options);
  constexpr int kFiles = 6;
  // The tail piece too is past the size below which pieces go home unprobed.
  auto bytes_of = [](int i) { return size_t{7 << 19} + 1000 * i + 7; };
  std::vector<InodeId> inos;
  {
    // Pieces go to random servers, so most live in fragments named only by
    // their home's redirect log; the last piece of most files too.
    Session writer(tc.config());
    writer->set_dispatch_policy(sched::Policy::random);
    std::vector<std::shared_ptr<OpenFile>> open;  // never flushed nor released
    for (int i = 0; i < kFiles; ++i) {
      auto [attr, file] = writer.create(kRootInode, fmt::format("r{}", i));
      AlignedBuffer data(bytes_of(i));
      fill_pattern(data.span(), 100 + i, 0);
      REQUIRE(writer.write(*file, 0, data.span()).ok());
      inos.push_back(attr.ino);
      open.push_back(file);
    }
    CHECK(writer->dispatch_stats().pieces_redirected > 0);
  }  // the writer's client goes away without publishing a size

  Session reader(tc.config());
  for (int i = 0; i < kFiles; ++i) {
    wait_for_size(reader, inos[i], bytes_of(i), milliseconds(5000));
    check_contents(reader, inos[i], 100 + i, bytes_of(i));
  }
}

TEST_CASE("a dead writer's size waits for a storage server that is down, then comes") {
  TestCluster tc(with_servers(2));
  constexpr size_t kBytes = (4 << 20) + 777;
  InodeId ino;
  {
    Session writer(tc.config());
    writer->set_dispatch_policy(sched::Policy::fixed);  // every stripe at its home
    auto [attr, file] = writer.create(kRootInode, "waits");
    AlignedBuffer data(kBytes);
    fill_pattern(data.span(), 9, 0);
    REQUIRE(writer.write(*file, 0, data.span()).ok());
    ino = attr.ino;
    REQUIRE(tc.cluster().kill_daemon("server1", SIGKILL).ok());
  }  // the writer goes away without publishing a size

  Session reader(tc.config());
  // Half the file's stripes are on the dead server: no size can be trusted yet.
  std::this_thread::sleep_for(milliseconds(1000));
  auto early = reader.getattr(ino);
  REQUIRE(early.ok());
  CHECK(early->size == 0);

  REQUIRE(tc.cluster().restart_daemon("server1").ok());
  wait_for_size(reader, ino, kBytes, milliseconds(10000));
  check_contents(reader, ino, 9, kBytes);
}


TEST_CASE("pvfsmount stopped while a truncate waits on a paused MDS exits cleanly and keeps what was acknowledged") {
  if (skip_without_fuse()) return;
  TestCluster tc(with_servers(1), true);
  const std::string before = (tc.mnt() / "before").string();
  int fd = ::open(before.c_str(), O_CREAT | O_WRONLY, 0644);
  REQUIRE(fd >= 0);
  write_pattern(fd, 3, 0, 1 << 20);
  REQUIRE(::close(fd) == 0);
  // Opened before the pause, so the truncate needs no lookup: the request
  // that waits is the change itself.
  const int victim = ::open((tc.mnt() / "victim").c_str(), O_CREAT | O_WRONLY, 0644);
  REQUIRE(victim >= 0);

  const int mounter = pvfsmount_pid(std::filesystem::absolute(tc.mnt()));
  REQUIRE(mounter > 0);
  REQUIRE(tc.cluster().kill_daemon("mds0", SIGSTOP).ok());
  // The truncate waits in pvfsmount for the paused MDS; SIGTERM then stops
  // the mount under it. pvfsmount unwinds the waiting operation while its
  // client is alive (under ASan, after would be a use-after-free report)
  // and answers it with an error (unanswered, the request would leak).
  int truncate_errno = 0;
  std::thread truncater([&] { truncate_errno = ::ftruncate(victim, 4096) == 0 ? 0 : errno; });
  std::this_thread::sleep_for(milliseconds(500));
  REQUIRE(::kill(mounter, SIGTERM) == 0);
  const bool gone = eventually([&] { return ::kill(mounter, 0) != 0; }, milliseconds(10000));
  REQUIRE(tc.cluster().kill_daemon("mds0", SIGCONT).ok());
  truncater.join();
  ::close(victim);
  REQUIRE_MESSAGE(gone, "pvfsmount still runs 10 s after SIGTERM");
  CHECK_MESSAGE(truncate_errno != 0, "a truncate the MDS never saw succeeded");
  CHECK(read_text(tc.cluster().dir() / "logs" / "mount.log").find("unmounted") != std::string::npos);

  Session s(tc.config());
  auto found = s.lookup(kRootInode, "before");
  REQUIRE_MESSAGE(found.ok(), found.status().to_string());
  check_contents(s, found->ino, 3, 1 << 20);
}

// Where an append goes is the MDS's answer, and the size it grows to give
// it is committed first: after the MDS is killed and restarted, another
// client's append lands after every line appended before, although the
// appending mount has not closed the file (so has published no size).
TEST_CASE("appends before and after an MDS killed with SIGKILL all land, none on another") {
  if (skip_without_fuse()) return;
  TestCluster tc(with_servers(2), true);
  const std::string path = (tc.mnt() / "log").string();
  const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_APPEND, 0644);
  REQUIRE(fd >= 0);
  auto line = [](char tag, int i) {
    char text[16];
    std::snprintf(text, sizeof text, "%c %06d\n", tag, i);
    return std::string(text, 9);
  };
  for (int i = 0; i < 100; ++i) REQUIRE(::write(fd, line('M', i).data(), 9) == 9);

  REQUIRE(tc.cluster().kill_daemon("mds0", SIGKILL).ok());
  REQUIRE(tc.cluster().restart_daemon("mds0").ok());

  Session s(tc.config());
  auto found = s.lookup(kRootInode, "log");
  REQUIRE(found.ok());
  auto other = s.open(found->ino, O_WRONLY | O_APPEND);
  REQUIRE(other.ok());
  for (int i = 0; i < 100; ++i) {
    const std::string text = line('S', i);
    REQUIRE(s.write(**other, 0, std::as_bytes(std::span(text))).ok());
  }
  for (int i = 100; i < 200; ++i) REQUIRE(::write(fd, line('M', i).data(), 9) == 9);
  REQUIRE(::close(fd) == 0);
  // Every one of the mount's writes was placed by the MDS (pvfs-ctl client).
  CHECK(mount_counter(tc.mnt(), "appends") == 200);
  REQUIRE(s.release(*other).ok());

  auto reader = s.open(found->ino, O_RDONLY);
  REQUIRE(reader.ok());
  std::string all(300 * 9 + 100, '\0');
  auto got = s.read(**reader, 0, std::as_writable_bytes(std::span(all)));
  REQUIRE(got.ok());
  all.resize(*got);
  CHECK(all.size() == 300u * 9);
  int m = 0, other_lines = 0, bad = 0;
  for (size_t at = 0; at + 9 <= all.size(); at += 9) {
    const std::string got_line = all.substr(at, 9);
    if (got_line == line('M', m)) ++m;
    else if (got_line == line('S', other_lines)) ++other_lines;
    else ++bad;
  }
  CHECK(bad == 0);
  CHECK(m == 200);
  CHECK(other_lines == 100);
}

}  // namespace
}  // namespace pvfs::test::durability_test
