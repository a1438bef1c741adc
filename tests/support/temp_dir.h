// Test support: a temporary folder per test, removed on destruction unless
// PVFS_KEEP_TEST_DIRS=1 (then its path is printed). No other dependencies,
// so pure unit tests can use it too.
#pragma once

#include <filesystem>
#include <string>

namespace pvfs::test {

// Whether PVFS_KEEP_TEST_DIRS=1: test folders stay for their logs.
bool keep_test_dirs();

// mkdtemp under $TMPDIR (or /tmp); removed on destruction unless kept.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "pvfs-test");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace pvfs::test
