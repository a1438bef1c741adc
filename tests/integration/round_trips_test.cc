// Metadata operations through a real mount cost the round trips they need
// and no more. After a create, mkdir or unlink the kernel drops its cached
// attributes of the directory and asks for them again before the next
// lookup there; the MDS now sends the directory's new attributes with its
// reply (NFS's post-op attributes), so pvfsmount answers that question
// without a getattr request, and what it answers is the directory as the
// change left it. The attributes age like the kernel's own cache: a change
// made by another client shows within the attribute timeout.
// The daemons and pvfsmount are the real binaries; pvfs-ctl comes from
// $PVFS_CTL.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "tests/integration/session.h"
#include "tests/support/run_tool.h"

namespace pvfs::test {
namespace {

namespace fs = std::filesystem;

double mds_getattrs(TestCluster& c) {
  return daemon_metric(c.dir(), c.cluster().config_path(), "mds0", "pvfs_mds_requests_total", "type=\"getattr\"");
}

struct stat stat_of(const fs::path& path) {
  struct stat st {};
  REQUIRE_MESSAGE(::stat(path.c_str(), &st) == 0, path.string(), ": ", std::strerror(errno));
  return st;
}

bool later(const timespec& a, const timespec& b) {
  return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec > b.tv_nsec);
}

void create_empty(const fs::path& file) {
  const int fd = ::open(file.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0644);
  REQUIRE_MESSAGE(fd >= 0, file.string(), ": ", std::strerror(errno));
  REQUIRE(::close(fd) == 0);
}

}  // namespace

TEST_CASE("creates, mkdirs and unlinks send no getattr, and stat of the directory shows each change") {
  if (skip_without_fuse()) return;
  TestCluster c(with_servers(2), true);
  const fs::path dir = c.mnt() / "d";
  REQUIRE(fs::create_directory(dir));
  struct stat before = stat_of(dir);
  constexpr int kFiles = 60;

  const double getattrs_at_start = mds_getattrs(c);
  for (int i = 0; i < kFiles; ++i) {
    create_empty(dir / ("f" + std::to_string(i)));
    const struct stat now = stat_of(dir);  // the kernel asks: its copy was dropped
    CHECK(!later(before.st_mtim, now.st_mtim));
    before = now;
  }
  for (int i = 0; i < 5; ++i) {
    REQUIRE(fs::create_directory(dir / ("sub" + std::to_string(i))));
    CHECK(stat_of(dir).st_nlink == static_cast<nlink_t>(3 + i));
  }
  for (int i = 0; i < kFiles; ++i) {
    const struct stat was = stat_of(dir);
    REQUIRE(::unlink((dir / ("f" + std::to_string(i))).c_str()) == 0);
    const struct stat now = stat_of(dir);
    CHECK(!later(was.st_ctim, now.st_ctim));
  }
  const double getattrs = mds_getattrs(c) - getattrs_at_start;
  // One per create and per unlink before the MDS sent the directory along
  // (125 here); a few may still go out when a slow machine lets the
  // kernel's copy expire between two steps.
  MESSAGE(getattrs, " getattr requests for ", 2 * kFiles + 5, " changes");
  CHECK(getattrs < 20);
}

TEST_CASE("a directory another client changes shows the change within the attribute timeout") {
  if (skip_without_fuse()) return;
  TestCluster c(with_servers(1), true);
  const fs::path dir = c.mnt() / "shared";
  REQUIRE(fs::create_directory(dir));
  // fstat of an open directory asks with GETATTR alone: a stat by path
  // could learn the change from a LOOKUP instead.
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  REQUIRE(fd >= 0);
  create_empty(dir / "mine");  // this mount now holds the directory's post-op attributes
  Session other(c.cluster().config());
  auto d = other.lookup(kRootInode, "shared");
  REQUIRE(d.ok());
  SetAttr change;
  change.mask = kSetMode;
  change.mode = 0700;
  REQUIRE(other.setattr(d->ino, change).ok());
  // The mount's 1 s attribute timeout, and a margin for a loaded machine.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  struct stat seen {};
  REQUIRE(::fstat(fd, &seen) == 0);
  ::close(fd);
  CHECK((seen.st_mode & 07777) == 0700);
}

}  // namespace pvfs::test
