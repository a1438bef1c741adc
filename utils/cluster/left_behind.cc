#include "utils/cluster/left_behind.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "shared/mount_table.h"
#include "utils/cluster/local_cluster.h"

namespace pvfs {

namespace fs = std::filesystem;

namespace {

struct Found {
  int pid = 0;
  bool mount = false;       // pvfsmount
  std::string mount_point;  // pvfsmount's last argument
};

std::vector<std::string> command_line(const fs::path& proc_dir) {
  std::ifstream in(proc_dir / "cmdline", std::ios::binary);
  const std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t start = 0; start < raw.size();) {
    const size_t end = raw.find('\0', start);
    args.push_back(raw.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return args;
}

std::vector<Found> find_from(const fs::path& config) {
  std::vector<Found> found;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const int pid = std::stoi(name);
    if (pid == ::getpid()) continue;
    const auto args = command_line(it->path());
    if (args.size() < 2) continue;
    const std::string program = fs::path(args[0]).filename().string();
    if (program != "pvfs-mds" && program != "pvfs-server" && program != "pvfsmount") continue;
    bool names_config = false;
    for (const auto& a : args) names_config = names_config || fs::path(a).lexically_normal() == config;
    if (!names_config || !process_alive(pid)) continue;
    found.push_back({pid, program == "pvfsmount", program == "pvfsmount" ? args.back() : std::string()});
  }
  return found;
}

void stop(const std::vector<Found>& group) {
  for (const Found& f : group) ::kill(f.pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (const Found& f : group) {
    while (process_alive(f.pid) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!process_alive(f.pid)) continue;
    ::kill(f.pid, SIGKILL);
    while (process_alive(f.pid)) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string mount_table() {
  std::ifstream in("/proc/self/mountinfo");
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool pvfs_mount_at(const std::string& mount_point) {
  return has_mount_at(mount_table(), fs::path(mount_point).lexically_normal().string(), kPvfsMountType);
}

// The pvfs mounts named `source` (empty: none), but `known_mount`.
std::vector<std::string> mounts_named(const std::string& source, const std::string& known_mount) {
  std::vector<std::string> points;
  if (source.empty()) return points;
  for (auto& point : mount_points_of(mount_table(), kPvfsMountType, source))
    if (known_mount.empty() || point != fs::path(known_mount).lexically_normal().string())
      points.push_back(std::move(point));
  return points;
}

// fusermount3 -u, else a lazy unmount (the mount is in use).
void unmount(const std::string& mount_point) {
  const pid_t child = ::fork();
  if (child == 0) {
    const int null_fd = ::open("/dev/null", O_WRONLY);
    if (null_fd >= 0) {
      ::dup2(null_fd, STDOUT_FILENO);
      ::dup2(null_fd, STDERR_FILENO);
    }
    ::execlp("fusermount3", "fusermount3", "-u", mount_point.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  if (child > 0) ::waitpid(child, &status, 0);
  if (child < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) ::umount2(mount_point.c_str(), MNT_DETACH);
}

// DIR/pvfs.toml as the daemons were given it: canonical while DIR exists.
fs::path config_of(const fs::path& dir) {
  std::error_code ec;
  fs::path where = fs::canonical(dir, ec);
  if (ec) where = fs::absolute(dir, ec).lexically_normal();
  return (where / "pvfs.toml").lexically_normal();
}

}  // namespace

LeftBehind find_left_behind(const fs::path& dir, const std::vector<int>& known_pids, const std::string& known_mount,
                            const std::string& source) {
  LeftBehind left;
  for (const Found& f : find_from(config_of(dir))) {
    if (f.mount) {
      if (known_mount.empty() || fs::path(f.mount_point).lexically_normal() != fs::path(known_mount).lexically_normal())
        ++left.mounts;
    } else if (std::find(known_pids.begin(), known_pids.end(), f.pid) == known_pids.end()) {
      ++left.daemons;
    }
  }
  left.mounts = std::max(left.mounts, static_cast<int>(mounts_named(source, known_mount).size()));
  return left;
}

LeftBehind stop_left_behind(const fs::path& dir, const std::string& source) {
  const auto found = find_from(config_of(dir));
  const auto named = mounts_named(source, {});
  std::vector<Found> mounts, daemons;
  for (const Found& f : found) (f.mount ? mounts : daemons).push_back(f);
  // Mounts first: a daemon gone under a live mount leaves its callers waiting.
  stop(mounts);
  for (const Found& f : mounts)
    if (!f.mount_point.empty() && pvfs_mount_at(f.mount_point)) ::umount2(f.mount_point.c_str(), MNT_DETACH);
  // Mounts whose pvfsmount named the config by a relative path: it exits
  // once its mount is gone.
  for (const auto& point : named)
    if (pvfs_mount_at(point)) unmount(point);
  stop(daemons);
  return {static_cast<int>(daemons.size()), std::max(static_cast<int>(mounts.size()), static_cast<int>(named.size()))};
}

}  // namespace pvfs
