// Dropping privileges on write and truncation (FUSE_HANDLE_KILLPRIV_V2).
// Without it the kernel asked pvfsmount for security.capability before
// every write, so a 4 KiB write cost two trips through /dev/fuse; with it
// the kernel asks no more and pvfsmount does what the kernel did, from what
// it knows of the inode:
// - a file that may have capabilities (its xattr absence is not
//   remembered, fs/xattr_absence.h) is asked for security.capability, and
//   loses it if it has one: an MDS request at most once per attribute
//   timeout per file being written, as the kernel's question cost before;
// - a set-id file (its last attributes said so) written by a caller without
//   CAP_FSETID loses S_ISUID, and S_ISGID unless it is not group-executable
//   and the caller is in its group: fresh attributes, then the writer's
//   chmod (the MDS allows a writer that one), then the kernel's cached mode
//   is dropped so a stat right after the write shows it.
// What the mount knows may be a little old, exactly as the kernel's cached
// mode was when it did this itself. Truncation by non-root clears set-id
// bits in the MDS (mds/permissions.h); here it only loses capabilities.
#include "fs/fuse_bridge_internal.h"
#include "fs/fuse_loop.h"

namespace pvfs::fuse {

namespace {

constexpr const char* kCapabilityXattr = "security.capability";

bool setid_to_clear(Bridge& b, const Credentials& who, fuse_ino_t ino) {
  const Bridge::SetidFile* known = b.setid_file(ino);
  return known && without_setid(known->mode, in_group(who.caller, known->gid)) != known->mode;
}

asio::awaitable<Status> remove_capabilities(Bridge& b, const Credentials& who, fuse_ino_t ino) {
  XattrAbsence& absence = b.xattr_absence();
  // Noted at once, so the writes that arrive meanwhile (a queue depth of 16
  // sends 16 at a time) do not each ask too: they are concurrent with this
  // one, and none of them completes before the removal any more than it
  // would have if the kernel had asked before each.
  absence.note_absent(ino, kCapabilityXattr, XattrAbsence::Clock::now(), absence.generation());
  // Asked first, read-only: nearly every file has none, and the MDS then
  // takes no write transaction (with attr_timeout=0 this is every write).
  auto found = co_await b.client().getxattr(who, InodeId(ino), kCapabilityXattr);
  if (!found && found.status().code() == Errc::no_data) co_return Status{};
  Status st = found ? co_await b.client().removexattr(who, InodeId(ino), kCapabilityXattr) : found.status();
  if (st.ok() || st.code() == Errc::no_data) {
    const auto now = XattrAbsence::Clock::now();
    absence.forget(ino, now);  // a change made through this mount
    absence.note_absent(ino, kCapabilityXattr, now, absence.generation());
    co_return Status{};
  }
  absence.forget(ino, XattrAbsence::Clock::now());
  co_return st;
}

asio::awaitable<Status> clear_setid(Bridge& b, const Credentials& who, fuse_ino_t ino) {
  auto attr = co_await b.client().getattr(who, InodeId(ino));
  if (!attr) co_return attr.status();
  b.learn(*attr);
  const uint32_t mode = attr->mode & 07777;
  const uint32_t cleared = without_setid(mode, in_group(who.caller, attr->gid));
  if (cleared == mode) co_return Status{};
  SetAttr change;
  change.mask = kSetMode;
  change.mode = cleared;
  auto after = co_await b.client().setattr(who, InodeId(ino), change);
  if (!after) co_return after.status();
  b.learn(*after);
  b.forget_cached_attributes(ino);
  co_return Status{};
}

}  // namespace

bool privileges_to_drop(Bridge& b, const Credentials& who, fuse_ino_t ino, bool kill_setid) {
  if (!privileges_left_to_us()) return false;
  return (kill_setid && setid_to_clear(b, who, ino)) ||
         !b.xattr_absence().absent(ino, kCapabilityXattr, XattrAbsence::Clock::now());
}

asio::awaitable<Status> drop_privileges(Bridge& b, Credentials who, fuse_ino_t ino, bool kill_setid) {
  if (!b.xattr_absence().absent(ino, kCapabilityXattr, XattrAbsence::Clock::now())) {
    if (Status st = co_await remove_capabilities(b, who, ino); !st.ok()) co_return st;
  }
  if (kill_setid && setid_to_clear(b, who, ino)) co_return co_await clear_setid(b, who, ino);
  co_return Status{};
}

}  // namespace pvfs::fuse
