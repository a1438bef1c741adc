#include "fs/dir_lease_cache.h"

#include <algorithm>
#include <optional>

namespace pvfs {

bool DirLeaseCache::absent(InodeId dir, std::string_view name, uint32_t uid, uint32_t gid, TimePoint now) const {
  auto it = dirs_.find(dir.value);
  if (it == dirs_.end() || !it->second.lease) return false;
  const Lease& l = *it->second.lease;
  if (now >= l.until || l.uid != uid || l.gid != gid) return false;
  return !l.names.count(name_hash(l.key, name));
}

bool DirLeaseCache::should_ask(InodeId dir, TimePoint now) const {
  auto it = dirs_.find(dir.value);
  if (it == dirs_.end()) return true;
  const Dir& d = it->second;
  if (d.ticket != 0 || now < d.retry_at) return false;
  return !d.lease || now >= d.lease->until;
}

DirLeaseCache::Dir& DirLeaseCache::entry(InodeId dir, TimePoint now) {
  if (dirs_.size() >= kMaxDirs && !dirs_.count(dir.value)) forget_idle(now);
  return dirs_[dir.value];
}

bool DirLeaseCache::missed(InodeId dir, TimePoint now) {
  if (!should_ask(dir, now)) return false;
  Dir& d = entry(dir, now);
  if (d.lease) {  // it ran its term, not recalled
    d.lease.reset();
    d.recall_backoff = Duration::zero();
  }
  const bool again = d.last_miss && now - *d.last_miss < kMissWindow;
  d.last_miss = now;
  return again;
}

uint64_t DirLeaseCache::asking(InodeId dir, TimePoint now) {
  Dir& d = entry(dir, now);
  d.lease.reset();
  d.ticket = next_ticket_++;
  d.collected.assign(d.pending.begin(), d.pending.end());
  return d.ticket;
}

bool DirLeaseCache::granted(InodeId dir, uint64_t ticket, uint32_t uid, uint32_t gid, const NameHashKey& key,
                            const std::vector<uint64_t>& names, TimePoint sent, Duration term) {
  auto it = dirs_.find(dir.value);
  if (it == dirs_.end() || it->second.ticket != ticket) return false;
  Dir& d = it->second;
  d.ticket = 0;
  d.renew_ticket = 0;
  Lease l{key, {names.begin(), names.end()}, sent + term, term, uid, gid};
  for (const auto& name : d.collected) l.names.insert(name_hash(key, name));
  d.collected.clear();
  d.lease = std::move(l);
  return true;
}

uint64_t DirLeaseCache::renewing(InodeId dir, TimePoint now) {
  auto it = dirs_.find(dir.value);
  if (it == dirs_.end() || !it->second.lease || it->second.renew_ticket) return 0;
  const Lease& l = *it->second.lease;
  if (now >= l.until || l.until - now > l.term / 2) return 0;
  it->second.renew_ticket = next_ticket_++;
  return it->second.renew_ticket;
}

void DirLeaseCache::renewed(InodeId dir, uint64_t ticket, TimePoint sent, Duration term) {
  auto it = dirs_.find(dir.value);
  if (it == dirs_.end() || it->second.renew_ticket != ticket) return;
  it->second.renew_ticket = 0;
  if (it->second.lease) it->second.lease->until = std::max(it->second.lease->until, sent + term);
}

void DirLeaseCache::renewal_failed(InodeId dir, uint64_t ticket) {
  auto it = dirs_.find(dir.value);
  if (it != dirs_.end() && it->second.renew_ticket == ticket) it->second.renew_ticket = 0;
}

void DirLeaseCache::refused(InodeId dir, uint64_t ticket, TimePoint retry_at) {
  auto it = dirs_.find(dir.value);
  if (it == dirs_.end() || it->second.ticket != ticket) return;
  it->second.ticket = 0;
  it->second.collected.clear();
  it->second.retry_at = retry_at;
}

void DirLeaseCache::adding(InodeId dir, std::string_view name, TimePoint now) {
  // Tracked even with no lease: one asked for before the addition is
  // answered may not count it.
  Dir& d = entry(dir, now);
  d.pending.emplace(name);
  if (d.lease) d.lease->names.insert(name_hash(d.lease->key, name));
  if (d.ticket) d.collected.emplace_back(name);
}

void DirLeaseCache::added(InodeId dir, std::string_view name) {
  auto it = dirs_.find(dir.value);
  if (it == dirs_.end()) return;
  auto& pending = it->second.pending;
  if (auto p = pending.find(std::string(name)); p != pending.end()) pending.erase(p);
}

void DirLeaseCache::recalled(InodeId dir, TimePoint now) {
  Dir& d = entry(dir, now);
  d.lease.reset();
  d.ticket = 0;  // an answer in flight may predate the recall
  d.renew_ticket = 0;
  d.collected.clear();
  d.recall_backoff = d.recall_backoff == Duration::zero()
                         ? Duration(kRetryAfterRecall)
                         : std::min<Duration>(2 * d.recall_backoff, kMaxRetryAfterRecall);
  d.retry_at = now + d.recall_backoff;
}

void DirLeaseCache::clear() {
  for (auto& [dir, d] : dirs_) {
    d.lease.reset();
    d.ticket = 0;
    d.renew_ticket = 0;
    d.collected.clear();
  }
}

size_t DirLeaseCache::held(TimePoint now) const {
  size_t n = 0;
  for (const auto& [dir, d] : dirs_) n += d.lease && now < d.lease->until;
  return n;
}

void DirLeaseCache::forget_idle(TimePoint now) {
  std::erase_if(dirs_, [&](const auto& kv) {
    const Dir& d = kv.second;
    return d.ticket == 0 && d.renew_ticket == 0 && d.pending.empty() && now >= d.retry_at && (!d.lease || now >= d.lease->until) &&
           (!d.last_miss || now - *d.last_miss >= kMissWindow);
  });
}

}  // namespace pvfs
