// System calls on file data, directories listings, extended attributes,
// locks and the file system as a whole, on a real pvfs mount: compared with
// Linux on a local file system where Linux has an answer, checked against
// what a user expects where only pvfs does (layouts, capacity).
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tests/posix/posix_support.h"

namespace {

using namespace pvfs::test;
using namespace pvfs::test::posix;
using Root = const std::string&;

TestCluster* cluster() { return shared_cluster("allow_other"); }

// getxattr into a string; "" and errno set on failure.
std::string get_xattr(const std::string& path, const char* name) {
  char buf[4096];
  ssize_t n = ::getxattr(path.c_str(), name, buf, sizeof buf);
  return n < 0 ? std::string() : std::string(buf, static_cast<size_t>(n));
}

// The number after "key=" in a layout string, or -1.
long layout_field(const std::string& layout, const std::string& key) {
  std::istringstream in(layout);
  std::string part;
  while (in >> part)
    if (part.rfind(key + "=", 0) == 0) return std::strtol(part.c_str() + key.size() + 1, nullptr, 10);
  return -1;
}

// The servers=a,b,c list of a layout string.
std::vector<std::string> layout_servers(const std::string& layout) {
  std::istringstream in(layout);
  std::string part;
  std::vector<std::string> out;
  while (in >> part) {
    if (part.rfind("servers=", 0) != 0) continue;
    std::istringstream list(part.substr(8));
    std::string item;
    while (std::getline(list, item, ',')) out.push_back(item);
  }
  return out;
}

}  // namespace

TEST_CASE("read, write, pread, pwrite and lseek move data and offsets as on Linux") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "rw");
  auto steps = [](Root r) {
    std::vector<Outcome> out;
    const std::string f = r + "/f";
    int fd = ::open(f.c_str(), O_CREAT | O_RDWR, 0644);
    out.push_back(fd < 0 ? Outcome::fail(errno) : Outcome::ok());
    if (fd < 0) return out;
    char buf[64] = {};
    out.push_back(outcome([&] { return ::write(fd, "hello world", 11); }));
    out.push_back(outcome([&] { return ::lseek(fd, 0, SEEK_CUR); }));
    out.push_back(outcome([&] { return ::pwrite(fd, "XY", 2, 3); }));
    out.push_back(outcome([&] { return ::lseek(fd, 0, SEEK_CUR); }));  // pwrite keeps the offset
    out.push_back(outcome([&] { return ::pread(fd, buf, 5, 0); }));
    out.push_back(Outcome::ok(std::string(buf, 5) == "helXY"));
    out.push_back(outcome([&] { return ::read(fd, buf, sizeof buf); }));  // at EOF
    out.push_back(outcome([&] { return ::pread(fd, buf, sizeof buf, 1000); }));
    out.push_back(outcome([&] { return ::lseek(fd, 4, SEEK_SET); }));
    out.push_back(outcome([&] { return ::read(fd, buf, sizeof buf); }));  // short at EOF
    out.push_back(Outcome::ok(std::string(buf, 7) == "Y world"));
    out.push_back(outcome([&] { return ::lseek(fd, -1, SEEK_SET); }));
    out.push_back(outcome([&] { return ::lseek(fd, -3, SEEK_END); }));
    out.push_back(outcome([&] { return ::write(fd, "RLD!", 4); }));  // overwrites and extends
    out.push_back(outcome([&] { return ::pread(fd, buf, 64, 0); }));
    out.push_back(Outcome::ok(std::string(buf, 12) == "helXY woRLD!"));
    out.push_back(outcome([&] { return ::pwrite(fd, "x", 1, -1); }));
    out.push_back(outcome([&] { return ::write(fd, buf, 0); }));
    out.push_back(outcome([&] { return ::fsync(fd); }));
    out.push_back(outcome([&] { return ::fdatasync(fd); }));
    ::close(fd);
    fd = ::open(f.c_str(), O_WRONLY | O_SYNC);
    out.push_back(outcome([&] { return ::pwrite(fd, "sync", 4, 12); }));
    ::close(fd);
    fd = ::open(f.c_str(), O_WRONLY);
    out.push_back(outcome([&] { return ::read(fd, buf, 1); }));  // not open for reading
    ::close(fd);
    fd = ::open(f.c_str(), O_RDONLY);
    out.push_back(outcome([&] { return ::write(fd, "x", 1); }));  // not open for writing
    ::close(fd);
    fd = ::open(r.c_str(), O_RDONLY | O_DIRECTORY);
    out.push_back(outcome([&] { return ::read(fd, buf, 1); }));
    ::close(fd);
    const std::string whole = read_file(f);
    out.push_back(Outcome::ok(whole == "helXY woRLD!sync"));
    return out;
  };
  const std::vector<Outcome> local = steps(s.local());
  const std::vector<Outcome> pvfs = steps(s.pvfs());
  CHECK(pvfs == local);

  // Large, unaligned transfers that cross stripe boundaries.
  for (const auto& root : s.both()) {
    const std::string f = root + "/big";
    const std::string data = pattern((5 << 20) + 333, 7);
    int fd = ::open(f.c_str(), O_CREAT | O_RDWR, 0644);
    REQUIRE(fd >= 0);
    CHECK(::pwrite(fd, data.data(), data.size(), 1000) == static_cast<ssize_t>(data.size()));
    std::string back(data.size(), '\0');
    CHECK(::pread(fd, back.data(), back.size(), 1000) == static_cast<ssize_t>(back.size()));
    CHECK_MESSAGE(difference(data, back).empty(), difference(data, back));
    REQUIRE(::close(fd) == 0);
    const std::string whole = read_file(f);
    CHECK(whole.size() == data.size() + 1000);
    CHECK(whole.compare(0, 1000, std::string(1000, '\0')) == 0);
    CHECK(whole.compare(1000, data.size(), data) == 0);
  }
}

TEST_CASE("a sparse file reads zeros in its holes, and truncation never brings old bytes back") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "sparse");
  auto build = [](Root r) {
    const std::string f = r + "/sparse";
    int fd = ::open(f.c_str(), O_CREAT | O_RDWR, 0644);
    REQUIRE(fd >= 0);
    const std::string head = pattern(300000, 1);
    REQUIRE(::pwrite(fd, head.data(), head.size(), 0) == static_cast<ssize_t>(head.size()));
    REQUIRE(::pwrite(fd, "tail", 4, (5 << 20) + 17) == 4);
    std::vector<long> seen;
    struct stat st {};
    REQUIRE(::fstat(fd, &st) == 0);
    seen.push_back(st.st_size);
    seen.push_back(::lseek(fd, 0, SEEK_END));
    // Seeking past the end and writing leaves another hole.
    REQUIRE(::lseek(fd, 7 << 20, SEEK_SET) == 7 << 20);
    REQUIRE(::write(fd, "far", 3) == 3);
    REQUIRE(::fstat(fd, &st) == 0);
    seen.push_back(st.st_size);
    // Cut into the head mid-stripe, then grow again: the cut bytes read as zeros.
    REQUIRE(::ftruncate(fd, 123457) == 0);
    REQUIRE(::ftruncate(fd, (3 << 20) + 5) == 0);
    REQUIRE(::fstat(fd, &st) == 0);
    seen.push_back(st.st_size);
    REQUIRE(::close(fd) == 0);
    return seen;
  };
  const std::vector<long> local = build(s.local());
  const std::vector<long> pvfs = build(s.pvfs());
  CHECK(local == std::vector<long>{(5 << 20) + 21, (5 << 20) + 21, (7 << 20) + 3, (3 << 20) + 5});
  CHECK(pvfs == local);
  // Offsets past 4 GiB (and far past the end) work like any other.
  auto huge = [](Root r) {
    const std::string f = r + "/huge";
    int fd = ::open(f.c_str(), O_CREAT | O_RDWR, 0644);
    REQUIRE(fd >= 0);
    const off_t far = (off_t{5} << 30) + 7;
    std::vector<long> seen{::pwrite(fd, "far away", 8, far)};
    struct stat st {};
    REQUIRE(::fstat(fd, &st) == 0);
    seen.push_back(static_cast<long>(st.st_size - far));
    char buf[16] = {};
    seen.push_back(::pread(fd, buf, sizeof buf, far - 4));
    seen.push_back(std::string(buf, 12) == std::string("\0\0\0\0far away", 12));
    seen.push_back(::ftruncate(fd, far + 3));
    seen.push_back(::pread(fd, buf, sizeof buf, far));
    ::close(fd);
    return seen;
  };
  CHECK(huge(s.local()) == std::vector<long>{8, 8, 12, 1, 0, 3});
  CHECK(huge(s.pvfs()) == huge(s.local()));
  const std::string expected = read_file(s.local() + "/sparse");
  const std::string actual = read_file(s.pvfs() + "/sparse");
  CHECK_MESSAGE(difference(expected, actual).empty(), difference(expected, actual));
  CHECK(actual.compare(0, 123457, pattern(123457, 1)) == 0);
  CHECK(actual.find_first_not_of('\0', 123457) == std::string::npos);
}

TEST_CASE("fallocate mode 0 extends a file with zeros and keeps its data") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "fallocate");
  auto steps = [](Root r) {
    std::vector<Outcome> out;
    int fd = ::open((r + "/f").c_str(), O_CREAT | O_RDWR, 0644);
    REQUIRE(fd >= 0);
    struct stat st {};
    out.push_back(outcome([&] { return ::write(fd, "keep", 4); }));
    out.push_back(outcome([&] { return ::fallocate(fd, 0, 0, 1 << 20); }));
    out.push_back(outcome([&] { return ::fstat(fd, &st) == 0 ? st.st_size : -1; }));
    out.push_back(outcome([&] { return ::fallocate(fd, 0, 100, 10); }));  // inside: no change
    out.push_back(outcome([&] { return ::fstat(fd, &st) == 0 ? st.st_size : -1; }));
    out.push_back(Outcome::ok(::posix_fallocate(fd, 2 << 20, 4096)));
    out.push_back(outcome([&] { return ::fstat(fd, &st) == 0 ? st.st_size : -1; }));
    out.push_back(outcome([&] { return ::fallocate(fd, 0, -1, 10); }));
    out.push_back(outcome([&] { return ::fallocate(fd, 0, 0, 0); }));
    ::close(fd);
    return out;
  };
  const std::vector<Outcome> local = steps(s.local());
  const std::vector<Outcome> pvfs = steps(s.pvfs());
  CHECK(local[2] == Outcome::ok(1 << 20));
  CHECK(pvfs == local);
  const std::string data = read_file(s.pvfs() + "/f");
  REQUIRE(data.size() == (2 << 20) + 4096);
  CHECK(data.substr(0, 4) == "keep");
  CHECK(data.find_first_not_of('\0', 4) == std::string::npos);
}

namespace {

struct stat stat_of(const std::string& path) {
  struct stat st {};
  REQUIRE_MESSAGE(::stat(path.c_str(), &st) == 0, "stat " << path << ": " << errno_name(errno));
  return st;
}

// Bytes the storage servers have allocated for the objects of inode `ino`
// (st_blocks of the object files, seen from outside the servers).
uint64_t allocated_on_servers(TestCluster& c, ino_t ino) {
  char prefix[32];
  std::snprintf(prefix, sizeof prefix, "%016llx.", static_cast<unsigned long long>(ino));
  uint64_t total = 0;
  for (const auto& server : c.config().servers) {
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(server.data_dir / "objects", ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
      if (it->path().filename().string().rfind(prefix, 0) != 0) continue;
      struct stat st {};
      if (::stat(it->path().c_str(), &st) == 0) total += static_cast<uint64_t>(st.st_blocks) * 512;
    }
  }
  return total;
}

}  // namespace

TEST_CASE("fallocate reserves the range on the storage servers, and st_blocks shows what they allocated") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "fallocate-reserve");
  const std::string f = s.pvfs() + "/reserved";
  int fd = ::open(f.c_str(), O_CREAT | O_RDWR, 0644);
  REQUIRE(fd >= 0);
  constexpr off_t kMiB = 1 << 20;
  REQUIRE(::fallocate(fd, 0, 0, 8 * kMiB) == 0);
  struct stat st {};
  REQUIRE(::fstat(fd, &st) == 0);
  CHECK(st.st_size == 8 * kMiB);
  CHECK(allocated_on_servers(*c, st.st_ino) >= static_cast<uint64_t>(8 * kMiB));
  // FALLOC_FL_KEEP_SIZE reserves past the end without growing the file.
  REQUIRE(::fallocate(fd, FALLOC_FL_KEEP_SIZE, 8 * kMiB, 8 * kMiB) == 0);
  REQUIRE(::fstat(fd, &st) == 0);
  CHECK(st.st_size == 8 * kMiB);
  CHECK(allocated_on_servers(*c, st.st_ino) >= static_cast<uint64_t>(16 * kMiB));
  // The reserved range reads as zeros.
  std::string back(4096, 'x');
  CHECK(::pread(fd, back.data(), back.size(), 5 * kMiB) == 4096);
  CHECK(back.find_first_not_of('\0') == std::string::npos);
  // Modes pvfs does not do are refused, not pretended.
  errno = 0;
  CHECK(::fallocate(fd, FALLOC_FL_ZERO_RANGE, 0, 4096) == -1);
  CHECK(errno == EOPNOTSUPP);
  ::close(fd);
  // stat: the servers' count, not the size's.
  const struct stat by_path = stat_of(f);
  CHECK(static_cast<uint64_t>(by_path.st_blocks) * 512 >= static_cast<uint64_t>(16 * kMiB));

  // A sparse file has fewer blocks than its size.
  const std::string sparse = s.pvfs() + "/sparse";
  fd = ::open(sparse.c_str(), O_CREAT | O_RDWR, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::pwrite(fd, "end", 3, 64 * kMiB) == 3);
  ::close(fd);
  const struct stat holes = stat_of(sparse);
  CHECK(holes.st_size == 64 * kMiB + 3);
  CHECK(static_cast<uint64_t>(holes.st_blocks) * 512 < static_cast<uint64_t>(kMiB));
}

TEST_CASE("FALLOC_FL_PUNCH_HOLE frees a range, which reads as zeros afterwards, as on Linux") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "punch");
  const size_t size = (6 << 20) + 100;
  const std::string data = pattern(size, 21);
  for (const auto& root : s.both()) write_file(root + "/f", data);
  auto steps = [](Root r) {
    std::vector<Outcome> out;
    int fd = ::open((r + "/f").c_str(), O_RDWR);
    REQUIRE(fd >= 0);
    struct stat st {};
    out.push_back(outcome([&] {
      return ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (1 << 20) + 4096, (2 << 20) + 8192);
    }));
    out.push_back(outcome([&] { return ::fstat(fd, &st) == 0 ? st.st_size : -1; }));
    // Past the end: nothing to punch, the size stays.
    out.push_back(outcome([&] {
      return ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 7 << 20, 4096);
    }));
    out.push_back(outcome([&] { return ::fstat(fd, &st) == 0 ? st.st_size : -1; }));
    // Linux wants KEEP_SIZE with PUNCH_HOLE.
    out.push_back(outcome([&] { return ::fallocate(fd, FALLOC_FL_PUNCH_HOLE, 0, 4096); }));
    ::close(fd);
    return out;
  };
  const std::vector<Outcome> local = steps(s.local());
  const std::vector<Outcome> pvfs = steps(s.pvfs());
  CHECK(local[0] == Outcome::ok());
  CHECK(pvfs == local);
  const std::string expected = read_file(s.local() + "/f");
  const std::string actual = read_file(s.pvfs() + "/f");
  CHECK_MESSAGE(difference(expected, actual).empty(), difference(expected, actual));
  CHECK(actual.substr((1 << 20) + 4096, (2 << 20) + 8192).find_first_not_of('\0') == std::string::npos);
  CHECK(actual.substr(0, (1 << 20) + 4096) == data.substr(0, (1 << 20) + 4096));
  // The servers gave the space back: they hold at most the bytes outside the
  // hole (fragments elsewhere not counted), give or take a block per object.
  CHECK(allocated_on_servers(*c, stat_of(s.pvfs() + "/f").st_ino) <=
        size - ((2 << 20) + 8192) + 4 * 4096);
}

TEST_CASE("SEEK_DATA and SEEK_HOLE find the data and holes of a sparse file, as on Linux") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "seek");
  constexpr off_t kMiB = 1 << 20;
  const std::string block = pattern(4096, 5);
  auto steps = [&](Root r) {
    std::vector<Outcome> out;
    int fd = ::open((r + "/sparse").c_str(), O_CREAT | O_RDWR, 0644);
    REQUIRE(fd >= 0);
    // Data at 0 and at 5 MiB (another object with 1 MiB stripes), holes between.
    REQUIRE(::pwrite(fd, block.data(), block.size(), 0) == 4096);
    REQUIRE(::pwrite(fd, block.data(), block.size(), 5 * kMiB) == 4096);
    const off_t size = 5 * kMiB + 4096;
    out.push_back(outcome([&] { return ::lseek(fd, 0, SEEK_DATA); }));
    out.push_back(outcome([&] { return ::lseek(fd, 0, SEEK_HOLE); }));
    out.push_back(outcome([&] { return ::lseek(fd, 4096, SEEK_DATA); }));
    out.push_back(outcome([&] { return ::lseek(fd, 2 * kMiB, SEEK_HOLE); }));
    out.push_back(outcome([&] { return ::lseek(fd, 5 * kMiB + 100, SEEK_DATA); }));
    out.push_back(outcome([&] { return ::lseek(fd, 5 * kMiB, SEEK_HOLE); }));
    out.push_back(outcome([&] { return ::lseek(fd, size, SEEK_DATA); }));
    out.push_back(outcome([&] { return ::lseek(fd, size, SEEK_HOLE); }));
    out.push_back(outcome([&] { return ::lseek(fd, size - 1, SEEK_HOLE); }));
    ::close(fd);
    return out;
  };
  const std::vector<Outcome> local = steps(s.local());
  const std::vector<Outcome> pvfs = steps(s.pvfs());
  INFO("local: ", local, " pvfs: ", pvfs);
  REQUIRE_MESSAGE(local[1] == Outcome::ok(4096), "the local file system reports no holes");
  CHECK(local[2] == Outcome::ok(5 * kMiB));
  CHECK(local[6] == Outcome::fail(ENXIO));
  CHECK(pvfs == local);
}

TEST_CASE("mmap reads a file, and MAP_SHARED writes reach it after msync") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "mmap");
  const std::string f = s.pvfs() + "/mapped";
  const size_t size = (3 << 20) + 3 * 4096 + 100;
  std::string expected = pattern(size, 3);
  write_file(f, expected);

  int fd = ::open(f.c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  REQUIRE(p != MAP_FAILED);
  CHECK(std::memcmp(p, expected.data(), size) == 0);
  CHECK(::munmap(p, size) == 0);
  ::close(fd);

  fd = ::open(f.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  REQUIRE(p != MAP_FAILED);
  auto* bytes = static_cast<char*>(p);
  const std::string edge = "ACROSS-THE-STRIPE-EDGE";
  const std::vector<std::pair<size_t, std::string>> edits = {
      {0, "start"}, {(1 << 20) - 10, edge}, {(2 << 20) + 4095, "page-edge"}, {size - 4, "end!"}};
  for (const auto& [at, text] : edits) {
    std::memcpy(bytes + at, text.data(), text.size());
    expected.replace(at, text.size(), text);
  }
  CHECK(::msync(p, size, MS_SYNC) == 0);
  CHECK(::munmap(p, size) == 0);
  CHECK(::close(fd) == 0);
  const std::string back = read_file(f);
  CHECK_MESSAGE(difference(expected, back).empty(), difference(expected, back));

  // A new file sized with ftruncate and filled only through the mapping.
  const std::string g = s.pvfs() + "/filled";
  fd = ::open(g.c_str(), O_CREAT | O_RDWR, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, 10000) == 0);
  p = ::mmap(nullptr, 10000, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  REQUIRE(p != MAP_FAILED);
  const std::string fill = pattern(10000, 4);
  std::memcpy(p, fill.data(), fill.size());
  CHECK(::munmap(p, 10000) == 0);  // no msync: close and munmap must not lose it
  CHECK(::close(fd) == 0);
  CHECK(read_file(g) == fill);
}

TEST_CASE("O_APPEND writes from several processes land whole and none is lost") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "append");
  const std::string f = s.pvfs() + "/log";
  write_file(f, "");
  constexpr int kProcs = 4, kLines = 300;
  auto line = [](int proc, int n) {
    // Lengths vary so that a misplaced append shows as a broken line.
    return "proc " + std::to_string(proc) + " line " + std::to_string(n) + " " +
           std::string(static_cast<size_t>(10 + (proc * 37 + n * 11) % 150), static_cast<char>('a' + proc)) +
           "\n";
  };
  const std::vector<int> statuses = run_children(kProcs, [&](int proc) {
    int fd = ::open(f.c_str(), O_WRONLY | O_APPEND);
    if (fd < 0) return 1;
    for (int n = 0; n < kLines; ++n) {
      const std::string text = line(proc, n);
      if (::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) return 2;
    }
    return ::close(fd) == 0 ? 0 : 3;
  });
  CHECK(statuses == std::vector<int>(kProcs, 0));

  const std::string all = read_file(f);
  std::map<std::string, int> count;
  size_t total = 0;
  std::istringstream in(all);
  std::string got;
  while (std::getline(in, got)) ++count[got + "\n"];
  int missing = 0, broken = 0;
  for (int proc = 0; proc < kProcs; ++proc)
    for (int n = 0; n < kLines; ++n) {
      const std::string want = line(proc, n);
      total += want.size();
      auto it = count.find(want);
      if (it == count.end() || it->second != 1) ++missing;
      if (it != count.end()) count.erase(it);
    }
  broken = static_cast<int>(count.size());
  CHECK(missing == 0);
  CHECK(broken == 0);
  CHECK(all.size() == total);
}

TEST_CASE("flock and fcntl locks held by one process make another's attempt fail") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "locks");
  const std::string f = s.pvfs() + "/lockfile";
  write_file(f, "x");
  int locked[2], release[2];
  REQUIRE(::pipe(locked) == 0);
  REQUIRE(::pipe(release) == 0);
  std::fflush(nullptr);
  const pid_t holder = ::fork();
  REQUIRE(holder >= 0);
  if (holder == 0) {
    int fd = ::open(f.c_str(), O_RDWR);
    struct flock fl {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    char ok = (fd >= 0 && ::flock(fd, LOCK_EX) == 0 && ::fcntl(fd, F_SETLK, &fl) == 0) ? 'L' : 'E';
    (void)!::write(locked[1], &ok, 1);
    char c2 = 0;
    (void)!::read(release[0], &c2, 1);
    ::_exit(0);
  }
  char state = 0;
  REQUIRE(::read(locked[0], &state, 1) == 1);
  REQUIRE(state == 'L');

  int fd = ::open(f.c_str(), O_RDWR);
  REQUIRE(fd >= 0);
  CHECK(outcome([&] { return ::flock(fd, LOCK_EX | LOCK_NB); }) == Outcome::fail(EWOULDBLOCK));
  CHECK(outcome([&] { return ::flock(fd, LOCK_SH | LOCK_NB); }) == Outcome::fail(EWOULDBLOCK));
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = 0;
  fl.l_len = 1;
  const Outcome setlk = outcome([&] { return ::fcntl(fd, F_SETLK, &fl); });
  CHECK((setlk == Outcome::fail(EAGAIN) || setlk == Outcome::fail(EACCES)));
  struct flock query {};
  query.l_type = F_RDLCK;
  query.l_whence = SEEK_SET;
  REQUIRE(::fcntl(fd, F_GETLK, &query) == 0);
  CHECK(query.l_type == F_WRLCK);
  CHECK(query.l_pid == holder);

  REQUIRE(::write(release[1], "U", 1) == 1);
  int status = 0;
  REQUIRE(::waitpid(holder, &status, 0) == holder);
  CHECK(::flock(fd, LOCK_EX | LOCK_NB) == 0);
  CHECK(::fcntl(fd, F_SETLK, &fl) == 0);
  ::close(fd);
  for (int p : {locked[0], locked[1], release[0], release[1]}) ::close(p);
}

TEST_CASE("readdir of a directory of 3000 entries lists every name exactly once") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "bigdir");
  const std::string d = s.pvfs();
  std::set<std::string> created;
  for (int i = 0; i < 3000; ++i) {
    // Names of varied length, so that listing pages break at varied places.
    const std::string name = "entry-" + std::to_string(i) + std::string(static_cast<size_t>(i % 40), 'z');
    REQUIRE_MESSAGE(::mknod((d + "/" + name).c_str(), S_IFREG | 0644, 0) == 0, errno_name(errno));
    created.insert(name);
  }
  REQUIRE(::mkdir((d + "/subdir").c_str(), 0755) == 0);
  created.insert("subdir");

  std::vector<std::string> listed = list_dir(d);
  CHECK(listed.size() == created.size());
  CHECK(std::set<std::string>(listed.begin(), listed.end()) == created);

  // "." and ".." come too, and seekdir returns to a telldir position.
  DIR* dir = ::opendir(d.c_str());
  REQUIRE(dir != nullptr);
  int dots = 0;
  std::vector<std::string> first_pass;
  long middle = -1;
  size_t middle_index = 0;
  while (dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") {
      ++dots;
      continue;
    }
    CHECK(e->d_type == (name == "subdir" ? DT_DIR : DT_REG));
    first_pass.push_back(name);
    if (first_pass.size() == 1500) {
      middle = ::telldir(dir);
      middle_index = first_pass.size();
    }
  }
  CHECK(dots == 2);
  REQUIRE(middle >= 0);
  ::seekdir(dir, middle);
  std::vector<std::string> rest;
  while (dirent* e = ::readdir(dir)) rest.push_back(e->d_name);
  ::closedir(dir);
  CHECK(rest == std::vector<std::string>(first_pass.begin() + static_cast<long>(middle_index),
                                         first_pass.end()));
}

TEST_CASE("names with spaces, UTF-8 and control characters round-trip like on Linux") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "names");
  const std::vector<std::string> names = {"with space", "ünïcödé-名前", "tab\there", "new\nline",
                                          "-dash", ".hidden", "..dots", "a:b;c*d?e", "\x01\x7f\xff"};
  for (const auto& root : s.both())
    for (const auto& name : names) {
      CAPTURE(name);
      write_file(root + "/" + name, name);
    }
  for (const auto& root : s.both()) {
    CAPTURE(root);
    std::vector<std::string> listed = list_dir(root);
    std::sort(listed.begin(), listed.end());
    std::vector<std::string> want = names;
    std::sort(want.begin(), want.end());
    CHECK(listed == want);
    for (const auto& name : names) CHECK(read_file(root + "/" + name) == name);
  }
}

TEST_CASE("readdir while another process adds and removes entries lists each lasting name exactly once") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "busydir");
  const std::string d = s.pvfs();
  constexpr int kLasting = 1500, kVictims = 600;
  // Victims sit between lasting names, so that removing one the listing has
  // passed would shift a listing that counts positions instead of keeping cookies.
  for (int i = 0; i < kLasting; ++i) {
    REQUIRE(::mknod((d + "/old-" + std::to_string(i)).c_str(), S_IFREG | 0644, 0) == 0);
    if (i % 2 == 0 && i / 2 < kVictims)
      REQUIRE(::mknod((d + "/victim-" + std::to_string(i / 2)).c_str(), S_IFREG | 0644, 0) == 0);
  }

  // The child reports each change through `progress`, so the listing can
  // wait for changes between its reads: interleaving without timing.
  int progress[2], stop[2];
  REQUIRE(::pipe(progress) == 0);
  REQUIRE(::pipe(stop) == 0);
  REQUIRE(::fcntl(stop[0], F_SETFL, O_NONBLOCK) == 0);
  std::fflush(nullptr);
  const pid_t changer = ::fork();
  REQUIRE(changer >= 0);
  if (changer == 0) {
    ::close(progress[0]);
    for (int i = 0;; ++i) {
      char c2;
      if (::read(stop[0], &c2, 1) == 1) ::_exit(0);
      if (::mknod((d + "/new-" + std::to_string(i)).c_str(), S_IFREG | 0644, 0) != 0) ::_exit(1);
      if (i < kVictims && ::unlink((d + "/victim-" + std::to_string(i)).c_str()) != 0) ::_exit(2);
      if (::write(progress[1], "+", 1) != 1) ::_exit(3);
    }
  }
  ::close(progress[1]);
  auto wait_changes = [&](int n) {
    char buf[64];
    while (n > 0) {
      ssize_t got = ::read(progress[0], buf, std::min<size_t>(sizeof buf, static_cast<size_t>(n)));
      REQUIRE_MESSAGE(got > 0, "the changing process stopped early");
      n -= static_cast<int>(got);
    }
  };
  wait_changes(1);

  for (int pass = 0; pass < 3; ++pass) {
    CAPTURE(pass);
    std::map<std::string, int> seen;
    DIR* dir = ::opendir(d.c_str());
    REQUIRE(dir != nullptr);
    int read_count = 0;
    errno = 0;
    while (dirent* e = ::readdir(dir)) {
      ++seen[e->d_name];
      // Let some changes happen in the middle of the listing.
      if (++read_count % 200 == 0) wait_changes(20);
    }
    CHECK(errno == 0);
    ::closedir(dir);
    int lasting_ok = 0, duplicates = 0;
    for (const auto& [name, count] : seen) {
      if (count != 1) ++duplicates;
      if (name.rfind("old-", 0) == 0 && count == 1) ++lasting_ok;
    }
    CHECK(lasting_ok == kLasting);
    CHECK(duplicates == 0);
  }
  REQUIRE(::write(stop[1], "s", 1) == 1);
  char buf[256];
  while (::read(progress[0], buf, sizeof buf) > 0) {
  }
  int status = 0;
  REQUIRE(::waitpid(changer, &status, 0) == changer);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  for (int p : {progress[0], stop[0], stop[1]}) ::close(p);
}

TEST_CASE("statfs reports the storage servers' real capacity, less the blocks reserved for root") {
  TestCluster* c = cluster();
  if (!c) return;
  double total = 0, free_min = 0, free_max = 0;
  for (const auto& server : c->config().servers) {
    struct statvfs local {};
    REQUIRE(::statvfs(server.data_dir.c_str(), &local) == 0);
    // The reserve is neither usable nor used: df on the mount must not show it as used.
    const double reserved = static_cast<double>(local.f_bfree - local.f_bavail);
    total += (static_cast<double>(local.f_blocks) - reserved) * static_cast<double>(local.f_frsize);
    free_min += static_cast<double>(local.f_bavail) * static_cast<double>(local.f_frsize);
    free_max += static_cast<double>(local.f_bfree) * static_cast<double>(local.f_frsize);
  }
  struct statvfs st {};
  REQUIRE(::statvfs(c->mnt().c_str(), &st) == 0);
  const double frsize = static_cast<double>(st.f_frsize);
  CHECK(st.f_blocks > 0);
  CHECK(st.f_bfree <= st.f_blocks);
  CHECK(st.f_bavail <= st.f_bfree);
  CHECK(st.f_namemax == 255);
  // The size is fixed; free space moves with other programs' writes, so it
  // only has to be in the right range.
  CHECK(static_cast<double>(st.f_blocks) * frsize == doctest::Approx(total).epsilon(0.001));
  CHECK(static_cast<double>(st.f_bfree) * frsize >= free_min * 0.95);
  // Used as df computes it matches the servers' own used blocks.
  double used = 0;
  for (const auto& server : c->config().servers) {
    struct statvfs local {};
    REQUIRE(::statvfs(server.data_dir.c_str(), &local) == 0);
    used += static_cast<double>(local.f_blocks - local.f_bfree) * static_cast<double>(local.f_frsize);
  }
  CHECK(static_cast<double>(st.f_blocks - st.f_bfree) * frsize == doctest::Approx(used).epsilon(0.05));
  CHECK(static_cast<double>(st.f_bfree) * frsize <= free_max * 1.05);
  CHECK(st.f_files > 0);
  CHECK(st.f_ffree <= st.f_files);
}

TEST_CASE("extended attributes are set, read, listed and removed with Linux's errors") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "xattr");
  for (const auto& root : s.both()) write_file(root + "/f", "");
  on_both(s, [](Root r) { return ::mkdir((r + "/d").c_str(), 0755); });
  on_both(s, [](Root r) { return ::symlink("f", (r + "/l").c_str()); });
  auto steps = [](Root r) {
    std::vector<Outcome> out;
    const std::string f = r + "/f";
    const char* p = f.c_str();
    char buf[256] = {};
    auto value = [&](ssize_t n, const std::string& want) {
      out.push_back(Outcome::ok(n >= 0 && std::string(buf, static_cast<size_t>(n)) == want));
    };
    out.push_back(outcome([&] { return ::setxattr(p, "user.a", "alpha", 5, 0); }));
    out.push_back(outcome([&] { return ::setxattr(p, "user.a", "x", 1, XATTR_CREATE); }));
    out.push_back(outcome([&] { return ::setxattr(p, "user.b", "x", 1, XATTR_REPLACE); }));
    out.push_back(outcome([&] { return ::getxattr(p, "user.a", nullptr, 0); }));  // size probe
    out.push_back(outcome([&] { return ::getxattr(p, "user.a", buf, 2); }));
    ssize_t n = ::getxattr(p, "user.a", buf, sizeof buf);
    value(n, "alpha");
    out.push_back(outcome([&] { return ::getxattr(p, "user.missing", buf, sizeof buf); }));
    out.push_back(outcome([&] { return ::setxattr(p, "user.a", "beta!!", 6, XATTR_REPLACE); }));
    n = ::getxattr(p, "user.a", buf, sizeof buf);
    value(n, "beta!!");
    out.push_back(outcome([&] { return ::setxattr(p, "user.bin", "\0\1\2", 3, XATTR_CREATE); }));
    n = ::getxattr(p, "user.bin", buf, sizeof buf);
    value(n, std::string("\0\1\2", 3));
    out.push_back(outcome([&] { return ::setxattr(p, "user.empty", "", 0, 0); }));
    out.push_back(outcome([&] { return ::getxattr(p, "user.empty", buf, sizeof buf); }));
    out.push_back(outcome([&] { return ::removexattr(p, "user.a"); }));
    out.push_back(outcome([&] { return ::removexattr(p, "user.a"); }));
    out.push_back(outcome([&] { return ::getxattr(p, "user.a", buf, sizeof buf); }));
    out.push_back(outcome([&] { return ::setxattr(p, "bogus.a", "x", 1, 0); }));
    out.push_back(outcome([&] { return ::setxattr(p, "user.x", "x", 1, 4); }));
    out.push_back(outcome([&] { return ::setxattr((r + "/d").c_str(), "user.d", "dir", 3, 0); }));
    out.push_back(outcome([&] { return ::getxattr((r + "/d").c_str(), "user.d", buf, sizeof buf); }));
    // user.* attributes are for files and directories only.
    out.push_back(outcome([&] { return ::lsetxattr((r + "/l").c_str(), "user.x", "x", 1, 0); }));
    out.push_back(outcome([&] { return ::getxattr((r + "/missing").c_str(), "user.a", buf, sizeof buf); }));
    const std::string long_name = "user." + std::string(256, 'u');
    out.push_back(outcome([&] { return ::setxattr(p, long_name.c_str(), "x", 1, 0); }));
    return out;
  };
  const std::vector<Outcome> local = steps(s.local());
  const std::vector<Outcome> pvfs = steps(s.pvfs());
  CHECK(local[1] == Outcome::fail(EEXIST));
  CHECK(local[2] == Outcome::fail(ENODATA));
  CHECK(local[4] == Outcome::fail(ERANGE));
  CHECK(pvfs == local);

  // Listing shows the same names; pvfs leaves its virtual user.pvfs.layout out,
  // so that cp -a, rsync -X and tar --xattrs do not copy it onto files with data.
  auto list = [](const std::string& path) {
    std::vector<std::string> names;
    const ssize_t size = ::listxattr(path.c_str(), nullptr, 0);  // size probe
    REQUIRE(size > 0);
    char small[4];
    CHECK(outcome([&] { return ::listxattr(path.c_str(), small, sizeof small); }) ==
          Outcome::fail(ERANGE));
    std::string buf(static_cast<size_t>(size), '\0');
    REQUIRE(::listxattr(path.c_str(), buf.data(), buf.size()) == size);
    for (size_t at = 0; at < buf.size(); at += std::strlen(buf.c_str() + at) + 1)
      names.emplace_back(buf.c_str() + at);
    std::sort(names.begin(), names.end());
    return names;
  };
  const std::vector<std::string> expected = {"user.bin", "user.empty"};
  CHECK(list(s.local() + "/f") == expected);
  CHECK(list(s.pvfs() + "/f") == expected);
  CHECK(list(s.pvfs() + "/d") == list(s.local() + "/d"));
}

TEST_CASE("user.pvfs.layout shows layouts, sets them on directories and empty files, and new files inherit") {
  TestCluster* c = cluster();
  if (!c) return;
  Scratch s(*c, "layout");
  const std::string root = s.pvfs();
  const long servers = static_cast<long>(c->config().servers.size());

  write_file(root + "/plain", "data");
  const std::string plain = get_xattr(root + "/plain", "user.pvfs.layout");
  INFO("plain file layout: " << plain);
  CHECK(layout_field(plain, "stripe_size") == 1 << 20);
  CHECK(layout_field(plain, "stripe_count") == servers);
  const std::vector<std::string> plain_servers = layout_servers(plain);
  CHECK(plain_servers.size() == static_cast<size_t>(servers));
  CHECK(std::set<std::string>(plain_servers.begin(), plain_servers.end()).size() == plain_servers.size());
  CHECK(get_xattr(root, "user.pvfs.layout").find("stripe_count=") != std::string::npos);

  REQUIRE(::mkdir((root + "/narrow").c_str(), 0755) == 0);
  const std::string policy = "stripe_count=2 stripe_size=65536";
  CHECK(::setxattr((root + "/narrow").c_str(), "user.pvfs.layout", policy.data(), policy.size(), 0) == 0);
  const std::string dir_layout = get_xattr(root + "/narrow", "user.pvfs.layout");
  INFO("directory policy: " << dir_layout);
  CHECK(layout_field(dir_layout, "stripe_count") == 2);
  CHECK(layout_field(dir_layout, "stripe_size") == 65536);

  // New files, and files in new subdirectories, take the directory's policy.
  const std::string data = pattern(1 << 20, 9);
  write_file(root + "/narrow/file", data);
  REQUIRE(::mkdir((root + "/narrow/sub").c_str(), 0755) == 0);
  write_file(root + "/narrow/sub/file", data);
  for (const std::string& f : {root + "/narrow/file", root + "/narrow/sub/file"}) {
    CAPTURE(f);
    const std::string layout = get_xattr(f, "user.pvfs.layout");
    CAPTURE(layout);
    CHECK(layout_field(layout, "stripe_count") == 2);
    CHECK(layout_field(layout, "stripe_size") == 65536);
    CHECK(layout_servers(layout).size() == 2);
    CHECK(read_file(f) == data);
  }

  // An empty file can be given a layout; one with data cannot.
  write_file(root + "/single", "");
  const std::string one = "stripe_count=1";
  CHECK(::setxattr((root + "/single").c_str(), "user.pvfs.layout", one.data(), one.size(), 0) == 0);
  CHECK(layout_field(get_xattr(root + "/single", "user.pvfs.layout"), "stripe_count") == 1);
  write_file(root + "/single", data);
  CHECK(read_file(root + "/single") == data);
  CHECK(layout_field(get_xattr(root + "/single", "user.pvfs.layout"), "stripe_count") == 1);
  CHECK(outcome([&] {
          return ::setxattr((root + "/plain").c_str(), "user.pvfs.layout", one.data(), one.size(), 0);
        }) == Outcome::fail(EBUSY));
  CHECK(get_xattr(root + "/plain", "user.pvfs.layout") == plain);
  CHECK(read_file(root + "/plain") == "data");
  // Nonsense is refused.
  for (const std::string bad : {"stripe_size=1000", "bogus=1", "stripe_count"}) {
    CAPTURE(bad);
    CHECK(outcome([&] {
            return ::setxattr((root + "/narrow").c_str(), "user.pvfs.layout", bad.data(), bad.size(), 0);
          }) == Outcome::fail(EINVAL));
  }
  CHECK(layout_field(get_xattr(root + "/narrow", "user.pvfs.layout"), "stripe_count") == 2);
}

namespace {

// The kernel's view of a FUSE mount: /sys/fs/fuse/connections/DEV/NAME,
// DEV the mount's device number, fusectl mounted there if it is not yet.
// -1 when it cannot be read.
long fuse_connection_value(const std::string& mountpoint, const std::string& name) {
  const std::string connections = "/sys/fs/fuse/connections";
  if (!std::filesystem::exists(connections + "/")) return -1;
  if (std::filesystem::is_empty(connections))
    (void)!std::system(("mount -t fusectl fusectl " + connections + " 2>/dev/null").c_str());
  struct stat st {};
  if (::stat(mountpoint.c_str(), &st) != 0) return -1;
  std::ifstream in(connections + "/" + std::to_string(st.st_dev) + "/" + name);
  long value = -1;
  in >> value;
  return in ? value : -1;
}

}  // namespace

TEST_CASE("max_background reaches the kernel: it keeps that many reads and writebacks in flight") {
  TestCluster* c = cluster();
  if (!c) return;
  // The default, and a mount that asks for another value.
  CHECK(fuse_connection_value(c->mnt().string(), "max_background") == 128);
  CHECK(fuse_connection_value(c->mnt().string(), "congestion_threshold") == 96);
  SecondMount other(*c, "max_background=200");
  CHECK(fuse_connection_value(other.view(c->mnt().string()), "max_background") == 200);
  CHECK(fuse_connection_value(other.view(c->mnt().string()), "congestion_threshold") == 150);
}
