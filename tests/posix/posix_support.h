// Helpers shared by the POSIX tests on a real pvfs mount: one mounted
// cluster per test binary, scratch directories side by side on the mount and
// on a local file system, outcomes (return value and errno) to compare the
// two, and forked children (as another user, or several at once) that report
// through a pipe. Children leave with _exit() so that they never run the
// parent's static destructors (which would take the shared cluster down).
// Not thread-safe: tests are single-threaded.
#pragma once

#include <sys/types.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tests/support/test_cluster.h"

namespace pvfs::test::posix {

// The mounted cluster shared by every test case of this binary, started on
// first use with `mount_options` (later calls ignore theirs) and taken down
// when the program exits. nullptr when /dev/fuse is missing outside CI (a
// MESSAGE says so; the caller returns); with CI=true that is a FAIL. The
// cluster's folder is made world-searchable so that other uids reach the mount.
TestCluster* shared_cluster(const std::string& mount_options = {});

// Whether FUSE tests can run; false after a MESSAGE outside CI, FAIL in CI.
bool fuse_or_skip();

// A fresh directory on the mount and one on the local file system (a TempDir
// under $TMPDIR or /tmp), both mode 0755, for one test case.
class Scratch {
 public:
  Scratch(TestCluster& cluster, const std::string& name);
  std::string pvfs() const { return pvfs_.string(); }
  std::string local() const { return local_.path().string(); }
  // pvfs() and local(), in the order local first.
  std::vector<std::string> both() const { return {local(), pvfs()}; }

 private:
  TempDir local_;
  std::filesystem::path pvfs_;
};

// A second client: the cluster mounted once more, by its own pvfsmount
// process with its own kernel caches, at a fresh folder. Unmounted on
// destruction. REQUIREs that the mount works.
class SecondMount {
 public:
  explicit SecondMount(TestCluster& cluster, const std::string& options = {});
  ~SecondMount();
  SecondMount(const SecondMount&) = delete;
  SecondMount& operator=(const SecondMount&) = delete;
  // `path` on the first mount, as seen through this one.
  std::string view(const std::string& path) const;

 private:
  TestCluster& cluster_;
  TempDir dir_;
  CleanupOnSignal on_signal_;  // detaches the mount if the program is stopped
  std::filesystem::path mnt_;
  bool mounted_ = false;
};

// What a system call did: its return value and, when it failed, errno.
struct Outcome {
  long rc = 0;
  int err = 0;
  static Outcome ok(long rc = 0) { return {rc, 0}; }
  static Outcome fail(int err) { return {-1, err}; }
  bool operator==(const Outcome& other) const { return rc == other.rc && err == other.err; }
};
std::ostream& operator<<(std::ostream& out, const Outcome& o);

// Runs `call` with errno cleared and records its result.
template <typename F>
Outcome outcome(F&& call) {
  errno = 0;
  long rc = static_cast<long>(call());
  return Outcome{rc, rc < 0 ? errno : 0};
}

// Runs `call(root)` (a callable taking the root as std::string and returning
// a number, -1 with errno on failure) on the local directory, then on the
// mount; checks that Linux gives `expected` and pvfs the same.
#define CHECK_LIKE_LINUX(scratch, expected, ...)                                          \
  do {                                                                                    \
    auto call_ = (__VA_ARGS__);                                                           \
    const ::pvfs::test::posix::Outcome local_ =                                           \
        ::pvfs::test::posix::outcome([&] { return call_((scratch).local()); });           \
    const ::pvfs::test::posix::Outcome pvfs_ =                                            \
        ::pvfs::test::posix::outcome([&] { return call_((scratch).pvfs()); });            \
    INFO("call: " #__VA_ARGS__);                                                          \
    CHECK_MESSAGE(local_ == (expected), "the local file system disagrees with the test"); \
    CHECK(pvfs_ == local_);                                                               \
  } while (0)

// The same without a stated expectation: pvfs must only agree with Linux.
#define CHECK_SAME_AS_LINUX(scratch, ...)                                       \
  do {                                                                          \
    auto call_ = (__VA_ARGS__);                                                 \
    const ::pvfs::test::posix::Outcome local_ =                                 \
        ::pvfs::test::posix::outcome([&] { return call_((scratch).local()); }); \
    const ::pvfs::test::posix::Outcome pvfs_ =                                  \
        ::pvfs::test::posix::outcome([&] { return call_((scratch).pvfs()); });  \
    INFO("call: " #__VA_ARGS__);                                                \
    CHECK(pvfs_ == local_);                                                     \
  } while (0)

std::ostream& operator<<(std::ostream& out, const std::vector<Outcome>& steps);

// Runs `setup(root)` on both roots; requires it to succeed (return >= 0).
void on_both(const Scratch& scratch, const std::function<long(const std::string&)>& setup);

// Writes and reads whole files; REQUIRE on failure.
void write_file(const std::string& path, const std::string& data, mode_t mode = 0644);
std::string read_file(const std::string& path);

// Deterministic bytes for offset `offset` onwards of a stream named `seed`.
std::string pattern(size_t size, uint64_t seed, uint64_t offset = 0);
// "" when equal, else the sizes and the first differing offset.
std::string difference(const std::string& expected, const std::string& actual);

// The names in directory `path` without "." and "..", in readdir order
// (with duplicates, if the file system lists any twice).
std::vector<std::string> list_dir(const std::string& path);

// The identity a child process takes.
struct Identity {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};
// Users for permission tests: two ordinary users in separate groups.
inline const Identity kAlice{4101, 4101, {4101}};
inline const Identity kBob{4202, 4202, {4202}};
// Root, keeping its capabilities (CAP_FSETID: its writes keep set-id bits).
inline const Identity kRoot{0, 0, {0}};

// Forks a child that takes `who` (setgroups, setresgid, setresuid), runs
// `body` and sends back the numbers it returns (typically 0 or an errno).
// REQUIREs that the child ran to the end.
std::vector<long> run_as(const Identity& who, const std::function<std::vector<long>()>& body);

// Forks `count` children running `body(index)` at once; returns their exit
// statuses (body's return value, or 128+signal). Each child leaves with
// _exit().
std::vector<int> run_children(int count, const std::function<int(int)>& body);

// errno of the last call as "ENOENT (No such file or directory)".
std::string errno_name(int err);

}  // namespace pvfs::test::posix
