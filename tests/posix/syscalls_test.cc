// System calls on names and attributes, on a real pvfs mount, compared with
// Linux on a local file system: each check runs the same call under a
// scratch directory on the mount and under one on /tmp and wants the same
// return value and errno. Data calls are in syscalls_data_test.cc,
// other users' permissions in syscalls_permissions_test.cc.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "tests/posix/posix_support.h"

namespace {

using namespace pvfs::test;
using namespace pvfs::test::posix;
using Root = const std::string&;

TestCluster* cluster() { return shared_cluster("allow_other"); }

// open + close: 0, or -1 with open's errno.
long open_close(const std::string& path, int flags, mode_t mode = 0644) {
  int fd = ::open(path.c_str(), flags, mode);
  if (fd < 0) return -1;
  ::close(fd);
  return 0;
}

struct stat stat_of(const std::string& path) {
  struct stat st {};
  REQUIRE_MESSAGE(::stat(path.c_str(), &st) == 0, "stat " << path << ": " << errno_name(errno));
  return st;
}

struct stat lstat_of(const std::string& path) {
  struct stat st {};
  REQUIRE_MESSAGE(::lstat(path.c_str(), &st) == 0, "lstat " << path << ": " << errno_name(errno));
  return st;
}

bool after(const timespec& a, const timespec& b) {
  return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec > b.tv_nsec);
}

bool same_time(const timespec& a, const timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

timespec now() {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return t;
}

// A time no later than any file system timestamp taken afterwards: Linux
// stamps local files from the coarse clock, which lags CLOCK_REALTIME.
timespec coarse_now() {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &t);
  return t;
}

}  // namespace

TEST_CASE("open with O_CREAT makes a file and O_EXCL refuses one that exists") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "creat");
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return open_close(r + "/f", O_CREAT | O_WRONLY); });
  CHECK_LIKE_LINUX(s, Outcome::fail(EEXIST),
                   [](Root r) { return open_close(r + "/f", O_CREAT | O_EXCL | O_WRONLY); });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return open_close(r + "/f", O_CREAT | O_RDWR); });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) {
    int fd = ::creat((r + "/g").c_str(), 0640);
    return fd < 0 ? -1 : ::close(fd);
  });
  for (const auto& root : s.both()) {
    CHECK((stat_of(root + "/g").st_mode & 07777) == 0640);
    CHECK(S_ISREG(stat_of(root + "/g").st_mode));
  }
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOENT), [](Root r) { return open_close(r + "/missing", O_RDONLY); });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOENT),
                   [](Root r) { return open_close(r + "/no-dir/f", O_CREAT | O_WRONLY); });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOTDIR),
                   [](Root r) { return open_close(r + "/f/x", O_CREAT | O_WRONLY); });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOTDIR),
                   [](Root r) { return open_close(r + "/f", O_RDONLY | O_DIRECTORY); });
  on_both(s, [](Root r) { return ::mkdir((r + "/d").c_str(), 0755); });
  CHECK_LIKE_LINUX(s, Outcome::fail(EISDIR), [](Root r) { return open_close(r + "/d", O_WRONLY); });
  CHECK_LIKE_LINUX(s, Outcome::fail(EISDIR),
                   [](Root r) { return open_close(r + "/d", O_CREAT | O_WRONLY); });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return open_close(r + "/d", O_RDONLY); });
  // O_CREAT|O_EXCL does not follow a symlink, even a dangling one.
  on_both(s, [](Root r) { return ::symlink("nowhere", (r + "/dangling").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::fail(EEXIST),
                   [](Root r) { return open_close(r + "/dangling", O_CREAT | O_EXCL | O_WRONLY); });
  // Without O_EXCL it creates the target.
  CHECK_LIKE_LINUX(s, Outcome::ok(),
                   [](Root r) { return open_close(r + "/dangling", O_CREAT | O_WRONLY); });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::access((r + "/nowhere").c_str(), F_OK); });
}

TEST_CASE("O_TRUNC empties a file and O_APPEND writes at its end") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "trunc-append");
  for (const auto& root : s.both()) write_file(root + "/f", "0123456789");
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return open_close(r + "/f", O_WRONLY | O_TRUNC); });
  for (const auto& root : s.both()) {
    CHECK(stat_of(root + "/f").st_size == 0);
    CHECK(read_file(root + "/f").empty());
  }
  CHECK_LIKE_LINUX(s, Outcome::ok(8), [](Root r) {
    int fd = ::open((r + "/f").c_str(), O_WRONLY | O_APPEND);
    if (fd < 0) return -1L;
    long first = ::write(fd, "abcde", 5);
    long second = first < 0 ? first : ::write(fd, "fgh", 3);
    ::close(fd);
    return second < 0 ? second : first + second;
  });
  // pwrite's offset is ignored for O_APPEND on Linux, and lseek does not
  // move the place the next write goes.
  CHECK_LIKE_LINUX(s, Outcome::ok(9), [](Root r) {
    int fd = ::open((r + "/f").c_str(), O_RDWR | O_APPEND);
    if (fd < 0) return -1L;
    long rc = ::lseek(fd, 0, SEEK_SET);
    if (rc == 0) rc = ::write(fd, "X", 1);
    if (rc == 1) rc = ::pwrite(fd, "Y", 1, 0);
    if (rc == 1) rc = ::lseek(fd, 0, SEEK_CUR);
    ::close(fd);
    return rc;
  });
  for (const auto& root : s.both()) CHECK(read_file(root + "/f") == "abcdefghXY");
  // O_TRUNC on a read-only open of a file one may write still truncates.
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return open_close(r + "/f", O_RDONLY | O_TRUNC); });
  for (const auto& root : s.both()) CHECK(stat_of(root + "/f").st_size == 0);
  // O_CREAT|O_TRUNC of an existing file keeps the inode.
  for (const auto& root : s.both()) {
    write_file(root + "/g", "old contents");
    const ino_t before = stat_of(root + "/g").st_ino;
    write_file(root + "/g", "new");
    CHECK(stat_of(root + "/g").st_ino == before);
    CHECK(read_file(root + "/g") == "new");
  }
}

TEST_CASE("stat, fstat and lstat report type, mode, links, owner, size and blocks") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "stat");
  on_both(s, [](Root r) { return ::mkdir((r + "/d").c_str(), 0750); });
  on_both(s, [](Root r) { return ::mkdir((r + "/d/sub").c_str(), 0755); });
  on_both(s, [](Root r) { return ::symlink("d/f", (r + "/l").c_str()); });
  const std::string data(100000, 'x');
  for (const auto& root : s.both()) write_file(root + "/d/f", data, 0640);

  for (const auto& root : s.both()) {
    CAPTURE(root);
    const struct stat f = stat_of(root + "/d/f");
    CHECK(S_ISREG(f.st_mode));
    CHECK((f.st_mode & 07777) == 0640);
    CHECK(f.st_nlink == 1);
    CHECK(f.st_uid == 0);
    CHECK(f.st_gid == 0);
    CHECK(f.st_size == 100000);
    // Allocation is the file system's business, but must cover the data and
    // not be absurd.
    CHECK(f.st_blocks * 512 >= 100000);
    CHECK(f.st_blocks * 512 <= 100000 + (4 << 20));
    CHECK(f.st_blksize >= 4096);

    int fd = ::open((root + "/d/f").c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    struct stat by_fd {};
    REQUIRE(::fstat(fd, &by_fd) == 0);
    ::close(fd);
    CHECK(by_fd.st_ino == f.st_ino);
    CHECK(by_fd.st_dev == f.st_dev);
    CHECK(by_fd.st_mode == f.st_mode);
    CHECK(by_fd.st_size == f.st_size);

    const struct stat link = lstat_of(root + "/l");
    CHECK(S_ISLNK(link.st_mode));
    CHECK(link.st_size == 3);  // strlen("d/f")
    CHECK(link.st_ino != f.st_ino);
    CHECK(stat_of(root + "/l").st_ino == f.st_ino);  // stat follows the link

    const struct stat d = stat_of(root + "/d");
    CHECK(S_ISDIR(d.st_mode));
    CHECK((d.st_mode & 07777) == 0750);
    CHECK(d.st_nlink == 3);  // ".", its name, and sub's ".."
    CHECK(stat_of(root + "/d/sub").st_nlink == 2);
    CHECK(d.st_ino != f.st_ino);
  }
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOENT), [](Root r) {
    struct stat st {};
    return ::stat((r + "/d/missing").c_str(), &st);
  });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOTDIR), [](Root r) {
    struct stat st {};
    return ::stat((r + "/d/f/x").c_str(), &st);
  });
}

TEST_CASE("timestamps have nanoseconds and move forward when a file or directory changes") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "times");
  const std::string f = s.pvfs() + "/f";
  const timespec t0 = coarse_now();
  int fd = ::open(f.c_str(), O_CREAT | O_WRONLY, 0644);
  REQUIRE(fd >= 0);
  struct stat created {};
  REQUIRE(::fstat(fd, &created) == 0);
  CHECK(!after(t0, created.st_mtim));  // stamped now, by a clock that agrees with ours
  CHECK(!after(t0, created.st_ctim));
  REQUIRE(::write(fd, "data", 4) == 4);
  REQUIRE(::close(fd) == 0);
  const struct stat written = stat_of(f);
  CHECK(after(written.st_mtim, created.st_mtim));
  CHECK(!after(written.st_mtim, now()));

  REQUIRE(::chmod(f.c_str(), 0600) == 0);
  const struct stat changed = stat_of(f);
  CHECK(after(changed.st_ctim, written.st_mtim));
  CHECK(same_time(changed.st_mtim, written.st_mtim));  // chmod leaves mtime alone

  const struct stat dir_before = stat_of(s.pvfs());
  write_file(s.pvfs() + "/g", "");
  const struct stat dir_after = stat_of(s.pvfs());
  CHECK(after(dir_after.st_mtim, dir_before.st_mtim));
  CHECK(after(dir_after.st_ctim, dir_before.st_ctim));

  // A clock with nanoseconds: five stamps all on whole microseconds (or
  // seconds) would be a one-in-10^15 accident.
  int sub_microsecond = 0;
  for (const timespec& t : {created.st_mtim, written.st_mtim, changed.st_ctim, dir_before.st_mtim,
                            dir_after.st_mtim})
    sub_microsecond += t.tv_nsec % 1000 != 0;
  CHECK(sub_microsecond > 0);
}

TEST_CASE("chmod, chown and utimensat change attributes, with UTIME_NOW and UTIME_OMIT") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "setattr");
  for (const auto& root : s.both()) write_file(root + "/f", "x");
  on_both(s, [](Root r) { return ::symlink("f", (r + "/l").c_str()); });

  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::chmod((r + "/f").c_str(), 04751); });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::chown((r + "/f").c_str(), 1234, 5678); });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::chown((r + "/f").c_str(), -1, -1); });
  for (const auto& root : s.both()) {
    CAPTURE(root);
    const struct stat st = stat_of(root + "/f");
    CHECK(st.st_uid == 1234);
    CHECK(st.st_gid == 5678);
    // chown of a non-directory clears set-user-ID, even by root.
    CHECK((st.st_mode & 07777) == 0751);
  }
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::lchown((r + "/l").c_str(), 42, 43); });
  for (const auto& root : s.both()) {
    CHECK(lstat_of(root + "/l").st_uid == 42);
    CHECK(stat_of(root + "/f").st_uid == 1234);  // the target is untouched
  }
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOENT), [](Root r) { return ::chmod((r + "/missing").c_str(), 0600); });

  // Explicit times, to the nanosecond.
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) {
    const timespec times[2] = {{1000000000, 123456789}, {1200000000, 987654321}};
    return ::utimensat(AT_FDCWD, (r + "/f").c_str(), times, 0);
  });
  for (const auto& root : s.both()) {
    const struct stat st = stat_of(root + "/f");
    CHECK(st.st_atim.tv_sec == 1000000000);
    CHECK(st.st_atim.tv_nsec == 123456789);
    CHECK(st.st_mtim.tv_sec == 1200000000);
    CHECK(st.st_mtim.tv_nsec == 987654321);
  }
  // UTIME_OMIT keeps atime; UTIME_NOW sets mtime to now.
  const timespec before = coarse_now();
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) {
    const timespec times[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};
    return ::utimensat(AT_FDCWD, (r + "/f").c_str(), times, 0);
  });
  for (const auto& root : s.both()) {
    CAPTURE(root);
    const struct stat st = stat_of(root + "/f");
    CHECK(st.st_atim.tv_sec == 1000000000);
    CHECK(st.st_atim.tv_nsec == 123456789);
    CHECK(!after(before, st.st_mtim));
    CHECK(!after(st.st_mtim, now()));
  }
  // UTIME_NOW on atime, UTIME_OMIT on mtime, through futimens.
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) {
    int fd = ::open((r + "/f").c_str(), O_RDONLY);
    if (fd < 0) return -1;
    const timespec times[2] = {{0, UTIME_NOW}, {0, UTIME_OMIT}};
    int rc = ::futimens(fd, times);
    ::close(fd);
    return rc;
  });
  for (const auto& root : s.both()) {
    const struct stat st = stat_of(root + "/f");
    CHECK(!after(before, st.st_atim));
    CHECK(st.st_mtim.tv_sec != 1200000000);  // still the UTIME_NOW from above
  }
  // Times set on a descriptor that has just written stay set after close
  // (tar, cp -p and rsync do exactly this).
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) {
    int fd = ::open((r + "/written").c_str(), O_CREAT | O_WRONLY, 0644);
    if (fd < 0) return -1;
    const timespec times[2] = {{1100000000, 5}, {1100000000, 6}};
    int rc = ::write(fd, "data", 4) == 4 ? ::futimens(fd, times) : -1;
    return ::close(fd) == 0 ? rc : -1;
  });
  for (const auto& root : s.both()) {
    CAPTURE(root);
    const struct stat st = stat_of(root + "/written");
    CHECK(st.st_mtim.tv_sec == 1100000000);
    CHECK(st.st_mtim.tv_nsec == 6);
    CHECK(st.st_size == 4);
  }
  CHECK_LIKE_LINUX(s, Outcome::fail(EINVAL), [](Root r) {
    const timespec times[2] = {{5, 1000000000}, {5, 0}};
    return ::utimensat(AT_FDCWD, (r + "/f").c_str(), times, 0);
  });
  // Times of the symlink itself.
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) {
    const timespec times[2] = {{7, 7}, {8, 8}};
    return ::utimensat(AT_FDCWD, (r + "/l").c_str(), times, AT_SYMLINK_NOFOLLOW);
  });
  for (const auto& root : s.both()) {
    CHECK(lstat_of(root + "/l").st_mtim.tv_sec == 8);
    CHECK(stat_of(root + "/f").st_mtim.tv_sec != 8);
  }
}

TEST_CASE("truncate and ftruncate shrink and extend files, and what they add reads as zeros") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "truncate");
  for (const auto& root : s.both()) write_file(root + "/f", "0123456789");
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::truncate((r + "/f").c_str(), 4); });
  for (const auto& root : s.both()) CHECK(read_file(root + "/f") == "0123");
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::truncate((r + "/f").c_str(), 8); });
  for (const auto& root : s.both()) CHECK(read_file(root + "/f") == std::string("0123\0\0\0\0", 8));
  CHECK_LIKE_LINUX(s, Outcome::ok(2), [](Root r) {
    int fd = ::open((r + "/f").c_str(), O_RDWR);
    if (fd < 0) return -1;
    int rc = ::ftruncate(fd, 2);
    struct stat st {};
    if (rc == 0) rc = ::fstat(fd, &st);
    ::close(fd);
    return rc == 0 ? static_cast<int>(st.st_size) : rc;
  });
  for (const auto& root : s.both()) CHECK(read_file(root + "/f") == "01");
  CHECK_LIKE_LINUX(s, Outcome::fail(EINVAL), [](Root r) { return ::truncate((r + "/f").c_str(), -1); });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOENT), [](Root r) { return ::truncate((r + "/missing").c_str(), 0); });
  on_both(s, [](Root r) { return ::mkdir((r + "/d").c_str(), 0755); });
  CHECK_LIKE_LINUX(s, Outcome::fail(EISDIR), [](Root r) { return ::truncate((r + "/d").c_str(), 0); });
  CHECK_LIKE_LINUX(s, Outcome::fail(EINVAL), [](Root r) {
    int fd = ::open((r + "/f").c_str(), O_RDONLY);
    if (fd < 0) return -1;
    int rc = ::ftruncate(fd, 0);
    const int err = errno;
    ::close(fd);
    errno = err;
    return rc;
  });

  // Across stripes: bytes cut off must not come back when the file grows again.
  const std::string f = s.pvfs() + "/big";
  std::string data(3 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>('a' + i % 26);
  write_file(f, data);
  const off_t cut = (1 << 20) + 12345;
  REQUIRE(::truncate(f.c_str(), cut) == 0);
  CHECK(stat_of(f).st_size == cut);
  REQUIRE(::truncate(f.c_str(), 3 << 20) == 0);
  const std::string back = read_file(f);
  REQUIRE(back.size() == data.size());
  CHECK(back.compare(0, cut, data, 0, cut) == 0);
  CHECK(back.find_first_not_of('\0', cut) == std::string::npos);
}

TEST_CASE("mkdir fails with EEXIST, ENOENT and ENOTDIR as on Linux") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "mkdir");
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::mkdir((r + "/d").c_str(), 0700); });
  for (const auto& root : s.both()) {
    CHECK(S_ISDIR(stat_of(root + "/d").st_mode));
    CHECK((stat_of(root + "/d").st_mode & 07777) == 0700);
  }
  for (const auto& root : s.both()) write_file(root + "/f", "");
  CHECK_LIKE_LINUX(s, Outcome::fail(EEXIST), [](Root r) { return ::mkdir((r + "/d").c_str(), 0755); });
  CHECK_LIKE_LINUX(s, Outcome::fail(EEXIST), [](Root r) { return ::mkdir((r + "/f").c_str(), 0755); });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOENT), [](Root r) { return ::mkdir((r + "/no/d").c_str(), 0755); });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOTDIR), [](Root r) { return ::mkdir((r + "/f/d").c_str(), 0755); });
  CHECK_LIKE_LINUX(s, Outcome::fail(EEXIST), [](Root r) { return ::mkdir((r + "/d/.").c_str(), 0755); });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::mkdir((r + "/d/e").c_str(), 01777); });
  for (const auto& root : s.both()) CHECK((stat_of(root + "/d/e").st_mode & 07777) == 01755);
}

TEST_CASE("rmdir refuses non-empty directories, files and dot as on Linux") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "rmdir");
  on_both(s, [](Root r) { return ::mkdir((r + "/d").c_str(), 0755); });
  on_both(s, [](Root r) { return ::mkdir((r + "/d/e").c_str(), 0755); });
  for (const auto& root : s.both()) write_file(root + "/f", "");
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOTEMPTY), [](Root r) { return ::rmdir((r + "/d").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOTDIR), [](Root r) { return ::rmdir((r + "/f").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::fail(EINVAL), [](Root r) { return ::rmdir((r + "/d/e/.").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOTEMPTY), [](Root r) { return ::rmdir((r + "/d/e/..").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOENT), [](Root r) { return ::rmdir((r + "/missing").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::rmdir((r + "/d/e").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::rmdir((r + "/d").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOENT), [](Root r) { return ::access((r + "/d").c_str(), F_OK); });
  for (const auto& root : s.both()) CHECK(stat_of(root).st_nlink == 2);
}

TEST_CASE("unlink removes names and refuses directories and missing names") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "unlink");
  on_both(s, [](Root r) { return ::mkdir((r + "/d").c_str(), 0755); });
  for (const auto& root : s.both()) write_file(root + "/f", "data");
  CHECK_LIKE_LINUX(s, Outcome::fail(EISDIR), [](Root r) { return ::unlink((r + "/d").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOENT), [](Root r) { return ::unlink((r + "/missing").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOTDIR), [](Root r) { return ::unlink((r + "/f/x").c_str()); });
  // A file unlinked while open stays readable through the open descriptor.
  CHECK_LIKE_LINUX(s, Outcome::ok(4), [](Root r) {
    int fd = ::open((r + "/f").c_str(), O_RDONLY);
    if (fd < 0) return -1L;
    long rc = ::unlink((r + "/f").c_str());
    char buf[8] = {};
    if (rc == 0) rc = ::read(fd, buf, sizeof buf);
    if (rc == 4 && std::string(buf, 4) != "data") rc = -2;
    ::close(fd);
    return rc;
  });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOENT), [](Root r) { return ::access((r + "/f").c_str(), F_OK); });
}

namespace {

// Whether a storage server still holds an object of inode `ino` (objects
// are files named <ino in hex>.<index> under each server's data directory).
bool has_objects(TestCluster& c, ino_t ino) {
  char prefix[32];
  std::snprintf(prefix, sizeof prefix, "%016llx.", static_cast<unsigned long long>(ino));
  for (const auto& server : c.config().servers) {
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(server.data_dir, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
      if (it->path().filename().string().rfind(prefix, 0) == 0) return true;
  }
  return false;
}

// Waits until the objects of inode `ino` are deleted; false if that does not
// happen by a deadline that only guards against waiting forever (the metadata
// server sweeps unlinked files every half second).
bool objects_deleted(TestCluster& c, ino_t ino) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (has_objects(c, ino) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return !has_objects(c, ino);
}

// Returns once the metadata server has swept unlinked files at least once
// from now: the objects of a file unlinked here (and not open) disappear.
// The sweep goes in inode order, so older unlinked files were swept too.
void wait_for_orphan_sweep(TestCluster& c, const std::string& dir) {
  const std::string canary = dir + "/canary";
  write_file(canary, "x");
  const ino_t ino = stat_of(canary).st_ino;
  REQUIRE(has_objects(c, ino));
  REQUIRE(::unlink(canary.c_str()) == 0);
  REQUIRE_MESSAGE(objects_deleted(c, ino), "an unlinked file's objects were never deleted");
}

}  // namespace

TEST_CASE("a file unlinked or replaced by rename while open stays readable until it is closed") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "open-orphans");
  const std::string old_data = pattern(3 << 20, 11);
  std::vector<std::pair<std::string, int>> held;  // root, descriptor
  for (const auto& root : s.both()) {
    write_file(root + "/replaced", old_data);
    write_file(root + "/newer", "newer");
    write_file(root + "/unlinked", old_data);
    int replaced = ::open((root + "/replaced").c_str(), O_RDONLY);
    int unlinked = ::open((root + "/unlinked").c_str(), O_RDWR);
    REQUIRE(replaced >= 0);
    REQUIRE(unlinked >= 0);
    REQUIRE(::rename((root + "/newer").c_str(), (root + "/replaced").c_str()) == 0);
    REQUIRE(::unlink((root + "/unlinked").c_str()) == 0);
    held.emplace_back(root, replaced);
    held.emplace_back(root, unlinked);
  }
  // Give the metadata server every chance to throw the data away.
  wait_for_orphan_sweep(*c, s.pvfs());
  for (const auto& [root, fd] : held) {
    CAPTURE(root);
    std::string back(old_data.size(), '\0');
    CHECK(::pread(fd, back.data(), back.size(), 0) == static_cast<ssize_t>(back.size()));
    CHECK_MESSAGE(difference(old_data, back).empty(), difference(old_data, back));
    struct stat st {};
    REQUIRE(::fstat(fd, &st) == 0);
    CHECK(st.st_nlink == 0);
  }
  for (const auto& root : s.both()) CHECK(read_file(root + "/replaced") == "newer");
  // Closed, their space goes back.
  std::vector<ino_t> inodes;
  for (const auto& [root, fd] : held) {
    struct stat st {};
    REQUIRE(::fstat(fd, &st) == 0);
    if (root == s.pvfs()) inodes.push_back(st.st_ino);
    CHECK(::close(fd) == 0);
  }
  for (ino_t ino : inodes) CHECK(objects_deleted(*c, ino));
}

TEST_CASE("rename replaces files and empty directories and refuses what Linux refuses") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "rename");
  for (const auto& root : s.both()) {
    write_file(root + "/a", "contents of a");
    write_file(root + "/b", "contents of b");
    REQUIRE(::mkdir((root + "/d").c_str(), 0755) == 0);
    REQUIRE(::mkdir((root + "/empty").c_str(), 0755) == 0);
    REQUIRE(::mkdir((root + "/full").c_str(), 0755) == 0);
    write_file(root + "/full/x", "x");
    REQUIRE(::mkdir((root + "/d/sub").c_str(), 0755) == 0);
  }
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::rename((r + "/a").c_str(), (r + "/b").c_str()); });
  for (const auto& root : s.both()) {
    CHECK(read_file(root + "/b") == "contents of a");
    CHECK(::access((root + "/a").c_str(), F_OK) != 0);
  }
  CHECK_LIKE_LINUX(s, Outcome::ok(),
                   [](Root r) { return ::rename((r + "/d").c_str(), (r + "/empty").c_str()); });
  for (const auto& root : s.both()) CHECK(S_ISDIR(stat_of(root + "/empty/sub").st_mode));
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOTEMPTY),
                   [](Root r) { return ::rename((r + "/empty").c_str(), (r + "/full").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::fail(EISDIR),
                   [](Root r) { return ::rename((r + "/b").c_str(), (r + "/full").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOTDIR),
                   [](Root r) { return ::rename((r + "/full").c_str(), (r + "/b").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::fail(EINVAL),
                   [](Root r) { return ::rename((r + "/empty").c_str(), (r + "/empty/sub/in").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOENT),
                   [](Root r) { return ::rename((r + "/missing").c_str(), (r + "/x").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOENT),
                   [](Root r) { return ::rename((r + "/b").c_str(), (r + "/no/x").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::rename((r + "/b").c_str(), (r + "/b").c_str()); });
  // Moving a directory to another parent updates both parents' link counts.
  CHECK_LIKE_LINUX(s, Outcome::ok(),
                   [](Root r) { return ::rename((r + "/empty/sub").c_str(), (r + "/full/sub").c_str()); });
  for (const auto& root : s.both()) {
    CHECK(stat_of(root + "/empty").st_nlink == 2);
    CHECK(stat_of(root + "/full").st_nlink == 3);
  }
  // Two names of one file: rename does nothing and both stay.
  on_both(s, [](Root r) { return ::link((r + "/b").c_str(), (r + "/b2").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::rename((r + "/b").c_str(), (r + "/b2").c_str()); });
  for (const auto& root : s.both()) {
    CHECK(::access((root + "/b").c_str(), F_OK) == 0);
    CHECK(stat_of(root + "/b2").st_nlink == 2);
  }
}

TEST_CASE("renameat2 RENAME_NOREPLACE refuses a target and RENAME_EXCHANGE swaps two names") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "renameat2");
  for (const auto& root : s.both()) {
    write_file(root + "/a", "A");
    write_file(root + "/b", "B");
    REQUIRE(::mkdir((root + "/d").c_str(), 0755) == 0);
    write_file(root + "/d/inside", "I");
  }
  CHECK_LIKE_LINUX(s, Outcome::fail(EEXIST), [](Root r) {
    return ::renameat2(AT_FDCWD, (r + "/a").c_str(), AT_FDCWD, (r + "/b").c_str(), RENAME_NOREPLACE);
  });
  for (const auto& root : s.both()) CHECK(read_file(root + "/b") == "B");
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) {
    return ::renameat2(AT_FDCWD, (r + "/a").c_str(), AT_FDCWD, (r + "/c").c_str(), RENAME_NOREPLACE);
  });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) {
    return ::renameat2(AT_FDCWD, (r + "/b").c_str(), AT_FDCWD, (r + "/c").c_str(), RENAME_EXCHANGE);
  });
  for (const auto& root : s.both()) {
    CHECK(read_file(root + "/b") == "A");
    CHECK(read_file(root + "/c") == "B");
  }
  // A file and a directory trade places.
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) {
    return ::renameat2(AT_FDCWD, (r + "/b").c_str(), AT_FDCWD, (r + "/d").c_str(), RENAME_EXCHANGE);
  });
  for (const auto& root : s.both()) {
    CHECK(read_file(root + "/d") == "A");
    CHECK(read_file(root + "/b/inside") == "I");
  }
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOENT), [](Root r) {
    return ::renameat2(AT_FDCWD, (r + "/c").c_str(), AT_FDCWD, (r + "/none").c_str(), RENAME_EXCHANGE);
  });
  CHECK_LIKE_LINUX(s, Outcome::fail(EINVAL), [](Root r) {
    return ::renameat2(AT_FDCWD, (r + "/c").c_str(), AT_FDCWD, (r + "/d").c_str(),
                       RENAME_EXCHANGE | RENAME_NOREPLACE);
  });
}

TEST_CASE("link adds names that share an inode and counts them; refuses existing names and directories") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "link");
  for (const auto& root : s.both()) write_file(root + "/f", "shared");
  on_both(s, [](Root r) { return ::mkdir((r + "/d").c_str(), 0755); });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::link((r + "/f").c_str(), (r + "/d/g").c_str()); });
  for (const auto& root : s.both()) {
    CHECK(stat_of(root + "/f").st_nlink == 2);
    CHECK(stat_of(root + "/d/g").st_ino == stat_of(root + "/f").st_ino);
    CHECK(read_file(root + "/d/g") == "shared");
  }
  // A write through one name is seen through the other.
  for (const auto& root : s.both()) {
    write_file(root + "/d/g", "changed");
    CHECK(read_file(root + "/f") == "changed");
  }
  CHECK_LIKE_LINUX(s, Outcome::fail(EEXIST), [](Root r) { return ::link((r + "/f").c_str(), (r + "/d/g").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::fail(EPERM), [](Root r) { return ::link((r + "/d").c_str(), (r + "/d2").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOENT), [](Root r) { return ::link((r + "/none").c_str(), (r + "/x").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::link((r + "/f").c_str(), (r + "/h").c_str()); });
  for (const auto& root : s.both()) CHECK(stat_of(root + "/f").st_nlink == 3);
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::unlink((r + "/f").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::unlink((r + "/d/g").c_str()); });
  for (const auto& root : s.both()) {
    CHECK(stat_of(root + "/h").st_nlink == 1);
    CHECK(read_file(root + "/h") == "changed");
  }
}

TEST_CASE("symlink and readlink store a target, and opening a symlink loop fails with ELOOP") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "symlink");
  for (const auto& root : s.both()) write_file(root + "/target", "through the link");
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::symlink("target", (r + "/l").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::ok(6), [](Root r) {
    char buf[64];
    return ::readlink((r + "/l").c_str(), buf, sizeof buf);
  });
  // readlink truncates silently to the buffer.
  CHECK_LIKE_LINUX(s, Outcome::ok(3), [](Root r) {
    char buf[3];
    return ::readlink((r + "/l").c_str(), buf, sizeof buf);
  });
  for (const auto& root : s.both()) CHECK(read_file(root + "/l") == "through the link");
  const std::string long_target(4000, 't');
  CHECK_LIKE_LINUX(s, Outcome::ok(4000), [&long_target](Root r) {
    char buf[4096];
    long rc = ::symlink(long_target.c_str(), (r + "/long").c_str());
    if (rc == 0) rc = ::readlink((r + "/long").c_str(), buf, sizeof buf);
    if (rc == 4000 && std::string(buf, 4000) != long_target) rc = -2;
    return rc;
  });
  CHECK_LIKE_LINUX(s, Outcome::fail(EEXIST), [](Root r) { return ::symlink("x", (r + "/l").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::fail(EINVAL), [](Root r) {
    char buf[64];
    return ::readlink((r + "/target").c_str(), buf, sizeof buf);
  });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOENT), [](Root r) { return ::symlink("", (r + "/empty").c_str()); });
  on_both(s, [](Root r) { return ::symlink("loop2", (r + "/loop1").c_str()); });
  on_both(s, [](Root r) { return ::symlink("loop1", (r + "/loop2").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::fail(ELOOP), [](Root r) { return open_close(r + "/loop1", O_RDONLY); });
  CHECK_LIKE_LINUX(s, Outcome::fail(ELOOP),
                   [](Root r) { return open_close(r + "/loop1", O_CREAT | O_WRONLY); });
  CHECK_LIKE_LINUX(s, Outcome::fail(ELOOP), [](Root r) { return open_close(r + "/l", O_RDONLY | O_NOFOLLOW); });
  // A link to a directory is followed in the middle of a path.
  on_both(s, [](Root r) { return ::mkdir((r + "/dir").c_str(), 0755); });
  on_both(s, [](Root r) { return ::symlink("dir", (r + "/dl").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return open_close(r + "/dl/new", O_CREAT | O_WRONLY); });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::access((r + "/dir/new").c_str(), F_OK); });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::unlink((r + "/dl").c_str()); });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::access((r + "/dir/new").c_str(), F_OK); });
}

TEST_CASE("mknod makes a FIFO that works as a pipe") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "fifo");
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::mknod((r + "/p").c_str(), S_IFIFO | 0640, 0); });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::mkfifo((r + "/q").c_str(), 0600); });
  CHECK_LIKE_LINUX(s, Outcome::fail(EEXIST), [](Root r) { return ::mkfifo((r + "/q").c_str(), 0600); });
  for (const auto& root : s.both()) {
    CAPTURE(root);
    const struct stat st = stat_of(root + "/p");
    CHECK(S_ISFIFO(st.st_mode));
    CHECK((st.st_mode & 07777) == 0640);
    CHECK(st.st_size == 0);
  }
  CHECK_LIKE_LINUX(s, Outcome::ok(5), [](Root r) {
    int rd = ::open((r + "/p").c_str(), O_RDONLY | O_NONBLOCK);
    if (rd < 0) return -1L;
    int wr = ::open((r + "/p").c_str(), O_WRONLY | O_NONBLOCK);
    long rc = wr < 0 ? -1 : ::write(wr, "hello", 5);
    char buf[16];
    if (rc == 5) rc = ::read(rd, buf, sizeof buf);
    if (rc == 5 && std::string(buf, 5) != "hello") rc = -2;
    if (wr >= 0) ::close(wr);
    ::close(rd);
    return rc;
  });
}

TEST_CASE("a 256-byte name fails with ENAMETOOLONG and a 255-byte name works") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "namemax");
  const std::string ok_name(255, 'n');
  const std::string long_name(256, 'n');
  CHECK_LIKE_LINUX(s, Outcome::ok(), [&](Root r) { return open_close(r + "/" + ok_name, O_CREAT | O_WRONLY); });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [&](Root r) { return ::access((r + "/" + ok_name).c_str(), F_OK); });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENAMETOOLONG),
                   [&](Root r) { return open_close(r + "/" + long_name, O_CREAT | O_WRONLY); });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENAMETOOLONG),
                   [&](Root r) { return ::mkdir((r + "/" + long_name).c_str(), 0755); });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENAMETOOLONG), [&](Root r) {
    struct stat st {};
    return ::stat((r + "/" + long_name).c_str(), &st);
  });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENAMETOOLONG), [&](Root r) {
    return ::rename((r + "/" + ok_name).c_str(), (r + "/" + long_name).c_str());
  });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENAMETOOLONG),
                   [&](Root r) { return ::symlink("x", (r + "/" + long_name).c_str()); });
}

TEST_CASE("access() checks existence and permission bits as on Linux") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "access");
  for (const auto& root : s.both()) {
    write_file(root + "/plain", "", 0644);
    write_file(root + "/script", "", 0755);
    write_file(root + "/none", "", 0000);
  }
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::access((r + "/plain").c_str(), F_OK); });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::access((r + "/plain").c_str(), R_OK | W_OK); });
  // Root may read and write anything, but executes only what has an x bit.
  CHECK_LIKE_LINUX(s, Outcome::fail(EACCES), [](Root r) { return ::access((r + "/plain").c_str(), X_OK); });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::access((r + "/script").c_str(), X_OK); });
  CHECK_LIKE_LINUX(s, Outcome::ok(), [](Root r) { return ::access((r + "/none").c_str(), R_OK | W_OK); });
  CHECK_LIKE_LINUX(s, Outcome::fail(ENOENT), [](Root r) { return ::access((r + "/missing").c_str(), F_OK); });
  CHECK_LIKE_LINUX(s, Outcome::fail(EINVAL), [](Root r) { return ::access((r + "/plain").c_str(), 0100); });
}
