// The client's side of locks across client nodes (pvfsmount(8), LOCKS):
// fcntl, OFD and flock requests sent to the lock manager of the metadata
// member that owns the inode's file set (mds/lock_host.h), F_SETLKW's
// waiting as repeated requests the manager holds until a grant, and the
// lease renewals that keep this client's locks alive. Runs on the
// client's io thread; nothing here is held across a co_await.
#include <random>

#include "fs/client_impl.h"
#include "shared/log.h"

namespace pvfs {

namespace mp = proto::mds;

namespace {

void fill_lock(mp::Request::Lock::Builder b, InodeId ino, uint64_t client, const Client::FileLock& l) {
  b.setIno(ino.value);
  b.setClient(client);
  b.setOwner(l.owner);
  b.setFlock(l.flock);
  b.setExclusive(l.exclusive);
  b.setFirst(l.first);
  b.setLast(l.last);
  b.setPid(l.pid);
}

}  // namespace

asio::awaitable<Result<std::unique_ptr<rpc::InMessage>>> Client::Impl::lock_call(
    Credentials who, InodeId ino, Client::FileLock lock, mp::Request::LockOp op, uint64_t waiter) {
  // What was written under a lock reaches the servers before another node
  // can take it.
  if (any_behind()) co_await drain_behind(ino);
  if (lock_client == 0) {
    std::random_device rd;
    while (lock_client == 0) lock_client = (uint64_t{rd()} << 32) | rd();
  }
  rpc::OutMessage out;
  auto b = begin_mds(out, who).initLock();
  fill_lock(b, ino, lock_client, lock);
  b.setOp(op);
  b.setWaiter(waiter);
  // Every lock operation may be repeated: a lock an owner already holds is
  // granted again, an unlock of nothing does nothing, and a waiter is
  // named by the id the last answer gave.
  auto reply = co_await call_mds(out, true);
  if (!reply) co_return reply;
  auto body = (*reply)->body<mp::Reply>();
  if (!body.isLock()) co_return Status(Errc::io, "the metadata server answered a lock request with something else");
  auto r = body.getLock();
  if (r.getLeaseMs() > 0) lock_lease = milliseconds(r.getLeaseMs());
  lock_note(ino, r.getHolds());
  co_return reply;
}

void Client::Impl::lock_note(InodeId ino, bool holds) {
  const uint16_t set = ino.fileset().value;
  if (!holds) {
    lock_sets.erase(set);  // nothing of ours is left in the whole set
    return;
  }
  lock_sets[set] = ino;
  if (!lock_renewing) {
    lock_renewing = true;
    asio::co_spawn(io, lock_loop(alive), asio::detached);
  }
}

asio::awaitable<void> Client::Impl::lock_loop(std::shared_ptr<bool> alive_flag) {
  while (*alive_flag && !lock_sets.empty()) {
    co_await pause(std::max(lock_lease / 3, milliseconds(50)));
    if (!*alive_flag) co_return;
    // Copied: the map changes while the renewals travel.
    const std::vector<std::pair<uint16_t, InodeId>> sets(lock_sets.begin(), lock_sets.end());
    for (const auto& [set, ino] : sets) {
      // Named, not a temporary: GCC 12 may destroy a temporary of a
      // co_await expression twice.
      Credentials nobody;
      auto reply = co_await lock_call(nobody, ino, Client::FileLock{}, mp::Request::LockOp::RENEW);
      if (!*alive_flag) co_return;
      if (!reply)
        spdlog::warn("renewing this client's locks in file set {}: {} (they lapse if this lasts a lease)", set,
                     reply.status().to_string());
    }
  }
  if (*alive_flag) lock_renewing = false;
}

asio::awaitable<Result<std::optional<Client::FileLock>>> Client::getlk(const Credentials& who, InodeId ino,
                                                                        FileLock want) {
  auto reply = co_await impl_->lock_call(who, ino, want, mp::Request::LockOp::GETLK);
  if (!reply) co_return reply.status();
  auto r = (*reply)->body<mp::Reply>().getLock();
  if (!r.getHasConflict()) co_return std::optional<FileLock>{};
  auto c = r.getConflict();
  FileLock found;
  found.flock = c.getFlock();
  found.exclusive = c.getExclusive();
  found.first = c.getFirst();
  found.last = c.getLast();
  found.owner = c.getOwner();
  found.pid = c.getPid();
  co_return std::optional<FileLock>(found);
}

asio::awaitable<Result<Client::LockOutcome>> Client::setlk(const Credentials& who, InodeId ino, FileLock want,
                                                           bool wait, std::shared_ptr<LockWait> state) {
  uint64_t waiter = 0;
  for (;;) {
    const auto op = wait ? mp::Request::LockOp::SETLKW : mp::Request::LockOp::SETLK;
    auto reply = co_await impl_->lock_call(who, ino, want, op, waiter);
    if (!reply) {
      if (waiter != 0) {
        // The waiter stays queued at the manager until its lease lapses
        // unless withdrawn; try once.
        (void)co_await impl_->lock_call(who, ino, want, mp::Request::LockOp::CANCEL, waiter);
      }
      co_return reply.status();
    }
    auto r = (*reply)->body<mp::Reply>().getLock();
    switch (r.getOutcome()) {
      case mp::Reply::LockOutcome::GRANTED: co_return LockOutcome::granted;
      case mp::Reply::LockOutcome::CONFLICT: co_return LockOutcome::conflict;
      case mp::Reply::LockOutcome::DEADLOCK: co_return LockOutcome::deadlock;
      case mp::Reply::LockOutcome::WAITING: break;
      default: co_return Status(Errc::io, "unknown lock outcome");
    }
    waiter = r.getWaiter();
    if (state && state->interrupted) {
      auto cancelled = co_await impl_->lock_call(who, ino, want, mp::Request::LockOp::CANCEL, waiter);
      if (!cancelled) co_return cancelled.status();
      co_return LockOutcome::interrupted;
    }
  }
}

asio::awaitable<Status> Client::unlock(const Credentials& who, InodeId ino, FileLock range) {
  auto reply = co_await impl_->lock_call(who, ino, range, mp::Request::LockOp::UNLOCK);
  co_return reply.status();
}

asio::awaitable<Status> Client::release_locks(const Credentials& who, InodeId ino, uint64_t owner) {
  // Nothing to release on a client that never locked anything in that set.
  if (!impl_->lock_sets.contains(ino.fileset().value)) co_return Status{};
  FileLock all;
  all.owner = owner;
  auto reply = co_await impl_->lock_call(who, ino, all, mp::Request::LockOp::RELEASE);
  co_return reply.status();
}

}  // namespace pvfs
