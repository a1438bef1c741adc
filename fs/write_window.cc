#include "fs/write_window.h"

#include <algorithm>

namespace pvfs {

bool WriteWindow::may_start(uint64_t offset, uint64_t length, uint64_t limit) const {
  const uint64_t end = offset + length;
  for (const Range& r : ranges_)
    if (r.begin < end && offset < r.end) return false;
  return ranges_.empty() || bytes_ + length <= limit;
}

void WriteWindow::start(uint64_t offset, uint64_t length) {
  ranges_.push_back({offset, offset + length});
  bytes_ += length;
}

void WriteWindow::finish(uint64_t offset, uint64_t length, const Status& result) {
  auto it = std::find_if(ranges_.begin(), ranges_.end(),
                         [&](const Range& r) { return r.begin == offset && r.end == offset + length; });
  if (it != ranges_.end()) {
    ranges_.erase(it);
    bytes_ -= length;
  }
  if (!result.ok() && error_.ok()) error_ = result;
}

uint64_t WriteWindow::end() const {
  uint64_t furthest = 0;
  for (const Range& r : ranges_) furthest = std::max(furthest, r.end);
  return furthest;
}

Status WriteWindow::take_error() {
  Status e = error_;
  error_ = Status{};
  return e;
}

}  // namespace pvfs
