#include "utils/cluster/left_behind.h"

#include <signal.h>
#include <sys/mount.h>
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

bool pvfs_mount_at(const std::string& mount_point) {
  std::ifstream in("/proc/self/mountinfo");
  const std::string table((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return has_mount_at(table, fs::path(mount_point).lexically_normal().string(), kPvfsMountType);
}

// DIR/pvfs.toml as the daemons were given it: canonical while DIR exists.
fs::path config_of(const fs::path& dir) {
  std::error_code ec;
  fs::path where = fs::canonical(dir, ec);
  if (ec) where = fs::absolute(dir, ec).lexically_normal();
  return (where / "pvfs.toml").lexically_normal();
}

}  // namespace

LeftBehind find_left_behind(const fs::path& dir, const std::vector<int>& known_pids, const std::string& known_mount) {
  LeftBehind left;
  for (const Found& f : find_from(config_of(dir))) {
    if (f.mount) {
      if (known_mount.empty() || fs::path(f.mount_point).lexically_normal() != fs::path(known_mount).lexically_normal())
        ++left.mounts;
    } else if (std::find(known_pids.begin(), known_pids.end(), f.pid) == known_pids.end()) {
      ++left.daemons;
    }
  }
  return left;
}

LeftBehind stop_left_behind(const fs::path& dir) {
  const auto found = find_from(config_of(dir));
  std::vector<Found> mounts, daemons;
  for (const Found& f : found) (f.mount ? mounts : daemons).push_back(f);
  // Mounts first: a daemon gone under a live mount leaves its callers waiting.
  stop(mounts);
  for (const Found& f : mounts)
    if (!f.mount_point.empty() && pvfs_mount_at(f.mount_point)) ::umount2(f.mount_point.c_str(), MNT_DETACH);
  stop(daemons);
  return {static_cast<int>(daemons.size()), static_cast<int>(mounts.size())};
}

}  // namespace pvfs
