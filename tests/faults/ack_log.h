// Fault suite support: a log of acknowledged operations, kept while a fault
// is injected and verified afterwards by content. An operation counts as
// acknowledged only when every call of it returned success; verification
// reads each file back (retrying until a deadline, since file sets may still
// be moving) and counts what is missing or different as lost.
// Thread-safe: writers log from many threads.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "tests/support/file_content.h"

namespace pvfs::test {

// Creates `file` (it must not exist) holding `content`; true only when
// open, write and close all succeeded.
inline bool write_whole(const std::filesystem::path& file, const std::string& content) {
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const bool wrote = ::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size());
  const bool closed = ::close(fd) == 0;
  return wrote && closed;
}

class AckLog {
 public:
  struct Tally {
    size_t acknowledged = 0, verified = 0, lost = 0;
    std::string first_lost;  // a path, for the failure message
  };

  // Content unique to `path`, at least `bytes` long.
  static std::string content_for(const std::string& path, size_t bytes = 200) {
    std::string out;
    out.reserve(bytes + path.size() + 16);
    for (uint64_t n = 0; out.size() < bytes; ++n) {
      out += path;
      out += '#';
      out += std::to_string(n);
      out += ';';
    }
    return out;
  }

  void acknowledged(const std::filesystem::path& file, std::string content) {
    std::lock_guard lock(mutex_);
    acked_[file] = std::move(content);
  }

  // Reads every acknowledged file back; files not (yet) right are retried
  // until `patience` has passed.
  Tally verify(std::chrono::seconds patience) const {
    std::lock_guard lock(mutex_);
    Tally t;
    t.acknowledged = acked_.size();
    std::map<std::filesystem::path, std::string> pending = acked_;
    const auto until = std::chrono::steady_clock::now() + patience;
    for (;;) {
      for (auto it = pending.begin(); it != pending.end();) {
        if (read_file(it->first) == it->second) it = pending.erase(it);
        else ++it;
      }
      if (pending.empty() || std::chrono::steady_clock::now() > until) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    t.lost = pending.size();
    t.verified = t.acknowledged - t.lost;
    if (!pending.empty()) t.first_lost = pending.begin()->first.string();
    return t;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::filesystem::path, std::string> acked_;
};

}  // namespace pvfs::test
