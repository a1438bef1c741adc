#include "tests/support/temp_dir.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <stdlib.h>

namespace pvfs::test {

namespace fs = std::filesystem;

TempDir::TempDir(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/" + prefix + "-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) {
    std::fprintf(stderr, "mkdtemp %s: %s\n", pattern.c_str(), std::strerror(errno));
    std::abort();
  }
  path_ = buf.data();
}

bool keep_test_dirs() {
  const char* keep = std::getenv("PVFS_KEEP_TEST_DIRS");
  return keep && std::string(keep) == "1";
}

TempDir::~TempDir() {
  if (keep_test_dirs()) {
    std::fprintf(stderr, "kept test folder %s\n", path_.c_str());
    return;
  }
  std::error_code ec;
  fs::remove_all(path_, ec);
}

}  // namespace pvfs::test
