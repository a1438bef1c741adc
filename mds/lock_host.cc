#include "mds/lock_host.h"

#include <fmt/format.h>

#include "mds/namespace_store.h"
#include "shared/log.h"

namespace pvfs::mds {

namespace mp = proto::mds;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kTick(100);

locks::Options options_of(const Config& config) {
  locks::Options o;
  o.lease = milliseconds(config.lock_lease_ms);
  return o;
}

void fill_info(mp::Reply::LockInfo::Builder out, const locks::Lock& l, uint64_t waiter, uint64_t wait_ms) {
  out.setIno(l.ino);
  out.setClient(l.owner.client);
  out.setOwner(l.owner.owner);
  out.setFlock(l.kind == locks::Kind::flock);
  out.setExclusive(l.mode == locks::Mode::exclusive);
  out.setFirst(l.first);
  out.setLast(l.last);
  out.setPid(l.pid);
  out.setWaiter(waiter);
  out.setWaitMs(wait_ms);
}

mp::Reply::LockOutcome wire(locks::Outcome o) {
  switch (o) {
    case locks::Outcome::granted: return mp::Reply::LockOutcome::GRANTED;
    case locks::Outcome::conflict: return mp::Reply::LockOutcome::CONFLICT;
    case locks::Outcome::waiting: return mp::Reply::LockOutcome::WAITING;
    case locks::Outcome::deadlock: return mp::Reply::LockOutcome::DEADLOCK;
  }
  return mp::Reply::LockOutcome::GRANTED;
}

}  // namespace

LockHost::LockHost(asio::io_context& io, const Config& config, FileSetCatalog& filesets, MdsCluster& cluster)
    : io_(io), config_(config), filesets_(filesets), cluster_(cluster), timer_(io) {}

void LockHost::start() { asio::co_spawn(io_, tick_loop(), asio::detached); }

void LockHost::stop() {
  stopped_ = true;
  timer_.cancel();
  for (auto& [key, t] : held_) t->cancel();
}

locks::Nanos LockHost::now() const {
  return std::chrono::duration_cast<locks::Nanos>(cluster_.clock().now().time_since_epoch());
}

LockHost::SetTable* LockHost::table_for(FileSetId set, Status& error) {
  std::shared_ptr<NamespaceStore> store = filesets_.shared(set);
  if (!store) {
    tables_.erase(set.value);
    error = Status(Errc::not_found, fmt::format("file set {} is not held here", set.value));
    return nullptr;
  }
  auto it = tables_.find(set.value);
  if (it != tables_.end() && it->second.store.lock() == store) return &it->second;
  // First use here, or the set left and came back: what its LMDB holds is
  // the truth (a copy of ours from before it left is stale).
  auto stored = store->load_locks();
  if (!stored) {
    error = stored.status();
    spdlog::error("file set {}: cannot load its locks: {}", set.value, error.to_string());
    return nullptr;
  }
  SetTable fresh{store, locks::LockTable(options_of(config_))};
  const locks::Nanos t = now();
  size_t restored = 0;
  for (const auto& [ino, text] : *stored) {
    if (Status st = fresh.table.restore(ino.value, text, t); !st.ok()) {
      spdlog::error("file set {}: locks of inode {:x} unreadable, dropped: {}", set.value, ino.value, st.to_string());
      continue;
    }
    ++restored;
  }
  (void)fresh.table.take_dirty();
  if (restored > 0)
    spdlog::info("file set {}: {} locks on {} files restored; their clients have {} ms to renew", set.value,
                 fresh.table.lock_count(), restored, config_.lock_lease_ms);
  tables_.insert_or_assign(set.value, std::move(fresh));
  return &tables_.at(set.value);
}

Status LockHost::settle(FileSetId set, SetTable& t) {
  Status first;
  if (auto store = t.store.lock()) {
    for (uint64_t ino : t.table.take_dirty()) {
      Status st = store->save_locks(InodeId(ino), t.table.encode(ino));
      if (!st.ok() && first.ok()) first = st;
    }
  }
  for (const auto& g : t.table.take_grants())
    if (auto it = held_.find({set.value, g.waiter}); it != held_.end()) it->second->cancel();
  if (!first.ok()) spdlog::error("file set {}: saving locks: {}", set.value, first.to_string());
  return first;
}

asio::awaitable<Status> LockHost::lock(mp::Request::Lock::Reader req, mp::Reply::Builder reply) {
  const FileSetId set = InodeId(req.getIno()).fileset();
  locks::Lock want;
  want.ino = req.getIno();
  want.kind = req.getFlock() ? locks::Kind::flock : locks::Kind::posix;
  want.owner = {req.getClient(), req.getOwner()};
  want.mode = req.getExclusive() ? locks::Mode::exclusive : locks::Mode::shared;
  want.first = req.getFirst();
  want.last = req.getLast();
  want.pid = req.getPid();
  const uint64_t waiter = req.getWaiter();
  if (want.owner.client == 0) co_return Status(Errc::invalid_argument, "a lock request needs a client key");

  Status error;
  SetTable* t = table_for(set, error);
  if (!t) co_return error;
  const locks::Nanos at = now();
  auto out = reply.initLock();
  out.setLeaseMs(config_.lock_lease_ms);
  locks::Answer answer;
  switch (req.getOp()) {
    case mp::Request::LockOp::GETLK: {
      if (auto found = t->table.test(want)) {
        fill_info(out.initConflict(), *found, 0, 0);
        out.setHasConflict(true);
      }
      t->table.renew(want.owner.client, at);
      break;
    }
    case mp::Request::LockOp::SETLK: {
      auto a = t->table.try_lock(want, at);
      if (!a) co_return a.status();
      answer = *a;
      break;
    }
    case mp::Request::LockOp::SETLKW: {
      locks::WaitState ws = waiter ? t->table.poll(waiter, want.owner.client, at) : locks::WaitState::unknown;
      if (ws == locks::WaitState::granted) {
        answer = {locks::Outcome::granted, 0};
      } else if (ws == locks::WaitState::waiting) {
        answer = {locks::Outcome::waiting, waiter};
      } else {
        auto a = t->table.lock_wait(want, at);
        if (!a) co_return a.status();
        answer = *a;
      }
      break;
    }
    case mp::Request::LockOp::UNLOCK:
      if (Status st = t->table.unlock(want.ino, want.kind, want.owner, want.first, want.last, at); !st.ok())
        co_return st;
      break;
    case mp::Request::LockOp::CANCEL:
      (void)t->table.cancel(waiter, want.owner.client, at);
      break;
    case mp::Request::LockOp::RELEASE:
      t->table.release_owner(want.ino, want.owner, at);
      break;
    case mp::Request::LockOp::RENEW:
      t->table.renew(want.owner.client, at);
      break;
    default:
      co_return Status(Errc::invalid_argument, "unknown lock operation");
  }
  if (Status st = settle(set, *t); !st.ok()) co_return st;

  if (answer.outcome == locks::Outcome::waiting && !stopped_) {
    // Held until granted (settle() of another request cancels the timer)
    // or kHold passed. Nothing of the table is used across the wait.
    const std::pair<uint16_t, uint64_t> key{set.value, answer.waiter};
    auto timer = std::make_shared<asio::steady_timer>(io_, kHold);
    held_[key] = timer;
    asio::error_code ec;
    co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (auto it = held_.find(key); it != held_.end() && it->second == timer) held_.erase(it);
    auto again = tables_.find(set.value);
    if (again != tables_.end() && again->second.store.lock() == filesets_.shared(set)) {
      const locks::WaitState ws = again->second.table.poll(answer.waiter, want.owner.client, now());
      if (ws == locks::WaitState::granted) answer = {locks::Outcome::granted, 0};
    }
    t = again != tables_.end() ? &again->second : nullptr;
  }
  out.setOutcome(wire(answer.outcome));
  out.setWaiter(answer.outcome == locks::Outcome::waiting ? answer.waiter : 0);
  out.setHolds(t ? t->table.has_client(want.owner.client) : answer.outcome == locks::Outcome::waiting);
  co_return Status{};
}

Status LockHost::status(uint64_t ino, mp::Reply::Builder reply) {
  std::vector<uint16_t> sets;
  if (ino != 0) sets.push_back(InodeId(ino).fileset().value);
  else sets = filesets_.ids();
  std::vector<locks::InodeView> views;
  const locks::Nanos at = now();
  for (uint16_t s : sets) {
    Status error;
    SetTable* t = table_for(FileSetId(s), error);
    if (!t) {
      if (ino != 0) return error;
      continue;
    }
    auto v = ino != 0 ? t->table.snapshot(ino) : t->table.snapshot();
    views.insert(views.end(), v.begin(), v.end());
  }
  size_t held = 0, waiting = 0;
  for (const auto& v : views) {
    held += v.held.size();
    waiting += v.waiters.size();
  }
  auto out = reply.initLocks();
  out.setMember(cluster_.self().value);
  out.setLeaseMs(config_.lock_lease_ms);
  auto h = out.initHeld(static_cast<unsigned>(held));
  auto w = out.initWaiters(static_cast<unsigned>(waiting));
  unsigned hi = 0, wi = 0;
  for (const auto& v : views) {
    for (const auto& l : v.held) fill_info(h[hi++], l, 0, 0);
    for (const auto& wv : v.waiters) {
      const auto waited = std::chrono::duration_cast<milliseconds>(at - wv.since).count();
      fill_info(w[wi++], wv.lock, wv.id, waited > 0 ? static_cast<uint64_t>(waited) : 0);
    }
  }
  return {};
}

asio::awaitable<void> LockHost::tick_loop() {
  while (!stopped_) {
    timer_.expires_after(kTick);
    asio::error_code ec;
    co_await timer_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (stopped_) co_return;
    // Tables of sets no longer here go; sets that arrived are loaded, so a
    // gone client's restored locks lapse even if nobody asks for them.
    for (auto it = tables_.begin(); it != tables_.end();) {
      if (!filesets_.has(FileSetId(it->first))) it = tables_.erase(it);
      else ++it;
    }
    const locks::Nanos at = now();
    for (uint16_t s : filesets_.ids()) {
      // A set being shipped is left alone: its file is being copied.
      if (cluster_.moving(FileSetId(s))) continue;
      Status error;
      SetTable* t = table_for(FileSetId(s), error);
      if (!t) continue;
      for (locks::ClientKey gone : t->table.expire(at))
        spdlog::info("file set {}: client {:016x} did not renew its locks for {} ms: released", s, gone,
                     config_.lock_lease_ms);
      (void)settle(FileSetId(s), *t);
    }
  }
}

}  // namespace pvfs::mds
