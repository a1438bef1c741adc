// Plain metadata values shared by the MDS, the client and the tools:
// attributes, setattr requests, callers, directory entries and pages, the
// file scans of fsck, the storage servers the MDS knows. No I/O; their wire
// forms are converted in shared/rpc/convert.h only.
#pragma once

#include <sys/stat.h>

#include <algorithm>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shared/ids.h"
#include "shared/layout.h"

namespace pvfs {

struct Timespec {
  int64_t sec = 0;
  uint32_t nsec = 0;
  auto operator<=>(const Timespec&) const = default;
};

// Who is asking: what the kernel reported for the syscall.
struct Caller {
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::vector<uint32_t> groups;
};

// caller.gid == gid or gid is one of caller.groups.
inline bool in_group(const Caller& caller, uint32_t gid) {
  return caller.gid == gid || std::find(caller.groups.begin(), caller.groups.end(), gid) != caller.groups.end();
}

// What Linux's set-id kill (ATTR_KILL_SUID/ATTR_KILL_SGID, on a write,
// truncation or chown) leaves of a non-directory's `mode`: no S_ISUID, and
// no S_ISGID when the file is group-executable or the caller is not
// `in_group` (setattr_should_drop_sgid). Used by the MDS (truncation,
// chown) and pvfsmount (writes) alike.
inline uint32_t without_setid(uint32_t mode, bool in_group) {
  mode &= ~uint32_t{S_ISUID};
  if ((mode & S_IXGRP) != 0 || !in_group) mode &= ~uint32_t{S_ISGID};
  return mode;
}

// Full POSIX attributes of one inode.
struct Attr {
  InodeId ino;
  uint32_t mode = 0, uid = 0, gid = 0;
  uint64_t size = 0;
  uint32_t nlink = 0, rdev = 0;
  Timespec atime, mtime, ctime;
  Layout layout;  // regular files only
  // A hint from the MDS: the inode had no security.* xattrs when these
  // attributes were read (false: it had some, or the MDS did not say).
  bool no_security_xattrs = false;
  // Regular files: 512-byte blocks the storage servers had allocated for the
  // file's objects when a writer last published it (st_blocks; the MDS keeps
  // it, see pvfsmount(8), SPACE). nullopt: not known (an inode recorded
  // before the MDS kept it, or not a regular file): estimate from the size.
  std::optional<uint64_t> blocks;
  // A hint from the MDS: another client was writing this regular file and
  // had not closed it when these attributes were read, so `size` may be
  // behind the data it wrote (pvfsmount asks the storage servers).
  bool written_elsewhere = false;
};

// Setattr field mask; the same values as shared/proto/mds.capnp.
inline constexpr uint32_t kSetMode = 1;
inline constexpr uint32_t kSetUid = 2;
inline constexpr uint32_t kSetGid = 4;
inline constexpr uint32_t kSetSize = 8;
inline constexpr uint32_t kSetAtime = 16;
inline constexpr uint32_t kSetMtime = 32;
inline constexpr uint32_t kSetAtimeNow = 64;
inline constexpr uint32_t kSetMtimeNow = 128;

struct SetAttr {
  uint32_t mask = 0;
  uint32_t mode = 0, uid = 0, gid = 0;
  uint64_t size = 0;
  Timespec atime, mtime;
};

// renameat2(2) flags; the same values as shared/proto/mds.capnp.
inline constexpr uint32_t kRenameNoReplace = 1;
inline constexpr uint32_t kRenameExchange = 2;

struct DirEntry {
  std::string name;
  InodeId ino;
  uint32_t mode = 0;    // type bits at least
  uint64_t cookie = 0;  // continue after this entry by passing it back
  std::optional<Attr> attr;
};

// A page of a directory; `eof` when no entry follows the last one.
struct DirPage {
  std::vector<DirEntry> entries;
  bool eof = false;
};

// A regular file as fsck sees it: linked, or an orphan (unlinked, objects
// not yet deleted).
struct FileInfo {
  InodeId ino;
  uint64_t size = 0;
  Layout layout;
  bool orphan = false;
};

// A page of regular files in inode order; `eof` when no file follows the
// last one.
struct FileScan {
  std::vector<FileInfo> files;
  bool eof = false;
};

// A storage server as the MDS knows it (registered, or in the config).
struct ServerInfo {
  ServerId id;
  std::string address;  // host:port clients connect to
  uint64_t capacity_bytes = 0, free_bytes = 0;
  bool alive = false;  // heard from within the heartbeat timeout
};

}  // namespace pvfs
