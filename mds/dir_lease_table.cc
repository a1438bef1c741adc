#include "mds/dir_lease_table.h"

#include <algorithm>

namespace pvfs::mds {

void DirLeaseTable::grant(InodeId dir, Holder holder, std::weak_ptr<void> handle, TimePoint until,
                          TimePoint now) {
  if (++grants_since_prune_ >= kPruneEvery) prune(now);
  auto& leases = by_dir_[dir.value];
  for (Lease& l : leases) {
    if (l.holder != holder) continue;
    l.handle = std::move(handle);
    l.until = std::max(l.until, until);
    return;
  }
  leases.push_back(Lease{holder, std::move(handle), until});
}

bool DirLeaseTable::renew(InodeId dir, Holder holder, TimePoint until, TimePoint now) {
  auto it = by_dir_.find(dir.value);
  if (it == by_dir_.end()) return false;
  for (Lease& l : it->second) {
    if (l.holder != holder || l.until <= now) continue;
    l.until = std::max(l.until, until);
    return true;
  }
  return false;
}

bool DirLeaseTable::leased(InodeId dir, TimePoint now) const {
  auto it = by_dir_.find(dir.value);
  if (it == by_dir_.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(), [&](const Lease& l) { return l.until > now; });
}

std::vector<DirLeaseTable::Lease> DirLeaseTable::take_others(InodeId dir, Holder except, TimePoint now) {
  std::vector<Lease> out;
  auto it = by_dir_.find(dir.value);
  if (it == by_dir_.end()) return out;
  auto& leases = it->second;
  std::vector<Lease> kept;
  for (Lease& l : leases) {
    if (l.until <= now) continue;
    if (l.holder == except) kept.push_back(std::move(l));
    else out.push_back(std::move(l));
  }
  if (kept.empty()) by_dir_.erase(it);
  else leases = std::move(kept);
  return out;
}

std::vector<std::pair<InodeId, DirLeaseTable::Lease>> DirLeaseTable::take_fileset(FileSetId set, TimePoint now) {
  std::vector<std::pair<InodeId, Lease>> out;
  for (auto it = by_dir_.begin(); it != by_dir_.end();) {
    const InodeId dir(it->first);
    if (dir.fileset() != set) {
      ++it;
      continue;
    }
    for (Lease& l : it->second)
      if (l.until > now) out.emplace_back(dir, std::move(l));
    it = by_dir_.erase(it);
  }
  return out;
}

size_t DirLeaseTable::count(TimePoint now) const {
  size_t n = 0;
  for (const auto& [dir, leases] : by_dir_)
    n += std::count_if(leases.begin(), leases.end(), [&](const Lease& l) { return l.until > now; });
  return n;
}

void DirLeaseTable::prune(TimePoint now) {
  grants_since_prune_ = 0;
  for (auto it = by_dir_.begin(); it != by_dir_.end();) {
    auto& leases = it->second;
    std::erase_if(leases, [&](const Lease& l) { return l.until <= now; });
    it = leases.empty() ? by_dir_.erase(it) : std::next(it);
  }
}

}  // namespace pvfs::mds
