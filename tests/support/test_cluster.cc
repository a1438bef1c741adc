#include "tests/support/test_cluster.h"

#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace pvfs::test {

namespace fs = std::filesystem;

bool fuse_available() { return ::access("/dev/fuse", R_OK | W_OK) == 0; }

bool fuse_required() {
  const char* ci = std::getenv("CI");
  return ci && std::string(ci) == "true";
}

bool skip_without_fuse() {
  if (fuse_available()) return false;
  if (fuse_required()) FAIL("/dev/fuse is missing, and CI=true requires FUSE tests to run");
  MESSAGE("skipped: /dev/fuse is not available");
  return true;
}

namespace {

// Mount points under `dir` from /proc/self/mountinfo (field 5), deepest first.
std::vector<std::string> mounts_under(const fs::path& dir) {
  const std::string prefix = dir.string() + "/";
  std::vector<std::string> found;
  std::ifstream info("/proc/self/mountinfo");
  for (std::string line; std::getline(info, line);) {
    std::istringstream fields(line);
    std::string id, parent, device, root, point;
    fields >> id >> parent >> device >> root >> point;
    if (point.rfind(prefix, 0) == 0) found.push_back(point);
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
  return found;
}

bool is_pvfs_process(pid_t pid) {
  std::ifstream cmdline("/proc/" + std::to_string(pid) + "/cmdline");
  std::string argv0;
  std::getline(cmdline, argv0, '\0');
  return argv0.find("pvfs") != std::string::npos;
}

}  // namespace

void undo_test_folder(const fs::path& dir) {
  for (const auto& point : mounts_under(dir)) ::umount2(point.c_str(), MNT_DETACH);
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    const fs::path& file = it->path();
    if (file.extension() != ".pid" || file.parent_path().filename() != "run") continue;
    pid_t pid = 0;
    std::ifstream(file) >> pid;
    if (pid > 0 && is_pvfs_process(pid)) ::kill(pid, SIGKILL);
  }
  if (!keep_test_dirs()) fs::remove_all(dir, ec);
}

TestCluster::TestCluster(ClusterOptions options, bool mount, const std::string& mount_options)
    : dir_("pvfs-cluster"), on_signal_([dir = dir_.path()] { undo_test_folder(dir); }) {
  options.dir = dir_.path() / "cluster";
  // up() starts a new cluster again with new ports when another test's
  // took one of those it picked.
  auto up = LocalCluster::up(options);
  if (!up) FAIL("cannot start cluster: " << up.status().to_string());
  cluster_ = std::make_unique<LocalCluster>(std::move(*up));
  if (mount || !mount_options.empty()) {
    mnt_ = dir_.path() / "mnt";
    Status st = cluster_->mount(mnt_, mount_options);
    if (!st.ok()) {
      (void)cluster_->down();
      FAIL("cannot mount: " << st.to_string());
    }
  }
}

TestCluster::~TestCluster() {
  if (cluster_) (void)cluster_->down();
}

}  // namespace pvfs::test
