#include "tests/support/test_cluster.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

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

TestCluster::TestCluster(ClusterOptions options, bool mount, const std::string& mount_options)
    : dir_("pvfs-cluster") {
  options.dir = dir_.path() / "cluster";
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
