#include "fs/xattr_absence.h"

#include <algorithm>

namespace pvfs {

XattrAbsence::XattrAbsence(Clock::duration lifetime, size_t max_inodes)
    : lifetime_(lifetime), max_inodes_(std::max<size_t>(max_inodes, 1)) {}

bool XattrAbsence::tracked(std::string_view name) {
  return name.starts_with("security.");
}

namespace {
// Noted for an inode the MDS said has no security.* xattr at all.
constexpr std::string_view kNone = "security.";
}  // namespace

bool XattrAbsence::absent(uint64_t ino, std::string_view name, Clock::time_point now) const {
  if (!tracked(name)) return false;
  auto it = inodes_.find(ino);
  if (it == inodes_.end()) return false;
  return std::ranges::any_of(it->second, [&](const Noted& n) {
    return (n.name == name || n.name == kNone) && fresh(n, now);
  });
}

void XattrAbsence::note_none(uint64_t ino, Clock::time_point now) {
  if (last_change_ && now >= *last_change_ && now - *last_change_ < lifetime_) return;
  note_absent(ino, kNone, now, generation_);
}

void XattrAbsence::note_absent(uint64_t ino, std::string_view name, Clock::time_point now,
                               uint64_t asked_at) {
  if (lifetime_ <= Clock::duration::zero() || !tracked(name) || asked_at != generation_) return;
  if (inodes_.size() >= max_inodes_ && !inodes_.contains(ino)) {
    std::erase_if(inodes_, [&](const auto& kv) {
      return std::ranges::none_of(kv.second, [&](const Noted& n) { return fresh(n, now); });
    });
    // A sweep that freed under a quarter would come back at the next note:
    // start afresh, so a sweep costs O(1) per note over time.
    if (inodes_.size() > max_inodes_ * 3 / 4) inodes_.clear();
  }
  auto& names = inodes_[ino];
  for (Noted& n : names) {
    if (n.name == name) {
      n.at = now;
      return;
    }
  }
  names.push_back({std::string(name), now});
}

}  // namespace pvfs
