#include "fs/caller_cache.h"

#include <algorithm>

namespace pvfs {

CallerCache::CallerCache(Clock::duration lifetime, size_t max_entries)
    : lifetime_(lifetime), max_entries_(std::max<size_t>(max_entries, 1)) {}

const CallerInfo* CallerCache::find(uint32_t tid, uint32_t uid, uint32_t gid,
                                    Clock::time_point now) const {
  auto it = entries_.find(tid);
  if (it == entries_.end()) return nullptr;
  const Entry& e = it->second;
  if (e.uid != uid || e.gid != gid || now - e.stored >= lifetime_ || now < e.stored) return nullptr;
  return &e.info;
}

void CallerCache::store(uint32_t tid, uint32_t uid, uint32_t gid, CallerInfo info,
                        Clock::time_point now) {
  if (entries_.size() >= max_entries_ && !entries_.contains(tid)) {
    std::erase_if(entries_, [&](const auto& kv) { return now - kv.second.stored >= lifetime_; });
    // A sweep that freed under a quarter would come back at the next store:
    // start afresh, so a sweep costs O(1) per store over time.
    if (entries_.size() > max_entries_ * 3 / 4) entries_.clear();
  }
  entries_.insert_or_assign(tid, Entry{uid, gid, now, std::move(info)});
}

}  // namespace pvfs
