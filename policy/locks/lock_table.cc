#include "policy/locks/lock_table.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <tuple>

namespace pvfs::locks {

namespace {

// Linux gives up looking for a cycle after this many owners
// (MAX_DEADLK_ITERATIONS in fs/locks.c); so do we.
constexpr int kMaxDeadlockHops = 10;

bool overlap(const Lock& a, const Lock& b) { return a.first <= b.last && b.first <= a.last; }

// Whether [a] and [b] overlap or touch end to start.
bool touching(const Lock& a, const Lock& b) {
  const bool a_before = a.last < b.first;
  const bool b_before = b.last < a.first;
  if (a_before) return a.last + 1 == b.first;
  if (b_before) return b.last + 1 == a.first;
  return true;
}

bool by_start(const Lock& a, const Lock& b) {
  return std::tie(a.first, a.owner, a.last) < std::tie(b.first, b.owner, b.last);
}

std::optional<uint64_t> number(std::string_view s) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

}  // namespace

std::string_view outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::granted: return "granted";
    case Outcome::conflict: return "conflict";
    case Outcome::waiting: return "waiting";
    case Outcome::deadlock: return "deadlock";
  }
  return "?";
}

bool conflicts(const Lock& a, const Lock& b) {
  return a.ino == b.ino && a.kind == b.kind && a.owner != b.owner && overlap(a, b) &&
         (a.mode == Mode::exclusive || b.mode == Mode::exclusive);
}

LockTable::LockTable(Options options) : options_(options) {}

Status LockTable::check(const Lock& want) const {
  if (want.owner.client == 0) return Status(Errc::invalid_argument, "a lock's client must not be 0");
  if (want.first > want.last) return Status(Errc::invalid_argument, "a lock's range ends before it starts");
  if (want.kind == Kind::flock && (want.first != 0 || want.last != kEof))
    return Status(Errc::invalid_argument, "a flock lock covers the whole file");
  return {};
}

bool LockTable::conflicting(const Lane& lane, const Lock& want) const {
  for (const Lock& h : lane.held) {
    if (h.first > want.last) break;
    if (conflicts(h, want)) return true;
  }
  return false;
}

void LockTable::cut(Lane& lane, Owner owner, uint64_t first, uint64_t last) {
  std::vector<Lock> kept;
  kept.reserve(lane.held.size() + 1);
  for (const Lock& h : lane.held) {
    if (h.owner != owner || h.last < first || h.first > last) {
      kept.push_back(h);
      continue;
    }
    if (h.first < first) {
      Lock left = h;
      left.last = first - 1;
      kept.push_back(left);
    }
    if (h.last > last) {
      Lock right = h;
      right.first = last + 1;
      kept.push_back(right);
    }
  }
  lock_count_ = lock_count_ - lane.held.size() + kept.size();
  std::sort(kept.begin(), kept.end(), by_start);
  lane.held = std::move(kept);
}

void LockTable::apply(Lane& lane, const Lock& want) {
  cut(lane, want.owner, want.first, want.last);
  Lock merged = want;
  std::vector<Lock> kept;
  kept.reserve(lane.held.size() + 1);
  // The owner's neighbours of the same mode join the new lock (POSIX
  // merges adjacent and overlapping ranges of one owner and type).
  for (const Lock& h : lane.held) {
    if (h.owner == want.owner && h.mode == want.mode && touching(h, merged)) {
      merged.first = std::min(merged.first, h.first);
      merged.last = std::max(merged.last, h.last);
      continue;
    }
    kept.push_back(h);
  }
  kept.push_back(merged);
  lock_count_ = lock_count_ - lane.held.size() + kept.size();
  std::sort(kept.begin(), kept.end(), by_start);
  lane.held = std::move(kept);
}

void LockTable::touch(ClientKey client, Nanos now) { leases_[client] = now + options_.lease; }

Result<Answer> LockTable::try_lock(const Lock& want, Nanos now) {
  if (Status st = check(want); !st.ok()) return st;
  touch(want.owner.client, now);
  const LaneKey key{want.ino, want.kind};
  Lane& lane = lanes_[key];
  if (conflicting(lane, want)) {
    forget_if_empty(key);
    return Answer{Outcome::conflict, 0};
  }
  if (lock_count_ + 2 > options_.max_locks) {
    forget_if_empty(key);
    return Status(Errc::no_space, "the file set holds too many locks");
  }
  apply(lane, want);
  dirty_.push_back(want.ino);
  // A downgrade or a shrink may free waiters.
  grant_waiters(key, lane);
  return Answer{Outcome::granted, 0};
}

Result<Answer> LockTable::lock_wait(const Lock& want, Nanos now) {
  auto tried = try_lock(want, now);
  if (!tried || tried->outcome != Outcome::conflict) return tried;
  if (want.kind == Kind::posix && would_deadlock(want)) return Answer{Outcome::deadlock, 0};
  if (waiter_count_ >= options_.max_waiters) return Status(Errc::no_space, "too many lock waiters");
  const uint64_t id = next_waiter_++;
  lanes_[{want.ino, want.kind}].waiters.push_back({id, want, now});
  ++waiter_count_;
  return Answer{Outcome::waiting, id};
}

bool LockTable::would_deadlock(const Lock& want) const {
  // The owners holding what `lock` needs.
  auto blockers = [this](const Lock& lock) {
    std::vector<Owner> out;
    auto it = lanes_.find({lock.ino, lock.kind});
    if (it == lanes_.end()) return out;
    for (const Lock& h : it->second.held)
      if (conflicts(h, lock)) out.push_back(h.owner);
    return out;
  };
  std::set<Owner> seen;
  std::vector<Owner> frontier = blockers(want);
  for (int hop = 0; hop < kMaxDeadlockHops && !frontier.empty(); ++hop) {
    std::vector<Owner> next;
    for (const Owner& b : frontier) {
      if (b == want.owner) return true;
      if (!seen.insert(b).second) continue;
      for (const auto& [key, lane] : lanes_) {
        if (key.second != Kind::posix) continue;
        for (const Waiter& w : lane.waiters)
          if (w.lock.owner == b)
            for (const Owner& o : blockers(w.lock)) next.push_back(o);
      }
    }
    frontier = std::move(next);
  }
  return false;
}

void LockTable::grant_waiters(const LaneKey& key, Lane& lane) {
  for (auto it = lane.waiters.begin(); it != lane.waiters.end();) {
    if (conflicting(lane, it->lock) || lock_count_ + 2 > options_.max_locks) {
      ++it;
      continue;
    }
    apply(lane, it->lock);
    dirty_.push_back(key.first);
    grants_.push_back({it->id, it->lock});
    unreported_[it->id] = {it->lock.owner.client, it->lock};
    --waiter_count_;
    it = lane.waiters.erase(it);
  }
  forget_if_empty(key);
}

void LockTable::forget_if_empty(const LaneKey& key) {
  auto it = lanes_.find(key);
  if (it != lanes_.end() && it->second.held.empty() && it->second.waiters.empty()) lanes_.erase(it);
}

WaitState LockTable::poll(uint64_t waiter, ClientKey client, Nanos now) {
  touch(client, now);
  if (auto it = unreported_.find(waiter); it != unreported_.end() && it->second.first == client) {
    unreported_.erase(it);
    return WaitState::granted;
  }
  for (const auto& [key, lane] : lanes_)
    for (const Waiter& w : lane.waiters)
      if (w.id == waiter && w.lock.owner.client == client) return WaitState::waiting;
  return WaitState::unknown;
}

bool LockTable::cancel(uint64_t waiter, ClientKey client, Nanos now) {
  touch(client, now);
  if (auto it = unreported_.find(waiter); it != unreported_.end() && it->second.first == client) {
    const Lock lock = it->second.second;
    unreported_.erase(it);
    (void)unlock(lock.ino, lock.kind, lock.owner, lock.first, lock.last, now);
    return true;
  }
  for (auto& [key, lane] : lanes_) {
    for (auto w = lane.waiters.begin(); w != lane.waiters.end(); ++w) {
      if (w->id != waiter || w->lock.owner.client != client) continue;
      lane.waiters.erase(w);
      --waiter_count_;
      const LaneKey k = key;
      // Waiters behind it that it alone kept back (none do under the
      // holders-only rule) are looked at anyway: cheap, and keeps it so.
      grant_waiters(k, lanes_[k]);
      return true;
    }
  }
  return false;
}

Status LockTable::unlock(uint64_t ino, Kind kind, Owner owner, uint64_t first, uint64_t last, Nanos now) {
  if (owner.client == 0) return Status(Errc::invalid_argument, "a lock's client must not be 0");
  if (first > last) return Status(Errc::invalid_argument, "a lock's range ends before it starts");
  touch(owner.client, now);
  const LaneKey key{ino, kind};
  auto it = lanes_.find(key);
  if (it == lanes_.end()) return {};
  const size_t before = it->second.held.size();
  cut(it->second, owner, first, last);
  if (it->second.held.size() != before || before != 0) dirty_.push_back(ino);
  grant_waiters(key, it->second);
  return {};
}

void LockTable::release_owner(uint64_t ino, Owner owner, Nanos now) {
  for (Kind kind : {Kind::posix, Kind::flock}) {
    const LaneKey key{ino, kind};
    auto it = lanes_.find(key);
    if (it == lanes_.end()) continue;
    Lane& lane = it->second;
    for (auto w = lane.waiters.begin(); w != lane.waiters.end();) {
      if (w->lock.owner == owner) {
        w = lane.waiters.erase(w);
        --waiter_count_;
      } else {
        ++w;
      }
    }
    for (auto u = unreported_.begin(); u != unreported_.end();) {
      if (u->second.second.owner == owner && u->second.second.ino == ino) u = unreported_.erase(u);
      else ++u;
    }
    cut(lane, owner, 0, kEof);
    dirty_.push_back(ino);
    grant_waiters(key, lane);
  }
  (void)now;
}

std::optional<Lock> LockTable::test(const Lock& want) const {
  auto it = lanes_.find({want.ino, want.kind});
  if (it == lanes_.end()) return std::nullopt;
  for (const Lock& h : it->second.held)
    if (conflicts(h, want)) return h;
  return std::nullopt;
}

void LockTable::renew(ClientKey client, Nanos now) { touch(client, now); }

void LockTable::drop(ClientKey client) {
  for (auto u = unreported_.begin(); u != unreported_.end();) {
    if (u->second.first == client) u = unreported_.erase(u);
    else ++u;
  }
  std::vector<LaneKey> keys;
  for (const auto& [key, lane] : lanes_) keys.push_back(key);
  for (const LaneKey& key : keys) {
    Lane& lane = lanes_[key];
    for (auto w = lane.waiters.begin(); w != lane.waiters.end();) {
      if (w->lock.owner.client == client) {
        w = lane.waiters.erase(w);
        --waiter_count_;
      } else {
        ++w;
      }
    }
    std::vector<Lock> kept;
    for (const Lock& h : lane.held)
      if (h.owner.client != client) kept.push_back(h);
    if (kept.size() != lane.held.size()) {
      lock_count_ -= lane.held.size() - kept.size();
      lane.held = std::move(kept);
      dirty_.push_back(key.first);
    }
    grant_waiters(key, lane);
  }
  leases_.erase(client);
}

std::vector<ClientKey> LockTable::expire(Nanos now) {
  std::vector<ClientKey> gone;
  std::vector<ClientKey> lapsed;
  for (const auto& [client, until] : leases_)
    if (until <= now) lapsed.push_back(client);
  for (ClientKey c : lapsed) {
    if (has_client(c)) gone.push_back(c);
    drop(c);
  }
  return gone;
}

void LockTable::drop_client(ClientKey client, Nanos now) {
  (void)now;
  drop(client);
}

bool LockTable::has_client(ClientKey client) const {
  for (const auto& [id, u] : unreported_)
    if (u.first == client) return true;
  for (const auto& [key, lane] : lanes_) {
    for (const Lock& h : lane.held)
      if (h.owner.client == client) return true;
    for (const Waiter& w : lane.waiters)
      if (w.lock.owner.client == client) return true;
  }
  return false;
}

std::vector<Grant> LockTable::take_grants() {
  std::vector<Grant> out;
  out.swap(grants_);
  return out;
}

std::optional<Nanos> LockTable::next_deadline() const {
  std::optional<Nanos> best;
  for (const auto& [client, until] : leases_)
    if (!best || until < *best) best = until;
  return best;
}

std::string LockTable::encode(uint64_t ino) const {
  std::string out;
  for (Kind kind : {Kind::posix, Kind::flock}) {
    auto it = lanes_.find({ino, kind});
    if (it == lanes_.end()) continue;
    for (const Lock& h : it->second.held) {
      out += kind == Kind::posix ? 'p' : 'f';
      out += h.mode == Mode::shared ? 's' : 'x';
      out += ' ' + std::to_string(h.owner.client) + ' ' + std::to_string(h.owner.owner) + ' ' +
             std::to_string(h.first) + ' ' + std::to_string(h.last) + ' ' + std::to_string(h.pid) + '\n';
    }
  }
  return out;
}

Status LockTable::restore(uint64_t ino, std::string_view text, Nanos now) {
  for (Kind kind : {Kind::posix, Kind::flock})
    if (auto it = lanes_.find({ino, kind}); it != lanes_.end() && !it->second.held.empty())
      return Status(Errc::exists, "the inode already has locks");
  std::vector<Lock> locks;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    if (nl == std::string_view::npos) return Status(Errc::corrupt, "a stored lock record is cut short");
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    std::vector<std::string_view> words;
    while (!line.empty()) {
      const size_t sp = line.find(' ');
      words.push_back(line.substr(0, sp));
      line = sp == std::string_view::npos ? std::string_view{} : line.substr(sp + 1);
    }
    if (words.size() != 6 || words[0].size() != 2) return Status(Errc::corrupt, "a stored lock record is malformed");
    Lock l;
    l.ino = ino;
    if (words[0][0] == 'p') l.kind = Kind::posix;
    else if (words[0][0] == 'f') l.kind = Kind::flock;
    else return Status(Errc::corrupt, "a stored lock has an unknown namespace");
    if (words[0][1] == 's') l.mode = Mode::shared;
    else if (words[0][1] == 'x') l.mode = Mode::exclusive;
    else return Status(Errc::corrupt, "a stored lock has an unknown mode");
    auto client = number(words[1]), owner = number(words[2]), first = number(words[3]),
         last = number(words[4]), pid = number(words[5]);
    if (!client || !owner || !first || !last || !pid || *pid > UINT32_MAX)
      return Status(Errc::corrupt, "a stored lock has a malformed number");
    l.owner = {*client, *owner};
    l.first = *first;
    l.last = *last;
    l.pid = static_cast<uint32_t>(*pid);
    if (!check(l).ok()) return Status(Errc::corrupt, "a stored lock is invalid");
    locks.push_back(l);
  }
  for (const Lock& l : locks) {
    Lane& lane = lanes_[{ino, l.kind}];
    lane.held.push_back(l);
    ++lock_count_;
    touch(l.owner.client, now);
  }
  for (Kind kind : {Kind::posix, Kind::flock})
    if (auto it = lanes_.find({ino, kind}); it != lanes_.end())
      std::sort(it->second.held.begin(), it->second.held.end(), by_start);
  return {};
}

std::vector<uint64_t> LockTable::take_dirty() {
  std::vector<uint64_t> out;
  out.swap(dirty_);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<InodeView> LockTable::snapshot(std::optional<uint64_t> ino) const {
  std::vector<InodeView> out;
  for (const auto& [key, lane] : lanes_) {
    if (ino && key.first != *ino) continue;
    if (out.empty() || out.back().ino != key.first) out.push_back({key.first, {}, {}});
    InodeView& v = out.back();
    v.held.insert(v.held.end(), lane.held.begin(), lane.held.end());
    for (const Waiter& w : lane.waiters) v.waiters.push_back({w.id, w.lock, w.since});
  }
  return out;
}

}  // namespace pvfs::locks
