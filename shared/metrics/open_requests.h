// The requests a daemon is serving right now, for the slow-request check of
// pvfs-ctl health: how many, and when the oldest arrived. An intrusive list
// of guards living in the requests' coroutine frames, so tracking costs two
// pointer writes and no allocation per request; the oldest is found by a
// walk, done only when someone asks (status, metrics). Not thread-safe:
// owned by the daemon's network thread, like RequestStats.
#pragma once

#include <chrono>
#include <cstdint>

namespace pvfs::metrics {

class OpenRequests {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  // Counts a request from `arrived` until the guard is destroyed. Not
  // copyable or movable: the list points at it.
  class Guard {
   public:
    Guard(OpenRequests& list, TimePoint arrived) : list_(list), arrived_(arrived), next_(list.head_) {
      if (next_) next_->prev_ = this;
      list.head_ = this;
      ++list.count_;
    }
    ~Guard() {
      if (prev_) prev_->next_ = next_;
      else list_.head_ = next_;
      if (next_) next_->prev_ = prev_;
      --list_.count_;
    }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    friend class OpenRequests;
    OpenRequests& list_;
    TimePoint arrived_;
    Guard* prev_ = nullptr;
    Guard* next_;
  };

  OpenRequests() = default;
  OpenRequests(const OpenRequests&) = delete;
  OpenRequests& operator=(const OpenRequests&) = delete;

  // Requests being served.
  uint64_t count() const { return count_; }
  // How long the oldest of them has been in progress at `now` (zero: none).
  std::chrono::milliseconds oldest_age(TimePoint now) const {
    const Guard* oldest = nullptr;
    for (const Guard* g = head_; g; g = g->next_)
      if (!oldest || g->arrived_ < oldest->arrived_) oldest = g;
    if (!oldest || now <= oldest->arrived_) return std::chrono::milliseconds(0);
    return std::chrono::duration_cast<std::chrono::milliseconds>(now - oldest->arrived_);
  }

 private:
  Guard* head_ = nullptr;
  uint64_t count_ = 0;
};

}  // namespace pvfs::metrics
