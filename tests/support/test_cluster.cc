#include "tests/support/test_cluster.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

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

void undo_test_folder(const fs::path& dir) { undo_folder(dir, !keep_test_dirs()); }

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
