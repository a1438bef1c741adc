// Metadata operations through a real mount cost the round trips they need
// and no more. After a create, mkdir or unlink the kernel drops its cached
// attributes of the directory and asks for them again before the next
// lookup there; the MDS now sends the directory's new attributes with its
// reply (NFS's post-op attributes), so pvfsmount answers that question
// without a getattr request, and what it answers is the directory as the
// change left it. The attributes age like the kernel's own cache: a change
// made by another client shows within the attribute timeout.
// Listings: the kernel reads a directory a few KiB at a time; pvfsmount
// asks the MDS for hundreds of entries at once and answers the kernel's
// next calls from them, but never with attributes older than a change this
// mount made. Without -o security_label the mount has no SELinux labels
// and says so, so `ls -l` asks for none.
// The daemons and pvfsmount are the real binaries; pvfs-ctl comes from
// $PVFS_CTL.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "fs/client.h"
#include "tests/integration/session.h"
#include "tests/support/run_tool.h"

namespace pvfs::test::round_trips_test {
namespace {

namespace fs = std::filesystem;

double mds_getattrs(TestCluster& c) {
  return daemon_metric(c.dir(), c.cluster().config_path(), "mds0", "pvfs_mds_requests_total", "type=\"getattr\"");
}

double mds_lookups(TestCluster& c) {
  return daemon_metric(c.dir(), c.cluster().config_path(), "mds0", "pvfs_mds_requests_total", "type=\"lookup\"");
}

double mds_xattr_requests(TestCluster& c) {
  double n = 0;
  for (const char* type : {"getxattr", "removexattr"})
    n += daemon_metric(c.dir(), c.cluster().config_path(), "mds0", "pvfs_mds_requests_total",
                       std::string("type=\"") + type + "\"");
  return n;
}

double mds_readdirs(TestCluster& c) {
  return daemon_metric(c.dir(), c.cluster().config_path(), "mds0", "pvfs_mds_requests_total", "type=\"readdir\"");
}

// Empties the kernel's dentry and inode caches, so the next listing and
// stats go to pvfsmount (as after another node's changes, or a cold cache).
void drop_kernel_caches() {
  std::ofstream("/proc/sys/vm/drop_caches") << "3\n";
}

// The names `ls` would see in `dir`, with lstat of each as `ls -l` does.
std::multiset<std::string> list_long(const fs::path& dir) {
  std::multiset<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  REQUIRE_MESSAGE(d != nullptr, dir.string(), ": ", std::strerror(errno));
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    CHECK_MESSAGE(::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0, name);
    names.insert(name);
  }
  ::closedir(d);
  return names;
}

struct stat stat_of(const fs::path& path) {
  struct stat st {};
  REQUIRE_MESSAGE(::stat(path.c_str(), &st) == 0, path.string(), ": ", std::strerror(errno));
  return st;
}

bool later(const timespec& a, const timespec& b) {
  return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec > b.tv_nsec);
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

TEST_CASE("writes ask nobody about file capabilities: 300 small writes, next to no xattr questions") {
  if (skip_without_fuse()) return;
  TestCluster c(with_servers(2), true);
  const fs::path file = c.mnt() / "f";
  create_empty(file);
  const int fd = ::open(file.c_str(), O_WRONLY);
  REQUIRE(fd >= 0);
  const uint64_t answered_at_start = mount_counter(c.mnt(), "cache_hits");
  const double asked_at_start = mds_xattr_requests(c);
  constexpr int kWrites = 300;
  const std::string block(4096, 'w');
  for (int i = 0; i < kWrites; ++i)
    REQUIRE(::pwrite(fd, block.data(), block.size(), static_cast<off_t>(i) * 4096) == 4096);
  REQUIRE(::close(fd) == 0);
  // Before pvfsmount took over dropping privileges (FUSE_HANDLE_KILLPRIV_V2)
  // the kernel asked for security.capability before every write: 300
  // questions, answered by pvfsmount or the MDS. Now the first write of the
  // inode may ask, and pvfsmount removes capabilities at most once per
  // attribute timeout (1 s) of writing.
  const uint64_t answered = mount_counter(c.mnt(), "cache_hits") - answered_at_start;
  const double asked = mds_xattr_requests(c) - asked_at_start;
  MESSAGE(answered, " answered by the mount, ", asked, " asked of the MDS, for ", kWrites, " writes");
  CHECK(answered + asked < 20);
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

TEST_CASE("ls -l of 2000 entries asks the MDS for the listing a few times and shows each once") {
  if (skip_without_fuse()) return;
  TestCluster c(with_servers(1), true);
  const fs::path dir = c.mnt() / "many";
  REQUIRE(fs::create_directory(dir));
  constexpr int kFiles = 2000;
  std::multiset<std::string> made;
  for (int i = 0; i < kFiles; ++i) {
    // Long names too: the kernel's buffer then takes fewer entries than
    // pvfsmount expects, and the listing must go on from where it stopped.
    std::string name = "f" + std::to_string(i) + (i % 3 == 0 ? std::string(180, 'x') : "");
    create_empty(dir / name);
    made.insert(name);
  }
  drop_kernel_caches();
  const double before = mds_readdirs(c);
  CHECK(list_long(dir) == made);
  const double readdirs = mds_readdirs(c) - before;
  // The kernel's 4 KiB pages hold about 25 entries with attributes: 80 or
  // more requests when each went to the MDS.
  MESSAGE(readdirs, " readdir requests for ", kFiles, " entries");
  CHECK(readdirs >= 1);
  CHECK(readdirs <= 12);
}

// opendir asks the MDS whether the directory still exists (another client
// may have replaced it) by fetching the listing's start, which the kernel's
// first readdir then takes: a listing costs one request, not two.
TEST_CASE("listing a directory of a few entries, or none, costs one readdir and no getattr") {
  if (skip_without_fuse()) return;
  TestCluster c(with_servers(1), true);
  constexpr int kDirs = 30;
  std::vector<std::multiset<std::string>> made(kDirs);
  for (int d = 0; d < kDirs; ++d) {
    REQUIRE(fs::create_directory(c.mnt() / ("d" + std::to_string(d))));
    for (int i = 0; i < d % 4; ++i) {
      create_empty(c.mnt() / ("d" + std::to_string(d)) / ("f" + std::to_string(i)));
      made[d].insert("f" + std::to_string(i));
    }
  }
  drop_kernel_caches();
  const auto getattrs = [&] {
    return daemon_metric(c.dir(), c.cluster().config_path(), "mds0", "pvfs_mds_requests_total",
                         "type=\"getattr\"");
  };
  const double readdirs_before = mds_readdirs(c), getattrs_before = getattrs();
  // Newest first: lookups in listing order would start statahead's
  // listing of the parent.
  for (int d = kDirs - 1; d >= 0; --d) CHECK(list_long(c.mnt() / ("d" + std::to_string(d))) == made[d]);
  CHECK(mds_readdirs(c) - readdirs_before == kDirs);
  CHECK(getattrs() - getattrs_before == 0);
}

TEST_CASE("a listing in progress never hands the kernel attributes older than this mount's chmod") {
  if (skip_without_fuse()) return;
  TestCluster c(with_servers(1), true);
  const fs::path dir = c.mnt() / "d";
  REQUIRE(fs::create_directory(dir));
  constexpr int kFiles = 300;
  for (int i = 0; i < kFiles; ++i) create_empty(dir / ("f" + std::to_string(i)));
  drop_kernel_caches();
  DIR* d = ::opendir(dir.c_str());
  REQUIRE(d != nullptr);
  // The first page: pvfsmount now holds the rest of the listing.
  int seen = 0;
  while (seen < 10) {
    dirent* e = ::readdir(d);
    REQUIRE(e != nullptr);
    struct stat st {};
    ::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW);  // as ls -l: asks for readdirplus
    ++seen;
  }
  const fs::path target = dir / "f250";
  REQUIRE(::chmod(target.c_str(), 0600) == 0);
  while (dirent* e = ::readdir(d)) {
    struct stat st {};
    ::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW);
  }
  ::closedir(d);
  CHECK((stat_of(target).st_mode & 07777) == 0600);
}

TEST_CASE("a stat of every file in listing order, then an unlink of each, are answered by statahead") {
  if (skip_without_fuse()) return;
  // An entry fetched ahead answers for at most the attribute timeout: 30 s
  // rather than 1, so that a loaded machine, slow through a window of 512
  // names, does not turn this count of round trips into a race.
  TestCluster c(with_servers(1), true, "attr_timeout=30");
  const fs::path dir = c.mnt() / "walk";
  REQUIRE(fs::create_directory(dir));
  constexpr int kFiles = 2000;
  for (int i = 0; i < kFiles; ++i) create_empty(dir / ("f" + std::to_string(i)));
  drop_kernel_caches();
  const double lookups_before = mds_lookups(c);
  const double readdirs_before = mds_readdirs(c);
  for (int i = 0; i < kFiles; ++i) {
    struct stat st {};
    REQUIRE_MESSAGE(::stat((dir / ("f" + std::to_string(i))).c_str(), &st) == 0, i);
    CHECK(S_ISREG(st.st_mode));
  }
  const double lookups = mds_lookups(c) - lookups_before;
  const double readdirs = mds_readdirs(c) - readdirs_before;
  // One lookup per file before statahead.
  MESSAGE(lookups, " lookups and ", readdirs, " readdirs for ", kFiles, " stats");
  CHECK(lookups <= 40);
  CHECK(readdirs <= 20);

  // A second walk of the same directory (here rm of each file, as rm -r
  // or mdtest's removal phase after its stat phase) is fetched ahead too:
  // one lookup per file before, as the first walk's windows were taken
  // for the second's.
  drop_kernel_caches();
  const double lookups_before_rm = mds_lookups(c);
  for (int i = 0; i < kFiles; ++i)
    REQUIRE_MESSAGE(::unlink((dir / ("f" + std::to_string(i))).c_str()) == 0, i, ": ", std::strerror(errno));
  const double rm_lookups = mds_lookups(c) - lookups_before_rm;
  MESSAGE(rm_lookups, " lookups for ", kFiles, " unlinks");
  CHECK(rm_lookups <= 40);
  CHECK(fs::is_empty(dir));
}

TEST_CASE("statahead never answers for a name this mount removed, and never hides a new file") {
  if (skip_without_fuse()) return;
  TestCluster c(with_servers(1), true);
  const fs::path dir = c.mnt() / "walk";
  REQUIRE(fs::create_directory(dir));
  for (int i = 0; i < 100; ++i) create_empty(dir / ("f" + std::to_string(i)));
  drop_kernel_caches();
  struct stat st {};
  // The kernel learns f50 first, so removing it below needs no lookup that
  // would use up what statahead holds of it.
  REQUIRE(::stat((dir / "f50").c_str(), &st) == 0);
  for (int i = 0; i < 10; ++i) REQUIRE(::stat((dir / ("f" + std::to_string(i))).c_str(), &st) == 0);
  // The walk has fetched the names after f2, f50 among them.
  REQUIRE(::unlink((dir / "f50").c_str()) == 0);
  drop_kernel_caches();  // the kernel now asks pvfsmount again for every name
  for (int i = 10; i < 100; ++i) {
    const int rc = ::stat((dir / ("f" + std::to_string(i))).c_str(), &st);
    if (i == 50) {
      CHECK_MESSAGE(rc != 0, "f50 was removed through this mount");
      CHECK(errno == ENOENT);
    } else {
      CHECK_MESSAGE(rc == 0, "f", i);
    }
  }
  // A file another client makes mid-walk is found: a name statahead did not
  // fetch is asked of the MDS.
  Session other(c.cluster().config());
  auto d = other.lookup(kRootInode, "walk");
  REQUIRE(d.ok());
  auto late = other.create(d->ino, "late");
  REQUIRE(other.release(late.second).ok());
  CHECK(::stat((dir / "late").c_str(), &st) == 0);
}

TEST_CASE("without security_label the mount has no SELinux labels, so ls -l stops asking for them") {
  if (skip_without_fuse()) return;
  TestCluster plain(with_servers(1), true);
  const fs::path file = plain.mnt() / "f";
  create_empty(file);
  char value[64];
  // EOPNOTSUPP, not ENODATA: coreutils then marks the file system as
  // unlabeled and asks no more (one request per entry of ls -l before).
  CHECK(::lgetxattr(file.c_str(), "security.selinux", value, sizeof value) < 0);
  CHECK(errno == EOPNOTSUPP);
  CHECK(::lsetxattr(file.c_str(), "security.selinux", "x", 1, 0) < 0);
  CHECK(errno == EOPNOTSUPP);
  // Other security.* names (file capabilities) are kept as before.
  const unsigned char caps[20] = {0, 0, 0, 2};
  REQUIRE(::lsetxattr(file.c_str(), "security.capability", caps, sizeof caps, 0) == 0);
  CHECK(::lgetxattr(file.c_str(), "security.capability", value, sizeof value) == sizeof caps);

  TestCluster labeled(with_servers(1), true, "security_label");
  const fs::path other = labeled.mnt() / "g";
  create_empty(other);
  REQUIRE(::lsetxattr(other.c_str(), "security.selinux", "system_u:object_r:pvfs_t:s0", 27, 0) == 0);
  const ssize_t n = ::lgetxattr(other.c_str(), "security.selinux", value, sizeof value);
  REQUIRE(n == 27);
  CHECK(std::string(value, 27) == "system_u:object_r:pvfs_t:s0");
}

TEST_CASE("the kernel reads 4 MiB ahead on a mount: a 1 MiB read from each server of a 4-wide stripe") {
  if (skip_without_fuse()) return;
  TestCluster c(with_servers(4), true);
  // INIT keeps the smaller of pvfsmount's max_readahead and the
  // read_ahead_kb it set; a mismatch left 1 MiB, one server at a time.
  struct stat st {};
  REQUIRE(::stat(c.mnt().c_str(), &st) == 0);
  const std::string knob = fmt::format("/sys/class/bdi/{}:{}/read_ahead_kb", major(st.st_dev), minor(st.st_dev));
  CHECK(read_text(knob) == "4096\n");
}

}  // namespace pvfs::test::round_trips_test
