#include "fs/listing_ahead.h"

#include <algorithm>
#include <utility>

namespace pvfs {

void ListingAhead::keep(const Key& key, uint64_t after, std::vector<DirEntry> entries, bool eof,
                        uint64_t epoch, Clock::time_point fetched) {
  if (entries.empty() && !eof) {
    rests_.erase(key);
    return;
  }
  // A listing abandoned half way (an `ls | head`) leaves its rest behind;
  // past the cap the oldest listings' rests go first.
  while (rests_.size() >= kMaxRests && !rests_.contains(key)) {
    auto oldest = std::min_element(rests_.begin(), rests_.end(), [](const auto& a, const auto& b) {
      return a.second.fetched < b.second.fetched;
    });
    rests_.erase(oldest);
  }
  rests_[key] = Rest{after, std::move(entries), eof, epoch, fetched};
}

std::optional<ListingAhead::Page> ListingAhead::take(const Key& key, uint64_t after, uint32_t max,
                                                     uint64_t epoch, Clock::time_point now,
                                                     Clock::duration max_age) {
  auto it = rests_.find(key);
  if (it == rests_.end()) return std::nullopt;
  const Rest& rest = it->second;
  if (rest.epoch != epoch || now - rest.fetched > max_age) {
    rests_.erase(it);
    return std::nullopt;
  }
  // Where the kernel stopped: where the rest starts, or just past one of
  // its entries (cookies rise along the listing). Entries already handed
  // out stay: the kernel may have had room for only some of them.
  size_t start = 0;
  if (after != rest.after) {
    auto hit = std::lower_bound(rest.entries.begin(), rest.entries.end(), after,
                                [](const DirEntry& e, uint64_t c) { return e.cookie < c; });
    if (hit == rest.entries.end() || hit->cookie != after) return std::nullopt;
    start = static_cast<size_t>(hit - rest.entries.begin()) + 1;
  }
  if (max == 0) return std::nullopt;
  Page out;
  out.age = now - rest.fetched;
  if (start == rest.entries.size()) {
    // All of it went to the kernel: the end of the directory, or the MDS's
    // turn. An empty directory's rest stays (until max_age): the kernel,
    // given only "." and "..", asks again from the same start.
    const bool eof = rest.eof;
    if (!rest.entries.empty() || !eof) rests_.erase(it);
    if (!eof) return std::nullopt;
    out.page.eof = true;
    return out;
  }
  const size_t n = std::min<size_t>(max, rest.entries.size() - start);
  auto from = rest.entries.begin() + static_cast<std::ptrdiff_t>(start);
  out.page.entries.assign(from, from + static_cast<std::ptrdiff_t>(n));
  out.page.eof = start + n == rest.entries.size() && rest.eof;
  return out;
}

}  // namespace pvfs
