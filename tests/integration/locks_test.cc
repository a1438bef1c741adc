// Locks across client nodes (issue 19), on two real mounts of one cluster:
// each pvfsmount is a client node of its own. fcntl locks exclude each other
// across mounts, F_SETLKW waiters wake in arrival order, a signal interrupts
// a wait with EINTR, a cycle gets EDEADLK, flock and OFD locks hold too, a
// mount killed with SIGKILL loses its locks within its lease (and keeps them
// while alive), and the ROMIO data-sieving pattern (lock, read, modify,
// write back, unlock a neighbouring range, from processes on both mounts)
// leaves the file equal to its model, which -o locks=local does not; and
// locks survive the kill -9 of the metadata server keeping them (take-over)
// and the moves of their file sets back to it.
// Every lock is taken by a process of its own (a lock owner), forked from
// the test. Needs /dev/fuse.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tests/integration/session.h"
#include "tests/support/run_tool.h"

namespace pvfs::test::locks_test {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;


// A cluster mounted twice: two pvfsmount processes, two client nodes.
struct TwoMounts {
  explicit TwoMounts(const std::string& options = {}, uint32_t lease_ms = 5000)
      : TwoMounts(lease(lease_ms), options) {}
  TwoMounts(const ClusterOptions& cluster, const std::string& options)
      : tc(cluster, true, options.empty() ? std::string("direct_io") : options) {
    m1 = fs::absolute(tc.mnt());
    m2 = fs::absolute(tc.dir() / "mnt2");
    fs::create_directories(m2);
    const std::string opts = options.empty() ? std::string("direct_io") : options;
    const std::string mount = pvfsmount_binary() + " -o " + opts + " " + tc.cluster().config_path().string() +
                              " " + m2.string() + " >" + (tc.dir() / "mount2.log").string() + " 2>&1";
    std::fflush(nullptr);
    REQUIRE_MESSAGE(std::system(mount.c_str()) == 0, "second mount failed: " << mount);
    mounted2 = true;
  }
  ~TwoMounts() {
    if (!mounted2) return;
    std::fflush(nullptr);
    const std::string q = "'" + m2.string() + "'";
    if (std::system(("fusermount3 -u " + q + " 2>/dev/null").c_str()) != 0)
      (void)!std::system(("umount -l " + q + " 2>/dev/null").c_str());
    if (int pid = pvfsmount_pid(m2); pid > 0) ::kill(pid, SIGKILL);
  }
  static ClusterOptions lease(uint32_t lease_ms) {
    ClusterOptions o = with_servers(2);
    o.lock_lease_ms = lease_ms;
    return o;
  }
  // pvfsmount beside the daemons the cluster runs.
  std::string pvfsmount_binary() {
    const int pid = pvfsmount_pid(m1);
    REQUIRE(pid > 0);
    return fs::read_symlink(fs::path("/proc") / std::to_string(pid) / "exe").string();
  }
  std::string on1(const std::string& name) const { return (m1 / name).string(); }
  std::string on2(const std::string& name) const { return (m2 / name).string(); }

  TestCluster tc;
  fs::path m1, m2;
  bool mounted2 = false;
};

// fcntl(fd, cmd) on [start, start+len) (len 0: to the end): 0 or errno.
int lock(int fd, int cmd, short type, off_t start, off_t len) {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = start;
  fl.l_len = len;
  return ::fcntl(fd, cmd, &fl) == 0 ? 0 : errno;
}

// A forked process (a lock owner of its own) running `body(in, out)` with
// pipes to and from the test; its return value is its exit status.
struct Proc {
  pid_t pid = -1;
  int to = -1, from = -1;
  explicit Proc(const std::function<int(int in, int out)>& body) {
    int down[2], up[2];
    REQUIRE(::pipe(down) == 0);
    REQUIRE(::pipe(up) == 0);
    std::fflush(nullptr);
    pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(down[1]);
      ::close(up[0]);
      ::_exit(body(down[0], up[1]));
    }
    ::close(down[0]);
    ::close(up[1]);
    to = down[1];
    from = up[0];
  }
  ~Proc() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    ::close(to);
    ::close(from);
  }
  void send(char c) const { REQUIRE(::write(to, &c, 1) == 1); }
  // The next byte from the process, or 0 when it closed the pipe.
  char next() const {
    char c = 0;
    return ::read(from, &c, 1) == 1 ? c : 0;
  }
  int wait() {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
};

// In a child: one byte to the test.
void say(int out, char c) { (void)!::write(out, &c, 1); }
// In a child: waits for the test's next byte.
char hear(int in) {
  char c = 0;
  return ::read(in, &c, 1) == 1 ? c : 0;
}

void make_file(const std::string& path, size_t bytes) {
  int fd = ::open(path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0644);
  REQUIRE(fd >= 0);
  std::vector<char> zeros(bytes, 0);
  REQUIRE(::pwrite(fd, zeros.data(), bytes, 0) == static_cast<ssize_t>(bytes));
  REQUIRE(::close(fd) == 0);
}

// A process on `path` holding lock (type, start, len), 'L' once held (or
// 'E'), then doing what the test says: 'D' downgrade to a read lock, 'Q'
// quit (closing, which drops the lock).
Proc holder(const std::string& path, short type, off_t start, off_t len) {
  return Proc([=](int in, int out) {
    int fd = ::open(path.c_str(), O_RDWR);
    if (fd < 0 || lock(fd, F_SETLK, type, start, len) != 0) {
      say(out, 'E');
      return 1;
    }
    say(out, 'L');
    for (char c = hear(in); c != 'Q' && c != 0; c = hear(in)) {
      if (c == 'D') say(out, lock(fd, F_SETLK, F_RDLCK, start, len) == 0 ? 'L' : 'E');
    }
    ::close(fd);
    return 0;
  });
}

TEST_CASE("an exclusive fcntl lock on one mount keeps out the other mount's locks; shared ones coexist") {
  if (skip_without_fuse()) return;
  TwoMounts two;
  make_file(two.on1("f"), 4096);
  Proc a = holder(two.on1("f"), F_WRLCK, 0, 100);
  REQUIRE(a.next() == 'L');

  int fd = ::open(two.on2("f").c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  CHECK(lock(fd, F_SETLK, F_RDLCK, 50, 10) == EAGAIN);
  CHECK(lock(fd, F_SETLK, F_WRLCK, 99, 1) == EAGAIN);
  struct flock q {};
  q.l_type = F_WRLCK;
  q.l_whence = SEEK_SET;
  REQUIRE(::fcntl(fd, F_GETLK, &q) == 0);
  CHECK(q.l_type == F_WRLCK);
  CHECK(q.l_start == 0);
  CHECK(q.l_len == 100);
  CHECK(q.l_pid == a.pid);
  CHECK(lock(fd, F_SETLK, F_WRLCK, 100, 100) == 0);  // the neighbouring range is free

  // pvfs-ctl locks shows both holders of the file, with their ranges and pids.
  auto listed = run_tool("PVFS_CTL", two.tc.dir(),
                         {"locks", "-c", two.tc.cluster().config_path().string(), two.on2("f")});
  CHECK(listed.status == 0);
  CHECK(listed.out.find("posix write  0-99") != std::string::npos);
  CHECK(listed.out.find("posix write  100-199") != std::string::npos);
  CHECK(listed.out.find(" " + std::to_string(a.pid) + " ") != std::string::npos);
  CHECK(listed.out.find(" " + std::to_string(::getpid()) + " ") != std::string::npos);

  a.send('D');  // the holder downgrades to a read lock
  REQUIRE(a.next() == 'L');
  CHECK(lock(fd, F_SETLK, F_RDLCK, 0, 10) == 0);
  CHECK(lock(fd, F_SETLK, F_WRLCK, 0, 10) == EAGAIN);
  a.send('Q');
  CHECK(a.wait() == 0);
  // The holder's exit (its close) dropped its lock everywhere.
  CHECK(lock(fd, F_SETLK, F_WRLCK, 0, 0) == 0);
  ::close(fd);
  // And our close dropped ours.
  Proc b = holder(two.on1("f"), F_WRLCK, 0, 0);
  CHECK(b.next() == 'L');
  b.send('Q');
}

TEST_CASE("F_SETLKW waiters on two mounts are granted in the order they arrived") {
  if (skip_without_fuse()) return;
  TwoMounts two;
  make_file(two.on1("f"), 4096);
  Proc a = holder(two.on1("f"), F_WRLCK, 0, 1);
  REQUIRE(a.next() == 'L');
  int order[2];
  REQUIRE(::pipe(order) == 0);
  std::vector<std::unique_ptr<Proc>> waiters;
  for (int i = 0; i < 4; ++i) {
    const std::string path = i % 2 == 0 ? two.on2("f") : two.on1("f");
    waiters.push_back(std::make_unique<Proc>([=](int, int out) {
      int fd = ::open(path.c_str(), O_RDWR);
      say(out, 'S');
      if (fd < 0 || lock(fd, F_SETLKW, F_WRLCK, 0, 1) != 0) return 1;
      char me = static_cast<char>('0' + i);
      (void)!::write(order[1], &me, 1);
      ::usleep(50 * 1000);
      ::close(fd);
      return 0;
    }));
    REQUIRE(waiters.back()->next() == 'S');
    // Long enough for its F_SETLKW to reach the manager before the next.
    std::this_thread::sleep_for(milliseconds(400));
  }
  // pvfs-ctl locks lists the four waiters in arrival order.
  auto listed = run_tool("PVFS_CTL", two.tc.dir(), {"locks", "-c", two.tc.cluster().config_path().string()});
  CHECK(listed.status == 0);
  size_t at = listed.out.find("waiting, in arrival order:");
  REQUIRE(at != std::string::npos);
  for (const auto& w : waiters) {
    const size_t found = listed.out.find(" " + std::to_string(w->pid) + " ", at);
    CHECK(found != std::string::npos);
    if (found != std::string::npos) at = found;
  }
  a.send('Q');
  std::string got;
  for (int i = 0; i < 4; ++i) {
    char c = 0;
    REQUIRE(::read(order[0], &c, 1) == 1);
    got += c;
  }
  CHECK(got == "0123");
  for (auto& w : waiters) CHECK(w->wait() == 0);
  ::close(order[0]);
  ::close(order[1]);
}

TEST_CASE("a signal interrupts a waiting F_SETLKW with EINTR and withdraws it; a cycle gets EDEADLK") {
  if (skip_without_fuse()) return;
  TwoMounts two;
  make_file(two.on1("f"), 4096);
  Proc a = holder(two.on1("f"), F_WRLCK, 0, 1);
  REQUIRE(a.next() == 'L');
  Proc w([&](int in, int out) {
    struct sigaction sa {};
    sa.sa_handler = [](int) {};
    ::sigaction(SIGALRM, &sa, nullptr);  // no SA_RESTART: the wait fails with EINTR
    int fd = ::open(two.on2("f").c_str(), O_RDWR);
    ::alarm(1);
    const auto start = Clock::now();
    const int err = lock(fd, F_SETLKW, F_WRLCK, 0, 1);
    const auto ms = std::chrono::duration_cast<milliseconds>(Clock::now() - start).count();
    say(out, err == EINTR ? 'I' : 'X');
    say(out, ms < 3000 ? 'T' : 'S');
    hear(in);
    return 0;
  });
  CHECK(w.next() == 'I');
  CHECK(w.next() == 'T');
  // The withdrawn waiter is not granted when the holder lets go.
  a.send('Q');
  CHECK(a.wait() == 0);
  Proc b = holder(two.on1("f"), F_WRLCK, 0, 1);
  CHECK(b.next() == 'L');
  b.send('Q');
  CHECK(b.wait() == 0);

  // Deadlock: p holds byte 0 on mount 1, q byte 1 on mount 2; p waits for
  // byte 1; q asking for byte 0 would close the cycle.
  Proc p([&](int in, int out) {
    int fd = ::open(two.on1("f").c_str(), O_RDWR);
    if (lock(fd, F_SETLK, F_WRLCK, 0, 1) != 0) return 1;
    say(out, 'L');
    hear(in);
    const int err = lock(fd, F_SETLKW, F_WRLCK, 1, 1);
    say(out, err == 0 ? 'G' : 'X');
    hear(in);
    return 0;
  });
  REQUIRE(p.next() == 'L');
  Proc q([&](int in, int out) {
    int fd = ::open(two.on2("f").c_str(), O_RDWR);
    if (lock(fd, F_SETLK, F_WRLCK, 1, 1) != 0) return 1;
    say(out, 'L');
    hear(in);
    const int err = lock(fd, F_SETLKW, F_WRLCK, 0, 1);
    say(out, err == EDEADLK ? 'D' : 'X');
    hear(in);
    ::close(fd);  // lets p have byte 1
    hear(in);
    return 0;
  });
  REQUIRE(q.next() == 'L');
  p.send('w');
  std::this_thread::sleep_for(milliseconds(400));  // p's wait reaches the manager
  q.send('w');
  CHECK(q.next() == 'D');
  q.send('c');
  CHECK(p.next() == 'G');
}

TEST_CASE("flock locks hold across mounts, apart from POSIX locks; OFD locks hold and go with their last close") {
  if (skip_without_fuse()) return;
  TwoMounts two;
  make_file(two.on1("f"), 4096);
  Proc a([&](int in, int out) {
    int fd = ::open(two.on1("f").c_str(), O_RDWR);
    say(out, fd >= 0 && ::flock(fd, LOCK_EX) == 0 ? 'L' : 'E');
    hear(in);
    return 0;
  });
  REQUIRE(a.next() == 'L');
  int fd2 = ::open(two.on2("f").c_str(), O_RDWR);
  REQUIRE(fd2 >= 0);
  CHECK((::flock(fd2, LOCK_SH | LOCK_NB) == 0 ? 0 : errno) == EWOULDBLOCK);
  CHECK((::flock(fd2, LOCK_EX | LOCK_NB) == 0 ? 0 : errno) == EWOULDBLOCK);
  CHECK(lock(fd2, F_SETLK, F_WRLCK, 0, 0) == 0);  // another namespace
  CHECK(lock(fd2, F_SETLK, F_UNLCK, 0, 0) == 0);
  a.send('Q');
  CHECK(a.wait() == 0);
  // The holder's description is released (FUSE release) after it exited.
  CHECK(eventually([&] { return ::flock(fd2, LOCK_EX | LOCK_NB) == 0; }, milliseconds(5000)));
  ::close(fd2);

  // OFD: owned by the open file description, so two descriptions in one
  // process conflict, and POSIX locks of other processes too.
  int o1 = ::open(two.on1("f").c_str(), O_RDWR);
  int o2 = ::open(two.on2("f").c_str(), O_RDWR);
  REQUIRE(o1 >= 0);
  REQUIRE(o2 >= 0);
  CHECK(lock(o1, F_OFD_SETLK, F_WRLCK, 0, 10) == 0);
  CHECK(lock(o2, F_OFD_SETLK, F_RDLCK, 5, 1) == EAGAIN);
  CHECK(lock(o2, F_OFD_SETLK, F_RDLCK, 10, 10) == 0);
  Proc posix([&](int, int out) {
    int fd = ::open(two.on2("f").c_str(), O_RDWR);
    say(out, lock(fd, F_SETLK, F_WRLCK, 9, 1) == EAGAIN ? 'A' : 'X');
    return 0;
  });
  CHECK(posix.next() == 'A');
  CHECK(posix.wait() == 0);
  // The description's last close drops its OFD lock (FUSE sends that
  // release after close(2) has returned: shortly after).
  ::close(o1);
  CHECK(eventually([&] { return lock(o2, F_OFD_SETLK, F_WRLCK, 0, 10) == 0; }, milliseconds(5000)));
  ::close(o2);
}

TEST_CASE("a mount keeps its locks while alive and loses them within its lease when killed with SIGKILL") {
  if (skip_without_fuse()) return;
  constexpr uint32_t kLeaseMs = 1500;
  TwoMounts two({}, kLeaseMs);
  make_file(two.on1("f"), 4096);
  Proc a = holder(two.on2("f"), F_WRLCK, 0, 0);
  REQUIRE(a.next() == 'L');
  int fd = ::open(two.on1("f").c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  // Two leases later the live mount still holds it (it renews).
  std::this_thread::sleep_for(milliseconds(2 * kLeaseMs));
  CHECK(lock(fd, F_SETLK, F_WRLCK, 0, 1) == EAGAIN);

  const int mounter = pvfsmount_pid(two.m2);
  REQUIRE(mounter > 0);
  REQUIRE(::kill(mounter, SIGKILL) == 0);
  const auto killed = Clock::now();
  // The waiter on the other mount is granted once the lease lapses.
  CHECK(lock(fd, F_SETLKW, F_WRLCK, 0, 1) == 0);
  const auto waited = std::chrono::duration_cast<milliseconds>(Clock::now() - killed).count();
  MESSAGE("granted " << waited << " ms after the SIGKILL (lease " << kLeaseMs << " ms)");
  CHECK(waited <= kLeaseMs + 1500);
  ::close(fd);
}

// The ROMIO data-sieving write pattern: `procs` processes, alternately on
// the two mounts, each owning the bytes i with i % procs == its index; each
// round a process locks a random window, reads it, adds one to its own
// bytes in it and writes the whole window back, then unlocks. Returns
// whether the file equals the model (each byte counts its owner's rounds
// that covered it, mod 256).
bool romio_pattern_holds(TwoMounts& two, int procs, int rounds) {
  constexpr size_t kBytes = 8192, kWindow = 256;
  make_file(two.on1("shared"), kBytes);
  std::vector<std::unique_ptr<Proc>> ps;
  for (int p = 0; p < procs; ++p) {
    const std::string path = p % 2 == 0 ? two.on1("shared") : two.on2("shared");
    ps.push_back(std::make_unique<Proc>([=](int in, int out) {
      int fd = ::open(path.c_str(), O_RDWR);
      if (fd < 0) return 2;
      hear(in);
      std::mt19937_64 rng(static_cast<uint64_t>(p) * 7919 + 1);
      std::vector<uint32_t> counts(kBytes, 0);
      char buf[kWindow];
      for (int r = 0; r < rounds; ++r) {
        const off_t start = static_cast<off_t>(rng() % (kBytes - kWindow + 1));
        if (lock(fd, F_SETLKW, F_WRLCK, start, kWindow) != 0) return 3;
        if (::pread(fd, buf, kWindow, start) != static_cast<ssize_t>(kWindow)) return 4;
        for (size_t i = 0; i < kWindow; ++i)
          if ((static_cast<size_t>(start) + i) % static_cast<size_t>(procs) == static_cast<size_t>(p)) {
            ++buf[i];
            ++counts[static_cast<size_t>(start) + i];
          }
        if (::pwrite(fd, buf, kWindow, start) != static_cast<ssize_t>(kWindow)) return 5;
        if (lock(fd, F_SETLK, F_UNLCK, start, kWindow) != 0) return 6;
      }
      ::close(fd);
      // Our counts, for the model.
      const size_t total = kBytes * sizeof(uint32_t);
      for (size_t at = 0; at < total;) {
        const ssize_t n = ::write(out, reinterpret_cast<const char*>(counts.data()) + at, total - at);
        if (n <= 0) return 7;
        at += static_cast<size_t>(n);
      }
      return 0;
    }));
  }
  const auto start = Clock::now();
  for (auto& p : ps) p->send('g');
  std::vector<uint8_t> model(kBytes, 0);
  for (auto& p : ps) {
    std::vector<uint32_t> counts(kBytes, 0);
    size_t got = 0;
    char* raw = reinterpret_cast<char*>(counts.data());
    while (got < kBytes * sizeof(uint32_t)) {
      const ssize_t n = ::read(p->from, raw + got, kBytes * sizeof(uint32_t) - got);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    // Exit status 3-6: a lock, read, write or unlock failed.
    REQUIRE(p->wait() == 0);
    REQUIRE(got == kBytes * sizeof(uint32_t));
    for (size_t i = 0; i < kBytes; ++i) model[i] = static_cast<uint8_t>(model[i] + counts[i]);
  }
  MESSAGE((procs * rounds) << " locked read-modify-writes in "
                         << std::chrono::duration_cast<milliseconds>(Clock::now() - start).count() << " ms");
  std::vector<uint8_t> file(kBytes, 0);
  int fd = ::open(two.on2("shared").c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  REQUIRE(::pread(fd, file.data(), kBytes, 0) == static_cast<ssize_t>(kBytes));
  ::close(fd);
  size_t wrong = 0;
  for (size_t i = 0; i < kBytes; ++i) wrong += file[i] != model[i];
  MESSAGE(wrong << " of " << kBytes << " bytes differ from the model");
  return wrong == 0;
}

TEST_CASE("the ROMIO data-sieving pattern on two mounts leaves the file equal to its model") {
  if (skip_without_fuse()) return;
  // Through the page cache, as ROMIO does: a grant makes the kernel drop
  // what it cached of the file.
  TwoMounts two("locks=cluster");
  CHECK(romio_pattern_holds(two, 4, 500));
}

TEST_CASE("with -o locks=local the same pattern loses updates: the locks do not reach the other mount") {
  if (skip_without_fuse()) return;
  TwoMounts two("locks=local");
  CHECK_FALSE(romio_pattern_holds(two, 4, 500));
}

// File sets in a member's data dir (fileset-N folders; moves in progress
// not counted).
size_t filesets_in(const fs::path& data_dir) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(data_dir, ec)) {
    const std::string name = item.path().filename().string();
    if (item.is_directory() && name.starts_with("fileset-") &&
        name.find_first_not_of("0123456789", 8) == std::string::npos)
      ++n;
  }
  return n;
}

TEST_CASE("locks survive the kill -9 of the metadata server holding them and the moves of their file sets") {
  if (skip_without_fuse()) return;
  ClusterOptions o = TwoMounts::lease(5000);
  o.mds = 3;
  o.fileset_per_top_directory = true;  // every directory in / is a file set
  o.mds_tune_interval_ms = 1000;
  o.mds_dead_after_ms = 3000;
  TwoMounts two(o, "direct_io");
  constexpr int kSets = 8;
  for (int i = 0; i < kSets; ++i) {
    REQUIRE(fs::create_directory(two.m1 / ("set" + std::to_string(i))));
    make_file(two.on1("set" + std::to_string(i) + "/f"), 4096);
  }
  // One process on mount 1 holds a write lock on a file of every set.
  Proc a([&](int in, int out) {
    std::vector<int> fds;
    for (int i = 0; i < kSets; ++i) {
      int fd = ::open(two.on1("set" + std::to_string(i) + "/f").c_str(), O_RDWR);
      if (fd < 0 || lock(fd, F_SETLK, F_WRLCK, 0, 100) != 0) {
        say(out, 'E');
        return 1;
      }
      fds.push_back(fd);
    }
    say(out, 'L');
    hear(in);
    return 0;
  });
  REQUIRE(a.next() == 'L');
  // How many of the sets mount 2 finds locked by a (F_SETLK fails).
  auto locked_seen_from_2 = [&] {
    int n = 0;
    for (int i = 0; i < kSets; ++i) {
      int fd = ::open(two.on2("set" + std::to_string(i) + "/f").c_str(), O_RDWR);
      if (fd < 0) continue;
      struct flock q {};
      q.l_type = F_WRLCK;
      q.l_whence = SEEK_SET;
      if (::fcntl(fd, F_GETLK, &q) == 0 && q.l_type == F_WRLCK && q.l_pid == a.pid && q.l_len == 100) ++n;
      ::close(fd);
    }
    return n;
  };
  REQUIRE(locked_seen_from_2() == kSets);

  // The member holding the most file sets dies; the others take them over
  // from its data dir, locks included.
  std::vector<size_t> before;
  for (const auto& m : two.tc.config().mds) before.push_back(filesets_in(m.data_dir));
  size_t victim = 0;
  for (size_t i = 1; i < before.size(); ++i)
    if (before[i] > before[victim]) victim = i;
  const std::string name = "mds" + std::to_string(two.tc.config().mds[victim].id);
  REQUIRE(two.tc.cluster().kill_daemon(name, SIGKILL).ok());
  CHECK(locked_seen_from_2() == kSets);
  CHECK(filesets_in(two.tc.config().mds[victim].data_dir) == 0);

  // Restarted, it takes file sets again (shipped from the live members):
  // the locks move with them.
  REQUIRE(two.tc.cluster().restart_daemon(name).ok());
  CHECK(eventually([&] { return filesets_in(two.tc.config().mds[victim].data_dir) > 0; }, milliseconds(30000)));
  CHECK(locked_seen_from_2() == kSets);

  // The holder lets go: every lock is free from the other mount.
  a.send('Q');
  CHECK(a.wait() == 0);
  CHECK(eventually([&] { return locked_seen_from_2() == 0; }, milliseconds(5000)));
}

}  // namespace
}  // namespace pvfs::test::locks_test
