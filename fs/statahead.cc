#include "fs/statahead.h"

#include <algorithm>
#include <utility>

namespace pvfs {

Statahead::Walk& Statahead::walk_of(const Walker& w, Clock::time_point now) {
  auto it = walks_.find(w);
  if (it == walks_.end()) {
    while (walks_.size() >= kMaxDirs) {
      auto idlest = std::min_element(walks_.begin(), walks_.end(), [](const auto& a, const auto& b) {
        return a.second.touched < b.second.touched;
      });
      walks_.erase(idlest);
    }
    it = walks_.emplace(w, Walk{}).first;
  }
  it->second.touched = now;
  return it->second;
}

namespace {
// One more lookup at `cookie`: does it continue the walk in listing order?
void step(int& length, uint64_t& last_cookie, uint64_t cookie) {
  const bool onward =
      length > 0 && cookie > last_cookie && cookie - last_cookie <= Statahead::kMaxStride;
  length = onward ? length + 1 : 1;
  last_cookie = cookie;
}
}  // namespace

std::optional<uint64_t> Statahead::note_lookup(const Walker& w, uint64_t cookie,
                                               Clock::time_point now) {
  if (cookie == 0) return std::nullopt;
  Walk& k = walk_of(w, now);
  step(k.length, k.last_cookie, cookie);
  // A new walk (from the top again, or past a jump) fetches its own windows:
  // what an earlier walk fetched says nothing of where this one will go.
  if (k.length == 1) k.fetched_to = 0;
  if (k.length < kWalkLength || cookie < k.fetched_to) return std::nullopt;
  // Until the window arrives, lookups inside it do not ask for it again.
  k.fetched_to = cookie + kWindow;
  return cookie;
}

void Statahead::keep(const Walker& w, uint64_t after, std::vector<DirEntry> entries,
                     Clock::time_point fetched, uint64_t generation) {
  Walk& k = walk_of(w, fetched);
  auto changed = dir_changed_.find(w.dir);
  const uint64_t dir_changed =
      changed == dir_changed_.end() ? dirs_changed_floor_ : changed->second;
  if (dir_changed > generation || inode_changed_ > generation) {
    k.fetched_to = after;  // the next lookup past it asks again
    return;
  }
  // What the walk has passed will not be asked for again.
  std::erase_if(k.entries, [after](const auto& e) { return e.second.cookie <= after; });
  for (DirEntry& e : entries) {
    if (!e.attr) continue;
    k.entries[std::move(e.name)] = Fetched{std::move(*e.attr), e.cookie, fetched};
  }
  if (!entries.empty()) k.fetched_to = entries.back().cookie;
}

std::optional<Statahead::Hit> Statahead::take(const Walker& w, const std::string& name,
                                              Clock::time_point now, Clock::duration max_age) {
  auto walk = walks_.find(w);
  if (walk == walks_.end()) return std::nullopt;
  Walk& k = walk->second;
  auto it = k.entries.find(name);
  if (it == k.entries.end()) return std::nullopt;
  Fetched got = std::move(it->second);
  k.entries.erase(it);
  if (now - got.at > max_age) return std::nullopt;
  k.touched = now;
  step(k.length, k.last_cookie, got.cookie);
  return Hit{std::move(got.attr), now - got.at};
}

void Statahead::forget(InodeId dir, const std::string& name) {
  ++generation_;
  if (dir_changed_.size() >= kMaxChangedDirs && !dir_changed_.contains(dir)) {
    dir_changed_.clear();
    dirs_changed_floor_ = generation_;
  }
  dir_changed_[dir] = generation_;
  for (auto& [walker, walk] : walks_) {
    if (walker.dir != dir) continue;
    auto it = walk.entries.find(name);
    if (it == walk.entries.end()) continue;
    const InodeId ino = it->second.attr.ino;
    walk.entries.erase(it);
    erase_inode(ino);  // its other names (hard links) show its link count
  }
}

void Statahead::forget_inode(InodeId ino) {
  inode_changed_ = ++generation_;
  erase_inode(ino);
}

void Statahead::erase_inode(InodeId ino) {
  for (auto& [walker, walk] : walks_)
    std::erase_if(walk.entries, [ino](const auto& e) { return e.second.attr.ino == ino; });
}

}  // namespace pvfs
