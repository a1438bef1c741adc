// Differential test: one seeded sequence of random file system operations
// (create, write at random offsets including past the end, truncate,
// rename, link, unlink, mkdir, rmdir, read, stat, readdir) runs on a pvfs
// mount and on a local directory side by side. Every return value, errno,
// byte read and listing must match, and so must the final trees. The local
// file system is the oracle; on a divergence the test prints the seed, the
// operation's index and both results. PVFS_DIFF_SEED and PVFS_DIFF_OPS
// replay another sequence.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "tests/posix/posix_support.h"

namespace {

using namespace pvfs::test;
using namespace pvfs::test::posix;

// splitmix64: the same sequence from a seed on every platform.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n).
  uint64_t below(uint64_t n) { return n == 0 ? 0 : next() % n; }
  bool chance(int percent) { return below(100) < static_cast<uint64_t>(percent); }
  template <typename T>
  const T& pick(const std::vector<T>& items) { return items[below(items.size())]; }

 private:
  uint64_t state_;
};

enum class Kind { create, write, truncate, ftruncate, rename, link, unlink, mkdir, rmdir, read, stat, readdir };

struct Op {
  Kind kind{};
  std::string a, b;  // paths relative to the root
  uint64_t offset = 0, length = 0;
  int flags = 0;
};

const char* kind_name(Kind kind) {
  static const char* const kNames[] = {"create", "write", "truncate", "ftruncate", "rename", "link",
                                       "unlink", "mkdir", "rmdir", "read", "stat", "readdir"};
  return kNames[static_cast<int>(kind)];
}

std::string describe(const Op& op) {
  std::ostringstream out;
  out << kind_name(op.kind) << " " << op.a;
  if (!op.b.empty()) out << " -> " << op.b;
  switch (op.kind) {
    case Kind::create:
      out << ((op.flags & O_ACCMODE) == O_RDONLY ? " O_RDONLY" : (op.flags & O_ACCMODE) == O_RDWR ? " O_RDWR" : " O_WRONLY")
          << ((op.flags & O_EXCL) ? " O_EXCL" : "") << ((op.flags & O_TRUNC) ? " O_TRUNC" : "");
      break;
    case Kind::write:
    case Kind::read:
      out << " offset=" << op.offset << " length=" << op.length
          << ((op.flags & O_APPEND) ? " O_APPEND" : "");
      break;
    case Kind::truncate:
    case Kind::ftruncate: out << " size=" << op.offset; break;
    default: break;
  }
  return out.str();
}

// What an operation did, in a form that compares exactly between file systems.
struct Result {
  long rc = 0;
  int err = 0;
  std::string data;  // bytes read, a listing or a stat summary
  bool operator==(const Result&) const = default;
};

std::string show(const Result& r) {
  std::ostringstream out;
  out << "rc=" << r.rc;
  if (r.rc < 0) out << " errno=" << errno_name(r.err);
  if (!r.data.empty()) {
    if (r.data.size() <= 200) {
      out << " data=\"";
      for (char ch : r.data) out << (ch >= 32 && ch < 127 ? ch : '.');
      out << "\"";
    } else {
      out << " data=" << r.data.size() << " bytes";
    }
  }
  return out.str();
}

Result failed() { return Result{-1, errno, {}}; }

std::string summary(const struct stat& st) {
  std::ostringstream out;
  const char type = S_ISREG(st.st_mode) ? 'f' : S_ISDIR(st.st_mode) ? 'd' : S_ISLNK(st.st_mode) ? 'l' : '?';
  out << type << " mode=" << std::oct << (st.st_mode & 07777) << std::dec << " nlink=" << st.st_nlink;
  if (!S_ISDIR(st.st_mode)) out << " size=" << st.st_size;  // directory sizes are the file system's own
  return out.str();
}

Result apply(const std::string& root, const Op& op, size_t index) {
  const std::string a = root + "/" + op.a;
  const std::string b = root + "/" + op.b;
  errno = 0;
  switch (op.kind) {
    case Kind::create: {
      int fd = ::open(a.c_str(), O_CREAT | op.flags, 0644);
      if (fd < 0) return failed();
      return Result{::close(fd), 0, {}};
    }
    case Kind::write: {
      int fd = ::open(a.c_str(), O_WRONLY | op.flags);
      if (fd < 0) return failed();
      const std::string data = pattern(op.length, index, op.offset);
      ssize_t n = (op.flags & O_APPEND) ? ::write(fd, data.data(), data.size())
                                        : ::pwrite(fd, data.data(), data.size(), static_cast<off_t>(op.offset));
      Result r = n < 0 ? failed() : Result{n, 0, {}};
      if (::close(fd) != 0 && n >= 0) r = failed();
      return r;
    }
    case Kind::truncate:
      if (::truncate(a.c_str(), static_cast<off_t>(op.offset)) != 0) return failed();
      return {};
    case Kind::ftruncate: {
      int fd = ::open(a.c_str(), O_RDWR);
      if (fd < 0) return failed();
      Result r = ::ftruncate(fd, static_cast<off_t>(op.offset)) == 0 ? Result{} : failed();
      ::close(fd);
      return r;
    }
    case Kind::rename: return ::rename(a.c_str(), b.c_str()) == 0 ? Result{} : failed();
    case Kind::link: return ::link(a.c_str(), b.c_str()) == 0 ? Result{} : failed();
    case Kind::unlink: return ::unlink(a.c_str()) == 0 ? Result{} : failed();
    case Kind::mkdir: return ::mkdir(a.c_str(), 0755) == 0 ? Result{} : failed();
    case Kind::rmdir: return ::rmdir(a.c_str()) == 0 ? Result{} : failed();
    case Kind::read: {
      int fd = ::open(a.c_str(), O_RDONLY);
      if (fd < 0) return failed();
      std::string buf(op.length, '\0');
      ssize_t n = ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(op.offset));
      Result r = n < 0 ? failed() : Result{n, 0, buf.substr(0, static_cast<size_t>(std::max<ssize_t>(n, 0)))};
      ::close(fd);
      return r;
    }
    case Kind::stat: {
      struct stat st {};
      if (::lstat(a.c_str(), &st) != 0) return failed();
      return Result{0, 0, summary(st)};
    }
    case Kind::readdir: {
      DIR* dir = ::opendir(a.c_str());
      if (!dir) return failed();
      std::vector<std::string> names;
      while (dirent* e = ::readdir(dir)) {
        std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        names.push_back(name + (e->d_type == DT_DIR ? "/" : e->d_type == DT_REG ? "" : "?"));
      }
      ::closedir(dir);
      std::sort(names.begin(), names.end());
      std::string listing;
      for (const auto& n : names) listing += n + " ";
      return Result{static_cast<long>(names.size()), 0, listing};
    }
  }
  return Result{-1, EINVAL, "unknown operation"};
}

// Every path under `root` (relative, sorted) with whether it is a directory.
void walk(const std::string& root, const std::string& rel, std::vector<std::pair<std::string, bool>>& out) {
  DIR* dir = ::opendir((root + "/" + rel).c_str());
  REQUIRE_MESSAGE(dir != nullptr, "opendir " << root << "/" << rel << ": " << errno_name(errno));
  std::vector<std::pair<std::string, bool>> here;
  while (dirent* e = ::readdir(dir)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = rel.empty() ? name : rel + "/" + name;
    struct stat st {};
    REQUIRE(::lstat((root + "/" + path).c_str(), &st) == 0);
    here.emplace_back(path, S_ISDIR(st.st_mode));
  }
  ::closedir(dir);
  std::sort(here.begin(), here.end());
  for (const auto& entry : here) {
    out.push_back(entry);
    if (entry.second) walk(root, entry.first, out);
  }
}

// The operations' vocabulary: a few names at a few depths, so that they
// collide often (EEXIST, ENOTEMPTY, ENOTDIR, EISDIR, replacing renames).
const std::vector<std::string> kNames = {"f0", "f1", "f2", "f3", "f4", "f5", "d0", "d1", "d2"};

// Draws the next operation. Existing paths come from the local tree (the
// oracle), so most operations act on something that is there.
Op next_op(Random& rng, const std::string& local_root, uint64_t stripe_bytes) {
  std::vector<std::pair<std::string, bool>> tree;
  walk(local_root, "", tree);
  std::vector<std::string> dirs = {""}, shallow_dirs = {""}, files, all;
  for (const auto& [path, is_dir] : tree) {
    all.push_back(path);
    (is_dir ? dirs : files).push_back(path);
    if (is_dir && std::count(path.begin(), path.end(), '/') < 2) shallow_dirs.push_back(path);
  }
  auto join = [](const std::string& dir, const std::string& name) { return dir.empty() ? name : dir + "/" + name; };
  // New names go at most three levels deep, so that the tree stays busy.
  auto fresh = [&] { return join(rng.pick(shallow_dirs), rng.pick(kNames)); };
  auto any = [&] { return all.empty() || rng.chance(15) ? fresh() : rng.pick(all); };
  auto file = [&] { return files.empty() || rng.chance(10) ? any() : rng.pick(files); };
  auto dir = [&] { return dirs.size() == 1 || rng.chance(10) ? any() : rng.pick(dirs); };
  // Offsets and lengths around stripe boundaries, sometimes tiny, sometimes past the end.
  auto offset = [&]() -> uint64_t {
    switch (rng.below(4)) {
      case 0: return rng.below(4096);
      case 1: return (1 + rng.below(8)) * stripe_bytes - 32 + rng.below(64);
      default: return rng.below(10 * stripe_bytes);
    }
  };
  auto length = [&]() -> uint64_t { return rng.chance(30) ? rng.below(32) : rng.below(3 * stripe_bytes); };

  Op op;
  const uint64_t roll = rng.below(100);
  if (roll < 10) {
    op.kind = Kind::create;
    op.a = rng.chance(60) ? fresh() : any();
    static const std::vector<int> kAccess = {O_WRONLY, O_RDWR, O_RDONLY};
    op.flags = rng.pick(kAccess) | (rng.chance(30) ? O_EXCL : 0) | (rng.chance(20) ? O_TRUNC : 0);
  } else if (roll < 30) {
    op.kind = Kind::write;
    op.a = file();
    op.offset = offset();
    op.length = length();
    op.flags = rng.chance(15) ? O_APPEND : 0;
  } else if (roll < 36) {
    op.kind = Kind::truncate;
    op.a = file();
    op.offset = offset();
  } else if (roll < 38) {
    op.kind = Kind::ftruncate;
    op.a = file();
    op.offset = offset();
  } else if (roll < 46) {
    op.kind = Kind::rename;
    op.a = any();
    op.b = rng.chance(50) ? fresh() : any();
  } else if (roll < 51) {
    op.kind = Kind::link;
    op.a = file();
    op.b = rng.chance(70) ? fresh() : any();
  } else if (roll < 57) {
    op.kind = Kind::unlink;
    op.a = file();
  } else if (roll < 63) {
    op.kind = Kind::mkdir;
    op.a = rng.chance(80) ? fresh() : any();
  } else if (roll < 68) {
    op.kind = Kind::rmdir;
    op.a = dir();
  } else if (roll < 82) {
    op.kind = Kind::read;
    op.a = file();
    op.offset = offset();
    op.length = length();
  } else if (roll < 94) {
    op.kind = Kind::stat;
    op.a = any();
  } else {
    op.kind = Kind::readdir;
    op.a = dir();
  }
  // Keep the tree shallow: deep paths only make every name miss.
  if (std::count(op.a.begin(), op.a.end(), '/') > 3 || std::count(op.b.begin(), op.b.end(), '/') > 3) {
    op.kind = Kind::stat;
    op.b.clear();
  }
  return op;
}

uint64_t env_number(const char* name, uint64_t fallback) {
  const char* text = std::getenv(name);
  return text && *text ? std::strtoull(text, nullptr, 0) : fallback;
}

// Runs the sequence; on the first divergence FAILs with everything needed
// to replay it.
void run_differential(TestCluster& cluster, uint64_t seed, size_t ops, uint64_t stripe_bytes) {
  Scratch s(cluster, "differential");
  Random rng(seed);
  INFO("seed " << seed << " (replay with PVFS_DIFF_SEED=" << seed << " PVFS_DIFF_OPS=" << ops << ")");
  std::map<int, int> failures;   // errno -> count, to show the sequence reached error paths
  std::map<Kind, int> successes;  // to show it did real work of every kind
  for (size_t i = 0; i < ops; ++i) {
    const Op op = next_op(rng, s.local(), stripe_bytes);
    const Result expected = apply(s.local(), op, i);
    const Result actual = apply(s.pvfs(), op, i);
    if (expected.rc < 0)
      ++failures[expected.err];
    else
      ++successes[op.kind];
    if (!(actual == expected)) {
      FAIL("divergence at operation " << i << ": " << describe(op) << "\n  Linux: " << show(expected)
                                      << "\n  pvfs:  " << show(actual));
    }
  }
  std::ostringstream mix;
  for (const auto& [kind, count] : successes) mix << " " << kind_name(kind) << "=" << count;
  for (const auto& [err, count] : failures) mix << " " << ::strerrorname_np(err) << "=" << count;
  MESSAGE("seed " << seed << ": " << ops << " operations agree; successes and errors:" << mix.str());
  CHECK(failures[ENOENT] > 0);
  CHECK(failures[EEXIST] > 0);
  CHECK(failures[ENOTEMPTY] > 0);
  for (Kind kind : {Kind::create, Kind::write, Kind::truncate, Kind::rename, Kind::link, Kind::unlink,
                    Kind::mkdir, Kind::rmdir, Kind::read, Kind::stat, Kind::readdir}) {
    CAPTURE(kind_name(kind));
    CHECK(successes[kind] >= static_cast<int>(ops / 200));
  }

  // The final trees: names, types, link counts, sizes and contents.
  std::vector<std::pair<std::string, bool>> local_tree, pvfs_tree;
  walk(s.local(), "", local_tree);
  walk(s.pvfs(), "", pvfs_tree);
  REQUIRE(pvfs_tree == local_tree);
  CHECK(local_tree.size() > 3);
  for (const auto& [path, is_dir] : local_tree) {
    CAPTURE(path);
    struct stat l {}, p {};
    REQUIRE(::lstat((s.local() + "/" + path).c_str(), &l) == 0);
    REQUIRE(::lstat((s.pvfs() + "/" + path).c_str(), &p) == 0);
    CHECK(summary(p) == summary(l));
    if (!is_dir) {
      const std::string want = read_file(s.local() + "/" + path);
      const std::string got = read_file(s.pvfs() + "/" + path);
      CHECK_MESSAGE(difference(want, got).empty(), difference(want, got));
    }
  }
}

}  // namespace

TEST_CASE("a seeded random sequence of operations gives the same results on pvfs as on Linux") {
  if (!fuse_or_skip()) return;
  pvfs::ClusterOptions options;
  options.stripe_size = 64 << 10;  // many stripe boundaries with little data
  TestCluster cluster(options, /*mount=*/true);
  run_differential(cluster, env_number("PVFS_DIFF_SEED", 20250611), env_number("PVFS_DIFF_OPS", 3000),
                   options.stripe_size);
}

TEST_CASE("the random sequence also agrees on a mount with writeback_cache") {
  if (!fuse_or_skip()) return;
  pvfs::ClusterOptions options;
  options.stripe_size = 64 << 10;
  TestCluster cluster(options, /*mount=*/true, "writeback_cache");
  run_differential(cluster, env_number("PVFS_DIFF_SEED", 20250611) + 1,
                   env_number("PVFS_DIFF_OPS", 3000) / 2, options.stripe_size);
}
