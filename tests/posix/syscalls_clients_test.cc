// Two clients of one file system, each with its own kernel caches:
// close-to-open (what one client wrote and closed, the other's next open
// sees), names one makes and removes, and names one removes or replaces
// while the other still has them cached. The other client's kernel then
// holds an inode the MDS no longer has; the calls it makes through that
// name must act on what the name leads to now (the MDS answers stale, the
// kernel looks the name up again), as they do on Linux, where a name
// always leads to what is there.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <filesystem>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "tests/posix/posix_support.h"

namespace {

using namespace pvfs::test;
using namespace pvfs::test::posix;

TestCluster* cluster() { return shared_cluster("allow_other"); }

// Writes `data` to `path` with plain system calls (for a thread: no
// doctest macros); whether every call succeeded.
bool put(const std::string& path, const std::string& data) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return false;
  const bool written = ::write(fd, data.data(), data.size()) == static_cast<ssize_t>(data.size());
  return ::close(fd) == 0 && written;
}

}  // namespace

// Close-to-open across clients: the bridge drops the kernel's cached
// attributes after every open, so a client that looked at a file moments
// before another client rewrote and closed it still sees the new size.
TEST_CASE("a later open on another client sees everything written before a close") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "close-to-open");
  SecondMount other(*c);
  const std::string here = s.pvfs() + "/f";
  const std::string there = other.view(here);
  write_file(here, "short");
  CHECK(read_file(there) == "short");  // the other client now has the file's attributes
  write_file(here, "much longer content here");
  CHECK(read_file(there) == "much longer content here");
  write_file(here, "tiny");
  CHECK(read_file(there) == "tiny");
  int fd = ::open(here.c_str(), O_WRONLY | O_APPEND);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, " + more", 7) == 7);
  REQUIRE(::close(fd) == 0);
  CHECK(read_file(there) == "tiny + more");
}

TEST_CASE("names made and removed on one client are seen by another") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "two-clients");
  SecondMount other(*c);
  // Names the other client has never looked up are found at once; names it
  // never saw as missing are not cached as missing.
  REQUIRE(::mkdir((s.pvfs() + "/dir").c_str(), 0750) == 0);
  write_file(s.pvfs() + "/dir/file", "from the first client");
  CHECK(read_file(other.view(s.pvfs() + "/dir/file")) == "from the first client");
  struct stat st {};
  REQUIRE(::stat(other.view(s.pvfs() + "/dir").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0750);
  CHECK(outcome([&] { return ::access(other.view(s.pvfs() + "/missing").c_str(), F_OK); }) ==
        Outcome::fail(ENOENT));
  write_file(s.pvfs() + "/missing", "now here");
  CHECK(read_file(other.view(s.pvfs() + "/missing")) == "now here");
  // The other client writes; the first reads it back after the close.
  write_file(other.view(s.pvfs() + "/dir/reply"), "from the second client");
  CHECK(read_file(s.pvfs() + "/dir/reply") == "from the second client");
  const std::vector<std::string> listed = list_dir(other.view(s.pvfs() + "/dir"));
  CHECK(std::set<std::string>(listed.begin(), listed.end()) == std::set<std::string>{"file", "reply"});
}

// The way jobs and editors update a file: write a new one, rename it over
// the old. A reader elsewhere must always find a whole version, never ENOENT.
TEST_CASE("a file another client keeps replacing by rename always opens and stats as a whole version") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "replaced-by-rename");
  SecondMount other(*c);
  const std::string here = s.pvfs() + "/status";
  const std::string there = other.view(here);
  write_file(here, "version 0\n");

  std::atomic<bool> stop{false};
  std::atomic<int> replaced{0}, writer_failures{0};
  std::thread writer([&] {
    for (int i = 1; !stop; ++i) {
      const bool ok = put(there + ".tmp", "version " + std::to_string(i) + "\n") &&
                      ::rename((there + ".tmp").c_str(), there.c_str()) == 0;
      ok ? ++replaced : ++writer_failures;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });

  int attempts = 0, missing = 0, other_errors = 0, torn = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < until) {
    ++attempts;
    const int fd = ::open(here.c_str(), O_RDONLY);
    if (fd < 0) {
      ++(errno == ENOENT ? missing : other_errors);
      continue;
    }
    char buf[64];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    ::close(fd);
    if (n < 0) ++other_errors;
    else if (std::string(buf, static_cast<size_t>(n)).rfind("version ", 0) != 0) ++torn;
    struct stat st {};
    if (::stat(here.c_str(), &st) != 0) ++(errno == ENOENT ? missing : other_errors);
  }
  stop = true;
  writer.join();

  INFO(attempts << " opens while " << replaced.load() << " renames replaced the file");
  REQUIRE(writer_failures == 0);
  REQUIRE(replaced > 50);
  // The name always exists: ENOENT would be the old inode's answer.
  CHECK(missing == 0);
  CHECK(torn == 0);
  // The kernel looks a stale name up once more; only a second rename in
  // that moment leaves the caller ESTALE (as on NFS).
  CHECK(other_errors * 50 <= attempts);
}

// SQLite's rollback journal: a process writes the journal, closes it,
// unlinks it; a process on another client that still has the journal's
// name cached then opens it with O_CREAT for its own transaction. It must
// get a new file, not the unlinked one (which the first client's pending
// close still keeps), or its journal and what it writes there are gone.
TEST_CASE("open(O_CREAT) of a name another client unlinked while open creates a new file that keeps its data") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "unlinked-while-open");
  SecondMount other(*c);
  const std::string here = s.pvfs() + "/journal";
  const std::string there = other.view(here);
  write_file(here, "old journal");
  const int kept = ::open(here.c_str(), O_RDONLY);
  REQUIRE(kept >= 0);
  struct stat st {};
  REQUIRE(::stat(there.c_str(), &st) == 0);  // the other client's kernel now has the name
  REQUIRE(st.st_size == 11);
  REQUIRE(::unlink(here.c_str()) == 0);  // still open here: the MDS keeps the file, unnamed

  const int fd = ::open(there.c_str(), O_RDWR | O_CREAT, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::fstat(fd, &st) == 0);
  CHECK(st.st_size == 0);  // a new file, not the unlinked one
  REQUIRE(::write(fd, "new journal", 11) == 11);
  REQUIRE(::close(fd) == 0);

  CHECK(read_file(here) == "new journal");
  CHECK(read_file(there) == "new journal");
  char buf[16] = {};
  CHECK(::pread(kept, buf, sizeof buf, 0) == 11);  // the open file keeps its own bytes
  CHECK(std::string(buf) == "old journal");
  REQUIRE(::close(kept) == 0);

  // Without O_CREAT the name is simply gone, as on Linux.
  write_file(here + "2", "gone");
  const int kept2 = ::open((here + "2").c_str(), O_RDONLY);
  REQUIRE(kept2 >= 0);
  REQUIRE(::stat((there + "2").c_str(), &st) == 0);
  REQUIRE(::unlink((here + "2").c_str()) == 0);
  CHECK(outcome([&] { return ::open((there + "2").c_str(), O_RDONLY); }) == Outcome::fail(ENOENT));
  REQUIRE(::close(kept2) == 0);
}

// The client that keeps an unlinked file open may still open it again by
// its inode, as Linux allows through /proc/self/fd.
TEST_CASE("a file unlinked while open reopens through /proc/self/fd as on Linux") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "reopen-unlinked");
  CHECK_SAME_AS_LINUX(s, [](const std::string& root) -> long {
    const std::string path = root + "/scratch";
    write_file(path, "still here");
    const int fd = ::open(path.c_str(), O_RDWR);
    if (fd < 0 || ::unlink(path.c_str()) != 0) return -1;
    const int again = ::open(("/proc/self/fd/" + std::to_string(fd)).c_str(), O_RDONLY);
    char buf[16] = {};
    const long n = again < 0 ? -1 : ::read(again, buf, sizeof buf);
    const int saved = errno;
    if (again >= 0) ::close(again);
    ::close(fd);
    errno = saved;
    return n == 10 && std::string(buf) == "still here" ? 0 : -1;
  });
}

// `rm -rf out; mkdir out` on one node, then the job's next step writes
// there from another: every call through the old directory's cached name
// must reach the new directory.
TEST_CASE("in a directory another client replaced, create, listing, rename and unlink act on the new one") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "replaced-dir");
  SecondMount other(*c);
  const std::string here = s.pvfs() + "/out";
  const std::string there = other.view(here);
  REQUIRE(::mkdir(here.c_str(), 0755) == 0);
  // Each step: the other client looks at the directory (its kernel keeps
  // the name), then this one replaces it.
  const auto replace = [&](const std::vector<std::string>& files) {
    struct stat st {};
    REQUIRE(::stat(there.c_str(), &st) == 0);
    (void)list_dir(there);
    std::filesystem::remove_all(here);
    REQUIRE(::mkdir(here.c_str(), 0755) == 0);
    for (const auto& f : files) write_file(here + "/" + f, f);
  };

  replace({"a"});
  CHECK(list_dir(there) == std::vector<std::string>{"a"});
  replace({});
  write_file(there + "/created", "from the other client");
  CHECK(read_file(here + "/created") == "from the other client");
  // mkdir (as mknod, symlink and link) is the exception: the kernel does
  // not repeat it when the lookup of its new name finds the directory
  // stale, so the first attempt may fail with ESTALE; never with ENOENT,
  // and the next attempt lands in the new directory.
  replace({});
  const Outcome first = outcome([&] { return ::mkdir((there + "/sub").c_str(), 0755); });
  CHECK((first == Outcome::ok() || first == Outcome::fail(ESTALE)));
  if (first != Outcome::ok()) CHECK(::mkdir((there + "/sub").c_str(), 0755) == 0);
  CHECK(std::filesystem::is_directory(here + "/sub"));
  replace({"old-name"});
  CHECK(::rename((there + "/old-name").c_str(), (there + "/new-name").c_str()) == 0);
  CHECK(list_dir(here) == std::vector<std::string>{"new-name"});
  replace({"doomed", "kept"});
  CHECK(::unlink((there + "/doomed").c_str()) == 0);
  CHECK(list_dir(there) == std::vector<std::string>{"kept"});
}

namespace {

// The size of `path` by stat(2), once it reaches `want` or after 5 s (the
// other client's kernel keeps attributes for the attribute timeout).
off_t size_when(const std::string& path, off_t want) {
  struct stat st {};
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (::stat(path.c_str(), &st) == 0 && st.st_size < want && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return st.st_size;
}

}  // namespace

// `tail -f` of a running job's output from another node: the writer has
// published no size (it does at close or fsync), so the reader's client
// asks the storage servers how far the data goes.
TEST_CASE("a file another client is still writing shows its growth, and its data, before it is closed") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "still-writing");
  SecondMount other(*c);
  const std::string here = s.pvfs() + "/job.out";
  const std::string there = other.view(here);
  const int writer = ::open(here.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(writer >= 0);
  REQUIRE(::write(writer, "step 1\n", 7) == 7);

  CHECK(size_when(there, 7) == 7);
  CHECK(read_file(there) == "step 1\n");
  const int reader = ::open(there.c_str(), O_RDONLY);
  REQUIRE(reader >= 0);

  REQUIRE(::write(writer, "step 2\n", 7) == 7);
  // The reader's open descriptor sees the growth once its kernel asks again.
  struct stat st {};
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (::fstat(reader, &st) == 0 && st.st_size < 14 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(st.st_size == 14);
  char buf[32] = {};
  CHECK(::pread(reader, buf, sizeof buf, 0) == 14);
  CHECK(std::string(buf) == "step 1\nstep 2\n");
  CHECK(size_when(there, 14) == 14);
  REQUIRE(::close(reader) == 0);
  REQUIRE(::close(writer) == 0);
  CHECK(read_file(there) == "step 1\nstep 2\n");
}

// Appends from several nodes to one file (a job's ranks adding lines to a
// shared log with `>>`): each node's kernel would append at the size it
// has cached, so lines of one node landed on lines of another and were
// lost. Every line must be there once, whole, in its writer's order.
TEST_CASE("appends from two clients to one file all land, whole and in each writer's order") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "appends");
  SecondMount other(*c);
  const std::string here = s.pvfs() + "/shared.log";
  const std::string there = other.view(here);
  constexpr int kLines = 300;
  // A keeps one descriptor; B opens, appends and closes for every line (as
  // `echo ... >> file` does); C keeps one descriptor on the other client.
  auto writer = [](std::string path, char tag, bool reopen, std::atomic<int>* failures) {
    int fd = -1;
    for (int i = 0; i < kLines; ++i) {
      if (fd < 0) fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      char line[16];
      const int n = std::snprintf(line, sizeof line, "%c %06d\n", tag, i);
      if (fd < 0 || ::write(fd, line, n) != n) ++*failures;
      if (reopen && fd >= 0) {
        if (::close(fd) != 0) ++*failures;
        fd = -1;
      }
    }
    if (fd >= 0 && ::close(fd) != 0) ++*failures;
  };
  std::atomic<int> failures{0};
  std::thread a(writer, here, 'A', false, &failures);
  std::thread b(writer, here, 'B', true, &failures);
  std::thread c2(writer, there, 'C', false, &failures);
  a.join();
  b.join();
  c2.join();
  CHECK(failures == 0);
  const std::string all = read_file(there);
  CHECK(all.size() == 3u * kLines * 9);
  std::map<char, int> next;
  int bad = 0;
  for (size_t at = 0; at + 9 <= all.size(); at += 9) {
    const std::string line = all.substr(at, 9);
    const char tag = line[0];
    char expected[16];
    std::snprintf(expected, sizeof expected, "%c %06d\n", tag, next[tag]);
    if ((tag != 'A' && tag != 'B' && tag != 'C') || line != expected) ++bad;
    ++next[tag];
  }
  CHECK(bad == 0);
  CHECK(next['A'] == kLines);
  CHECK(next['B'] == kLines);
  CHECK(next['C'] == kLines);
  CHECK(read_file(here) == all);
}

// An append while another node writes the file and has not closed it: the
// MDS does not know that node's size yet, so it asks the storage servers
// where the data ends, and the appended bytes land after it.
TEST_CASE("an append lands after what another client wrote and has not yet closed") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "append-after-open-writer");
  SecondMount other(*c);
  const std::string here = s.pvfs() + "/out";
  const std::string there = other.view(here);
  const int writer = ::open(here.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(writer >= 0);
  // Opened while the file is empty: neither this kernel nor this client
  // has heard of the bytes written next.
  const int appender = ::open(there.c_str(), O_WRONLY | O_APPEND);
  REQUIRE(appender >= 0);
  const std::string body(100000, 'w');
  REQUIRE(::write(writer, body.data(), body.size()) == static_cast<ssize_t>(body.size()));
  REQUIRE(::write(appender, "tail\n", 5) == 5);
  // pwrite on a descriptor opened O_APPEND appends too, on Linux.
  REQUIRE(::pwrite(appender, "more\n", 5, 0) == 5);
  REQUIRE(::close(appender) == 0);
  REQUIRE(::close(writer) == 0);
  CHECK(read_file(here) == body + "tail\nmore\n");
}

// One node truncates a file (a job step rewriting its output with `>`)
// while another still has it open for writing. Sizes only grow at the MDS,
// and the other node's close used to publish the size it had known since
// its open: the file came back at its old length, zeros past the cut.
TEST_CASE("a file another client truncated keeps its new size when a writer that opened it before closes") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "truncated-under-writer");
  SecondMount other(*c);
  const std::string here = s.pvfs() + "/out";
  const std::string there = other.view(here);
  write_file(here, std::string(100000, 'o'));
  // Written before the truncation: the cut removes it, as on Linux.
  const int before = ::open(there.c_str(), O_WRONLY);
  REQUIRE(before >= 0);
  REQUIRE(::pwrite(before, "early", 5, 0) == 5);
  write_file(here, "new\n");  // O_TRUNC, then 4 bytes
  REQUIRE(::close(before) == 0);
  CHECK(read_file(there) == "new\n");
  CHECK(read_file(here) == "new\n");

  // Written after it, past the new end: kept, zeros between.
  const int after = ::open(there.c_str(), O_WRONLY);
  REQUIRE(after >= 0);
  write_file(here, "cut\n");
  REQUIRE(::pwrite(after, "late", 4, 10) == 4);
  REQUIRE(::close(after) == 0);
  CHECK(read_file(here) == std::string("cut\n") + std::string(6, '\0') + "late");
}

// A file removed on one node while another has it open: the other keeps
// reading and writing it until it closes it, as on Linux (and Lustre), and
// no one else can open it any more.
TEST_CASE("a file another client removed stays readable and writable where it is open") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "removed-while-open");
  SecondMount other(*c);
  const std::string here = s.pvfs() + "/input";
  std::string data = pattern(256 * 1024, 7);
  write_file(here, data);
  const int fd = ::open(other.view(here).c_str(), O_RDWR | O_DIRECT);
  REQUIRE(fd >= 0);
  void* raw = nullptr;
  REQUIRE(::posix_memalign(&raw, 4096, data.size()) == 0);
  std::unique_ptr<void, decltype(&std::free)> buf(raw, &std::free);
  REQUIRE(::pread(fd, buf.get(), data.size(), 0) == static_cast<ssize_t>(data.size()));
  REQUIRE(::unlink(here.c_str()) == 0);
  CHECK(outcome([&] { return ::open(here.c_str(), O_RDONLY); }) == Outcome::fail(ENOENT));
  // A new file by that name: the other client's kernel still has the name
  // cached, leading to the file it holds, but an open by name gets the new one.
  write_file(here, "the new input");
  CHECK(read_file(other.view(here)) == "the new input");

  int whole = 0, failed = 0, wrong = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < until) {
    const ssize_t n = ::pread(fd, buf.get(), data.size(), 0);
    if (n < 0) ++failed;
    else if (n == static_cast<ssize_t>(data.size()) && std::memcmp(buf.get(), data.data(), data.size()) == 0) ++whole;
    else ++wrong;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  INFO(whole << " whole reads, " << failed << " failed, " << wrong << " wrong");
  CHECK(failed == 0);
  CHECK(wrong == 0);
  // Written after the removal, read back from the servers (O_DIRECT).
  const std::string change = pattern(4096, 9);
  std::memcpy(buf.get(), change.data(), change.size());
  REQUIRE(::pwrite(fd, buf.get(), change.size(), 8192) == static_cast<ssize_t>(change.size()));
  data.replace(8192, change.size(), change);
  REQUIRE(::pread(fd, buf.get(), data.size(), 0) == static_cast<ssize_t>(data.size()));
  CHECK(std::memcmp(buf.get(), data.data(), data.size()) == 0);
  REQUIRE(::close(fd) == 0);
}
