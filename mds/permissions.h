// Linux's permission rules over plain attributes: generic_permission,
// may_create/may_delete (sticky directories), new-inode ownership (setgid
// directories), setattr_prepare/notify_change and xattr_permission. Every
// rule the namespace store enforces is here, so it can be read in one place.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string_view>

#include "mds/namespace_types.h"
#include "shared/status.h"

namespace pvfs::mds {

inline bool is_root(const Caller& caller) { return caller.uid == 0; }

// The uid and gid root is mapped to by root squash.
inline constexpr uint32_t kNobody = 65534;
// Root squash, as NFS's root_squash: uid 0 and gid 0 become kNobody and
// group 0 is dropped from the supplementary groups; other callers unchanged.
Caller squash_root(Caller caller);
// The owner, or root (Linux: inode_owner_or_capable).
bool owner_or_root(const Caller& caller, const Attr& attr);

// Whether `caller` holds every kMay* bit of `mask` on `attr`: the owner
// class if the caller owns it, else the group class if a member, else other.
// Root passes, except that executing a non-directory needs some x bit.
// Errors: access_denied.
Status check_permission(const Caller& caller, const Attr& attr, uint32_t mask);

// May `caller` add an entry to `dir` (write and search)? Errors: access_denied.
Status check_create(const Caller& caller, const Attr& dir);

// May `caller` remove (or rename away, or replace) `victim` from `dir`?
// In order: write and search on dir (access_denied); in a sticky directory
// only the victim's owner, the directory's owner or root (not_permitted);
// then the type the operation expects: not_dir when `want_dir` and the victim
// is not a directory, is_dir when not `want_dir` and it is one.
Status check_delete(const Caller& caller, const Attr& dir, const Attr& victim, bool want_dir);

// Owner, group and mode of a new inode of `mode` (type and permission bits,
// already masked by the caller's umask) created by `caller` in `parent`:
// uid is the caller's; gid the parent's when it is setgid (new directories
// then inherit S_ISGID), else the caller's; a non-root caller outside that
// group loses S_ISGID on a non-directory.
struct NewOwner {
  uint32_t mode = 0, uid = 0, gid = 0;
};
NewOwner new_owner(const Caller& caller, const Attr& parent, uint32_t mode);

// `current` changed by `change` at `now`, if `caller` may do it. Checks, in
// Linux's order: unknown mask bits or explicit times with nanoseconds past
// 999999999 (invalid_argument); size on a directory
// (is_dir), on another non-regular file (invalid_argument) or without write
// permission (access_denied); chown by non-root unless a no-op by the owner
// (not_permitted); chgrp by non-root unless the owner to a group it is in
// (not_permitted); chmod or explicit times by neither owner nor root
// (not_permitted), except a chmod that only clears S_ISUID/S_ISGID by a
// caller with write permission (the set-id kill of a write, which
// pvfsmount sends as the writer's chmod); times to now by
// neither owner, root nor a writer (access_denied). Side effects as Linux:
// chmod by a non-root non-member of the file's group drops S_ISGID;
// chown/chgrp of a non-directory drops S_ISUID, and S_ISGID when
// group-executable; a size change by non-root drops S_ISUID, and S_ISGID
// unless the file is not group-executable and the caller is in its group
// (Linux's rule since 6.2); a size that differs sets mtime; ctime becomes
// `now` whenever mask is not 0.
Result<Attr> apply_setattr(const Caller& caller, const Attr& current, const SetAttr& change,
                           Timespec now);

// Checks an xattr name: empty or over 255 bytes (range), a prefix other than
// user., trusted., security., system. (not_supported), nothing after the
// prefix (invalid_argument).
Status check_xattr_name(std::string_view name);

// May `caller` read (`write` false) or change xattr `name` (a valid name) of
// `attr`? system.*: not_supported (no ACLs). security.*: yes. trusted.*: root
// only (not_permitted to write, no_data to read, as Linux hides them).
// user.*: regular files and directories only (not_permitted / no_data),
// not_permitted to write on a sticky directory one does not own, then read or
// write permission (access_denied).
Status check_xattr(const Caller& caller, const Attr& attr, std::string_view name, bool write);

// Whether listxattr shows `name` to `caller` (trusted.* only to root).
bool xattr_listed(const Caller& caller, std::string_view name);

}  // namespace pvfs::mds
