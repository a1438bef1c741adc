// FUSE callbacks for file locks under locks=cluster (pvfsmount(8), LOCKS):
// getlk, setlk (F_SETLK, F_SETLKW; OFD locks arrive as these, owned by the
// open file description) and flock, each sent to the lock manager of the
// inode's file set by the client (fs/client_locks.cc). A waiting F_SETLKW
// registers for FUSE interrupts: a signal withdraws the waiter and the
// caller gets EINTR. Callbacks, the work and the reply run on the
// client's io thread.
#include "fs/fuse_bridge_internal.h"

#include <fcntl.h>
#include <sys/file.h>

#include <cerrno>
#include <climits>

namespace pvfs::fuse {

namespace {

// The kernel's "to the end of the file" (OFFSET_MAX) and ours.
Client::FileLock from_flock(const struct flock& l, uint64_t owner) {
  Client::FileLock out;
  out.exclusive = l.l_type == F_WRLCK;
  out.first = l.l_start < 0 ? 0 : static_cast<uint64_t>(l.l_start);
  if (l.l_len == 0 || l.l_start + l.l_len - 1 >= LLONG_MAX) out.last = UINT64_MAX;
  else out.last = static_cast<uint64_t>(l.l_start + l.l_len - 1);
  out.owner = owner;
  out.pid = l.l_pid > 0 ? static_cast<uint32_t>(l.l_pid) : 0;
  return out;
}

// Called by libfuse (under its request lock, on the io thread) when the
// kernel interrupts a waiting F_SETLKW: only flags it; the wait sees the
// flag at its next answer from the manager (within ~200 ms).
void on_interrupt(fuse_req_t, void* data) { static_cast<Client::LockWait*>(data)->interrupted = true; }

int errno_of(Client::LockOutcome outcome) {
  switch (outcome) {
    case Client::LockOutcome::granted: return 0;
    case Client::LockOutcome::conflict: return EAGAIN;
    case Client::LockOutcome::deadlock: return EDEADLK;
    case Client::LockOutcome::interrupted: return EINTR;
  }
  return EIO;
}

// Takes the lock (or unlocks) and replies. `wait` keeps `state` alive until
// the reply, after which libfuse no longer calls on_interrupt.
asio::awaitable<void> lock_and_reply(fuse_req_t req, Bridge& b, Credentials who, InodeId ino,
                                     Client::FileLock want, bool unlock, bool wait,
                                     std::shared_ptr<Client::LockWait> state) {
  Client& client = b.client();
  if (unlock) {
    Status st = co_await client.unlock(who, ino, want);
    if (!st.ok()) reply_error(req, "unlock", st);
    else fuse_reply_err(req, 0);
    co_return;
  }
  auto got = co_await client.setlk(who, ino, want, wait, state);
  if (!got.ok()) {
    reply_error(req, wait ? "setlkw" : "setlk", got.status());
    co_return;
  }
  // What another node wrote under the lock before it let go is on the
  // servers; what this node's kernel cached of the file may be older.
  if (*got == Client::LockOutcome::granted) co_await b.forget_cached_pages(ino.value);
  fuse_reply_err(req, errno_of(*got));
}

void start_lock(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, Client::FileLock want, int type, bool wait) {
  Bridge& b = bridge(req);
  FileHandle& h = handle_of(fi);
  Credentials who = b.credentials(req, h);
  if (want.pid == 0) want.pid = who.pid;
  if (type != F_RDLCK && type != F_WRLCK && type != F_UNLCK) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  const bool unlock = type == F_UNLCK;
  if (!unlock) h.lock_owners.insert(want.owner);
  auto state = std::make_shared<Client::LockWait>();
  if (wait && !unlock) fuse_req_interrupt_func(req, on_interrupt, state.get());
  b.spawn_replying(req, "setlk",
                   lock_and_reply(req, b, std::move(who), InodeId(ino), want, unlock, wait && !unlock,
                                  std::move(state)));
}

void on_getlk(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, struct flock* lock) {
  Bridge& b = bridge(req);
  FileHandle& h = handle_of(fi);
  Client::FileLock want = from_flock(*lock, fi->lock_owner);
  struct flock asked = *lock;
  b.spawn(req, "getlk", call(b.client(), &Client::getlk, b.credentials(req, h), InodeId(ino), want),
          [asked](fuse_req_t r, const std::optional<Client::FileLock>& found) mutable {
            if (!found) {
              asked.l_type = F_UNLCK;
            } else {
              asked.l_type = found->exclusive ? F_WRLCK : F_RDLCK;
              asked.l_whence = SEEK_SET;
              asked.l_start = static_cast<off_t>(found->first);
              asked.l_len = found->last >= static_cast<uint64_t>(LLONG_MAX)
                                ? 0
                                : static_cast<off_t>(found->last - found->first + 1);
              asked.l_pid = static_cast<pid_t>(found->pid);
            }
            fuse_reply_lock(r, &asked);
          });
}

void on_setlk(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, struct flock* lock, int sleep) {
  start_lock(req, ino, fi, from_flock(*lock, fi->lock_owner), lock->l_type, sleep != 0);
}

void on_flock(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi, int op) {
  Client::FileLock want;
  want.flock = true;
  want.owner = fi->lock_owner;
  int type = F_UNLCK;
  switch (op & ~LOCK_NB) {
    case LOCK_SH: type = F_RDLCK; break;
    case LOCK_EX: type = F_WRLCK; break;
    case LOCK_UN: type = F_UNLCK; break;
    default: fuse_reply_err(req, EINVAL); return;
  }
  want.exclusive = type == F_WRLCK;
  start_lock(req, ino, fi, want, type, (op & LOCK_NB) == 0);
}

}  // namespace

asio::awaitable<void> release_locks(Client& client, Credentials who, InodeId ino, std::vector<uint64_t> owners) {
  for (uint64_t owner : owners) {
    Status st = co_await client.release_locks(who, ino, owner);
    if (!st.ok())
      spdlog::warn("dropping the locks of inode {:x} at close: {} (they lapse with this client's lease)", ino.value,
                   st.to_string());
  }
}

void add_lock_ops(fuse_lowlevel_ops& ops) {
  ops.getlk = on_getlk;
  ops.setlk = on_setlk;
  ops.flock = on_flock;
}

}  // namespace pvfs::fuse
