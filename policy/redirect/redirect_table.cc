#include "policy/redirect/redirect_table.h"

namespace pvfs::redirect {

Change RedirectTable::finish(ObjectId object, std::vector<Entry> removed) {
  Change change;
  auto it = logs_.find(object);
  const RedirectLog* log = it == logs_.end() ? nullptr : &it->second;
  for (const Entry& e : removed) {
    if (e.where.local) continue;
    if (log && log->references(e.where.server, e.where.fragment)) continue;
    Garbage g{e.where.server, object, e.where.fragment};
    bool seen = false;
    for (const auto& other : change.garbage) seen = seen || other == g;
    if (!seen) change.garbage.push_back(g);
  }
  change.removed = std::move(removed);
  return change;
}

Change RedirectTable::append(ObjectId object, const Entry& e) {
  if (e.seq > last_seq_) last_seq_ = e.seq;
  auto it = logs_.find(object);
  if (it == logs_.end()) {
    if (e.where.local) return {};  // nothing redirected: a local entry changes nothing
    it = logs_.emplace(object, RedirectLog{}).first;
  }
  std::vector<Entry> removed = it->second.append(e);
  if (it->second.empty()) logs_.erase(it);
  return finish(object, std::move(removed));
}

void RedirectTable::restore(ObjectId object, const Entry& e) { append(object, e); }

Change RedirectTable::drop(ObjectId object) {
  auto it = logs_.find(object);
  if (it == logs_.end()) return {};
  std::vector<Entry> removed;
  for (const Entry& e : it->second.entries())
    if (e.seq != 0) removed.push_back(e);
  logs_.erase(it);
  return finish(object, std::move(removed));
}

std::vector<Segment> RedirectTable::query(ObjectId object, uint64_t begin, uint64_t end) const {
  auto it = logs_.find(object);
  if (it == logs_.end()) return {Segment{begin, end, Location::home()}};
  return it->second.query(begin, end);
}

bool RedirectTable::overlaps_remote(ObjectId object, uint64_t begin, uint64_t end) const {
  auto it = logs_.find(object);
  return it != logs_.end() && it->second.overlaps_remote(begin, end);
}

const RedirectLog* RedirectTable::find(ObjectId object) const {
  auto it = logs_.find(object);
  return it == logs_.end() ? nullptr : &it->second;
}

std::vector<ObjectId> RedirectTable::objects() const {
  std::vector<ObjectId> out;
  out.reserve(logs_.size());
  for (const auto& [object, log] : logs_) out.push_back(object);
  return out;
}

size_t RedirectTable::remote_entry_count() const {
  size_t n = 0;
  for (const auto& [object, log] : logs_)
    for (const Entry& e : log.entries()) n += e.where.local ? 0 : 1;
  return n;
}

}  // namespace pvfs::redirect
