// Test support: a temporary folder per test and a real local cluster
// (daemons as processes on loopback, optionally a real FUSE mount) that is
// torn down even when the test fails. Logs stay in the folder when
// PVFS_KEEP_TEST_DIRS=1 (the path is printed).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "tests/support/signal_cleanup.h"
#include "tests/support/temp_dir.h"
#include "utils/cluster/local_cluster.h"

namespace pvfs::test {

// Whether FUSE tests can run here. Outside CI a missing /dev/fuse skips with
// a message; with CI=true it is a failure (checked by the caller via
// fuse_required()). A test case that returns early for want of something
// says MESSAGE("skipped: <why>") first: scripts/count-tests counts each such
// case as skipped, not passed.
bool fuse_available();
bool fuse_required();
// For a test that needs a mount: true (after saying so) when it should
// return early because FUSE is missing here; fails the test under CI.
bool skip_without_fuse();

// A running cluster in a TempDir. Aborts the test (doctest REQUIRE) when it
// cannot start. `mount_options` non-empty or `mount` true: mounted at
// dir/mnt with pvfsmount. When the test program is stopped by a signal
// (meson's timeout, Ctrl-C), every mount under the folder is detached and
// the cluster's daemons are killed (CleanupOnSignal).
class TestCluster {
 public:
  explicit TestCluster(ClusterOptions options = {}, bool mount = false,
                       const std::string& mount_options = {});
  ~TestCluster();
  LocalCluster& cluster() { return *cluster_; }
  const Config& config() const { return cluster_->config(); }
  const std::filesystem::path& dir() const { return dir_.path(); }
  // The mount point (valid when mounted).
  const std::filesystem::path& mnt() const { return mnt_; }

 private:
  TempDir dir_;
  std::unique_ptr<LocalCluster> cluster_;
  std::filesystem::path mnt_;
  CleanupOnSignal on_signal_;
};

// What CleanupOnSignal does for a test's folder `dir`: detaches every mount
// under it (deepest first) and SIGKILLs every pvfs daemon whose pid file is
// in a run/ folder under it, then removes it unless PVFS_KEEP_TEST_DIRS=1.
void undo_test_folder(const std::filesystem::path& dir);

}  // namespace pvfs::test
