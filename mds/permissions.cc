#include "mds/permissions.h"

#include <sys/stat.h>

#include <algorithm>

namespace pvfs::mds {

namespace {

constexpr size_t kXattrNameMax = 255;
constexpr uint32_t kNsecPerSec = 1'000'000'000;

bool is_dir(const Attr& a) { return S_ISDIR(a.mode); }

// Whether `mode` is `current` with some of S_ISUID/S_ISGID cleared and
// nothing else changed: how the kernel's "kill set-id bits on write or
// truncate" reaches a FUSE file system, as a chmod made by the writer.
bool only_clears_setid(uint32_t current, uint32_t mode) {
  constexpr uint32_t kSetid = S_ISUID | S_ISGID;
  current &= 07777;
  mode &= 07777;
  return mode != current && (mode & ~kSetid) == (current & ~kSetid) && (mode & ~current) == 0;
}

}  // namespace

Caller squash_root(Caller caller) {
  if (caller.uid == 0) caller.uid = kNobody;
  if (caller.gid == 0) caller.gid = kNobody;
  std::erase(caller.groups, 0u);
  return caller;
}

bool owner_or_root(const Caller& caller, const Attr& attr) {
  return is_root(caller) || caller.uid == attr.uid;
}

Status check_permission(const Caller& caller, const Attr& attr, uint32_t mask) {
  mask &= kMayRead | kMayWrite | kMayExec;
  if (is_root(caller)) {
    if ((mask & kMayExec) != 0 && !is_dir(attr) && (attr.mode & (S_IXUSR | S_IXGRP | S_IXOTH)) == 0)
      return Status(Errc::access_denied, "no execute bit");
    return {};
  }
  uint32_t bits;
  if (caller.uid == attr.uid)
    bits = (attr.mode >> 6) & 7;
  else if (in_group(caller, attr.gid))
    bits = (attr.mode >> 3) & 7;
  else
    bits = attr.mode & 7;
  if ((bits & mask) != mask) return Errc::access_denied;
  return {};
}

Status check_create(const Caller& caller, const Attr& dir) {
  return check_permission(caller, dir, kMayWrite | kMayExec);
}

Status check_delete(const Caller& caller, const Attr& dir, const Attr& victim, bool want_dir) {
  if (Status s = check_create(caller, dir); !s.ok()) return s;
  if ((dir.mode & S_ISVTX) != 0 && !is_root(caller) && caller.uid != victim.uid &&
      caller.uid != dir.uid)
    return Status(Errc::not_permitted, "sticky directory");
  if (want_dir && !is_dir(victim)) return Errc::not_dir;
  if (!want_dir && is_dir(victim)) return Errc::is_dir;
  return {};
}

NewOwner new_owner(const Caller& caller, const Attr& parent, uint32_t mode) {
  NewOwner out{mode, caller.uid, caller.gid};
  if ((parent.mode & S_ISGID) != 0) {
    out.gid = parent.gid;
    if (S_ISDIR(mode)) out.mode |= S_ISGID;
  }
  if (!S_ISDIR(mode) && (out.mode & S_ISGID) != 0 && !is_root(caller) && !in_group(caller, out.gid))
    out.mode &= ~S_ISGID;
  return out;
}

Result<Attr> apply_setattr(const Caller& caller, const Attr& current, const SetAttr& change,
                           Timespec now) {
  const uint32_t mask = change.mask;
  if ((mask & ~kSetAllBits) != 0) return Status(Errc::invalid_argument, "unknown setattr bits");
  if (((mask & kSetAtime) != 0 && change.atime.nsec >= kNsecPerSec) ||
      ((mask & kSetMtime) != 0 && change.mtime.nsec >= kNsecPerSec))
    return Status(Errc::invalid_argument, "nanoseconds out of range");
  if ((mask & kSetSize) != 0) {
    if (is_dir(current)) return Errc::is_dir;
    if (!S_ISREG(current.mode)) return Status(Errc::invalid_argument, "size of a non-regular file");
    if (Status s = check_permission(caller, current, kMayWrite); !s.ok()) return s;
  }
  const bool root = is_root(caller);
  if ((mask & kSetUid) != 0 && !root && !(caller.uid == current.uid && change.uid == current.uid))
    return Status(Errc::not_permitted, "only root may change the owner");
  if ((mask & kSetGid) != 0 && !root &&
      !(caller.uid == current.uid && (in_group(caller, change.gid) || change.gid == current.gid)))
    return Status(Errc::not_permitted, "chgrp to a group the caller is not in");
  // Linux forces the set-id kill (ATTR_FORCE), so any writer may drop them.
  if ((mask & kSetMode) != 0 && !owner_or_root(caller, current) &&
      !(only_clears_setid(current.mode, change.mode) &&
        check_permission(caller, current, kMayWrite).ok()))
    return Status(Errc::not_permitted, "only the owner may chmod");
  if ((mask & (kSetAtime | kSetMtime)) != 0 && !owner_or_root(caller, current))
    return Status(Errc::not_permitted, "only the owner may set explicit times");
  if ((mask & (kSetAtimeNow | kSetMtimeNow)) != 0 && !owner_or_root(caller, current)) {
    if (Status s = check_permission(caller, current, kMayWrite); !s.ok()) return s;
  }

  Attr next = current;
  if ((mask & kSetMode) != 0) {
    next.mode = (current.mode & S_IFMT) | (change.mode & 07777);
    const uint32_t gid = (mask & kSetGid) != 0 ? change.gid : current.gid;
    if (!root && !in_group(caller, gid)) next.mode &= ~S_ISGID;
  }
  if ((mask & kSetUid) != 0) next.uid = change.uid;
  if ((mask & kSetGid) != 0) next.gid = change.gid;
  // Chown: only root may give a file away, and root counts as in every group.
  if ((mask & (kSetUid | kSetGid)) != 0 && !is_dir(current)) next.mode = without_setid(next.mode, true);
  if ((mask & kSetSize) != 0) {
    if (!root) next.mode = without_setid(next.mode, in_group(caller, next.gid));
    if (change.size != current.size) next.mtime = now;
    next.size = change.size;
    // Truncating frees the objects' bytes past the new end; until a writer
    // publishes a fresh count, no more than the size can be allocated.
    if (next.blocks && change.size < current.size)
      next.blocks = std::min(*next.blocks, (change.size + 511) / 512);
  }
  if ((mask & kSetAtime) != 0) next.atime = change.atime;
  if ((mask & kSetMtime) != 0) next.mtime = change.mtime;
  if ((mask & kSetAtimeNow) != 0) next.atime = now;
  if ((mask & kSetMtimeNow) != 0) next.mtime = now;
  if (mask != 0) next.ctime = now;
  return next;
}

Status check_xattr_name(std::string_view name) {
  if (name.empty() || name.size() > kXattrNameMax)
    return Status(Errc::range, "xattr name must be 1 to 255 bytes");
  for (std::string_view prefix : {"user.", "trusted.", "security.", "system."}) {
    if (name.starts_with(prefix)) {
      if (name.size() == prefix.size()) return Status(Errc::invalid_argument, "empty xattr name");
      return {};
    }
  }
  return Status(Errc::not_supported, "unknown xattr namespace");
}

Status check_xattr(const Caller& caller, const Attr& attr, std::string_view name, bool write) {
  if (name.starts_with("system.")) return Status(Errc::not_supported, "system.* xattrs");
  if (name.starts_with("security.")) return {};
  if (name.starts_with("trusted.")) {
    if (is_root(caller)) return {};
    return write ? Errc::not_permitted : Errc::no_data;
  }
  if (!S_ISREG(attr.mode) && !is_dir(attr))
    return write ? Status(Errc::not_permitted, "user.* xattrs on a special file") : Status(Errc::no_data);
  if (write && is_dir(attr) && (attr.mode & S_ISVTX) != 0 && !owner_or_root(caller, attr))
    return Status(Errc::not_permitted, "user.* xattrs on a sticky directory");
  return check_permission(caller, attr, write ? kMayWrite : kMayRead);
}

bool xattr_listed(const Caller& caller, std::string_view name) {
  return !name.starts_with("trusted.") || is_root(caller);
}

}  // namespace pvfs::mds
