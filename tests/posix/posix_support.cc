#include "tests/posix/posix_support.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

namespace pvfs::test::posix {

namespace fs = std::filesystem;

bool fuse_or_skip() {
  if (fuse_available()) return true;
  if (fuse_required()) {
    FAIL("CI=true but /dev/fuse is missing or not usable: FUSE tests cannot run");
  }
  MESSAGE("skipped: /dev/fuse is not available (set CI=true to make this a failure)");
  return false;
}

TestCluster* shared_cluster(const std::string& mount_options) {
  static std::unique_ptr<TestCluster> cluster;
  static bool failed = false;
  if (!fuse_or_skip()) return nullptr;
  if (cluster) return cluster.get();
  if (failed) FAIL("the shared cluster did not start (see the first failing test)");
  failed = true;
  cluster = std::make_unique<TestCluster>(ClusterOptions{}, /*mount=*/true, mount_options);
  failed = false;
  // mkdtemp made the folder 0700; other uids must reach the mount below it.
  fs::permissions(cluster->dir(), fs::perms::owner_all | fs::perms::group_read |
                                      fs::perms::group_exec | fs::perms::others_read |
                                      fs::perms::others_exec);
  return cluster.get();
}

Scratch::Scratch(TestCluster& cluster, const std::string& name) : local_("pvfs-local") {
  static int counter = 0;
  pvfs_ = cluster.mnt() / (name + "-" + std::to_string(++counter));
  REQUIRE_MESSAGE(::mkdir(pvfs_.c_str(), 0755) == 0,
                  "mkdir " << pvfs_ << ": " << errno_name(errno));
  REQUIRE(::chmod(pvfs_.c_str(), 0755) == 0);
  REQUIRE(::chmod(local_.path().c_str(), 0755) == 0);
}

namespace {

// pvfsmount of this build tree (tests/posix/../../fs), else from $PATH.
std::string pvfsmount_program() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec).parent_path();
  const fs::path built = self / ".." / ".." / "fs" / "pvfsmount";
  if (!ec && fs::exists(built, ec)) return fs::weakly_canonical(built, ec).string();
  return "pvfsmount";
}

std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char ch : text) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

}  // namespace

SecondMount::SecondMount(TestCluster& cluster, const std::string& options)
    : cluster_(cluster),
      dir_("pvfs-second-mount"),
      on_signal_([dir = dir_.path()] { undo_test_folder(dir); }) {
  mnt_ = dir_.path() / "mnt";
  fs::create_directories(mnt_);
  // As for the shared cluster: other uids must reach the mount (allow_other).
  fs::permissions(dir_.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                   fs::perms::others_read | fs::perms::others_exec);
  std::string command = quoted(pvfsmount_program());
  if (!options.empty()) command += " -o " + quoted(options);
  command += " " + quoted(cluster.cluster().config_path().string()) + " " + quoted(mnt_.string());
  std::fflush(nullptr);
  const int rc = std::system(command.c_str());
  REQUIRE_MESSAGE(rc == 0, "second mount failed: " << command);
  mounted_ = true;
}

SecondMount::~SecondMount() {
  if (!mounted_) return;
  std::fflush(nullptr);
  const std::string mnt = quoted(mnt_.string());
  if (std::system(("fusermount3 -u " + mnt + " 2>/dev/null").c_str()) != 0)
    (void)!std::system(("umount -l " + mnt).c_str());
}

std::string SecondMount::view(const std::string& path) const {
  return (mnt_ / fs::path(path).lexically_relative(cluster_.mnt())).string();
}

std::ostream& operator<<(std::ostream& out, const Outcome& o) {
  if (o.rc < 0) return out << "rc=" << o.rc << " errno=" << errno_name(o.err);
  return out << "rc=" << o.rc;
}

std::ostream& operator<<(std::ostream& out, const std::vector<Outcome>& steps) {
  out << "[";
  for (size_t i = 0; i < steps.size(); ++i) out << (i ? "; " : "") << i << ": " << steps[i];
  return out << "]";
}

std::string pattern(size_t size, uint64_t seed, uint64_t offset) {
  std::string out(size, '\0');
  for (size_t i = 0; i < size; ++i) {
    // A byte that depends on the position and the stream, so misplaced,
    // duplicated and foreign data all show.
    uint64_t x = (offset + i) * 0x9E3779B97F4A7C15ull ^ (seed + 1) * 0xC2B2AE3D27D4EB4Full;
    x ^= x >> 29;
    out[i] = static_cast<char>(x & 0xff);
  }
  return out;
}

std::string difference(const std::string& expected, const std::string& actual) {
  if (expected == actual) return {};
  size_t i = 0;
  const size_t common = std::min(expected.size(), actual.size());
  while (i < common && expected[i] == actual[i]) ++i;
  return "expected " + std::to_string(expected.size()) + " bytes, got " +
         std::to_string(actual.size()) + "; first difference at offset " + std::to_string(i);
}

void on_both(const Scratch& scratch, const std::function<long(const std::string&)>& setup) {
  for (const auto& root : scratch.both()) {
    errno = 0;
    long rc = setup(root);
    REQUIRE_MESSAGE(rc >= 0, "setup failed under " << root << ": " << errno_name(errno));
  }
}

void write_file(const std::string& path, const std::string& data, mode_t mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, mode);
  REQUIRE_MESSAGE(fd >= 0, "open " << path << ": " << errno_name(errno));
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    REQUIRE_MESSAGE(n > 0, "write " << path << ": " << errno_name(errno));
    done += static_cast<size_t>(n);
  }
  REQUIRE_MESSAGE(::close(fd) == 0, "close " << path << ": " << errno_name(errno));
}

std::string read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  REQUIRE_MESSAGE(fd >= 0, "open " << path << ": " << errno_name(errno));
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    REQUIRE_MESSAGE(n >= 0, "read " << path << ": " << errno_name(errno));
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

std::vector<std::string> list_dir(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  REQUIRE_MESSAGE(dir != nullptr, "opendir " << path << ": " << errno_name(errno));
  std::vector<std::string> names;
  errno = 0;
  while (dirent* e = ::readdir(dir)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  const int err = errno;
  ::closedir(dir);
  REQUIRE_MESSAGE(err == 0, "readdir " << path << ": " << errno_name(err));
  return names;
}

namespace {

// Reads exactly `size` bytes unless the writer closed early; returns the count.
size_t read_full(int fd, void* buf, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::read(fd, static_cast<char*>(buf) + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

void write_full(int fd, const void* buf, size_t size) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, static_cast<const char*>(buf) + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

int wait_status(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

std::vector<long> run_as(const Identity& who, const std::function<std::vector<long>()>& body) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::fflush(nullptr);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    if (::setgroups(who.groups.size(), who.groups.data()) != 0 ||
        ::setresgid(who.gid, who.gid, who.gid) != 0 || ::setresuid(who.uid, who.uid, who.uid) != 0)
      ::_exit(2);
    std::vector<long> results;
    try {
      results = body();
    } catch (...) {
      ::_exit(3);
    }
    const uint64_t count = results.size();
    write_full(fds[1], &count, sizeof count);
    write_full(fds[1], results.data(), results.size() * sizeof(long));
    ::_exit(0);
  }
  ::close(fds[1]);
  uint64_t count = 0;
  std::vector<long> results;
  if (read_full(fds[0], &count, sizeof count) == sizeof count && count < (1u << 20)) {
    results.resize(count);
    if (read_full(fds[0], results.data(), count * sizeof(long)) != count * sizeof(long))
      results.clear();
  }
  ::close(fds[0]);
  const int status = wait_status(pid);
  REQUIRE_MESSAGE(status == 0, "the child running as uid " << who.uid << " failed (status "
                                                           << status << ")");
  return results;
}

std::vector<int> run_children(int count, const std::function<int(int)>& body) {
  std::vector<pid_t> pids;
  std::fflush(nullptr);
  for (int i = 0; i < count; ++i) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) ::_exit(body(i));
    pids.push_back(pid);
  }
  std::vector<int> statuses;
  for (pid_t pid : pids) statuses.push_back(wait_status(pid));
  return statuses;
}

std::string errno_name(int err) {
  const char* name = ::strerrorname_np(err);
  return std::string(name ? name : std::to_string(err)) + " (" + std::strerror(err) + ")";
}

}  // namespace pvfs::test::posix
