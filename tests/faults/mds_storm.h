// Fault suite support for the metadata server cases: a create storm over
// the file sets made by top-level directories, logging every acknowledged
// create in an AckLog, and the count of file sets a member holds in its
// data directory.
#pragma once

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "mds/fileset_catalog.h"
#include "tests/faults/ack_log.h"

namespace pvfs::test {

// The file sets (fileset-N folders) in a metadata server's data directory;
// those renamed after a take-over do not count.
inline size_t filesets_in(const std::filesystem::path& data_dir) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& item : std::filesystem::directory_iterator(data_dir, ec))
    if (item.is_directory() && pvfs::mds::FileSetCatalog::parse_dir_name(item.path().filename().string()))
      ++n;
  return n;
}

// Creates files in directories mnt/set0 .. set(sets-1) from `writers`
// threads until stopped, logging each create whose open, write and close
// all succeeded.
class CreateStorm {
 public:
  CreateStorm(std::filesystem::path mnt, AckLog& log, int sets, int writers)
      : mnt_(std::move(mnt)), log_(log), sets_(sets) {
    for (int w = 0; w < writers; ++w) threads_.emplace_back([this, w] { run(w); });
  }
  CreateStorm(const CreateStorm&) = delete;
  CreateStorm& operator=(const CreateStorm&) = delete;
  ~CreateStorm() { stop(); }
  void stop() {
    stop_ = true;
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }
  uint64_t failed() const { return failed_; }
  // The failed creates, one line each: seconds since the storm began, the
  // path and the error of the call that failed (for failure messages).
  std::string failures() const {
    std::lock_guard lock(mutex_);
    return failures_;
  }
  std::vector<std::filesystem::path> failed_paths() const {
    std::lock_guard lock(mutex_);
    return failed_paths_;
  }

 private:
  void run(int w) {
    for (uint64_t n = 0; !stop_; ++n) {
      const std::filesystem::path file = mnt_ / ("set" + std::to_string((n + w) % sets_)) /
                                         ("w" + std::to_string(w) + "-" + std::to_string(n));
      const std::string content = AckLog::content_for(file.string());
      if (write_whole(file, content)) {
        log_.acknowledged(file, content);
        continue;
      }
      const int error = errno;
      ++failed_;
      const double at = std::chrono::duration<double>(std::chrono::steady_clock::now() - begun_).count();
      std::lock_guard lock(mutex_);
      failed_paths_.push_back(file);
      failures_ += std::to_string(at) + " s " + file.string() + ": " + std::strerror(error) + "\n";
    }
  }
  std::filesystem::path mnt_;
  AckLog& log_;
  const uint64_t sets_;
  const std::chrono::steady_clock::time_point begun_ = std::chrono::steady_clock::now();
  mutable std::mutex mutex_;
  std::string failures_;
  std::vector<std::filesystem::path> failed_paths_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> failed_{0};
  std::vector<std::thread> threads_;
};

}  // namespace pvfs::test
