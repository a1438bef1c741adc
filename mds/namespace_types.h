// Plain values of the MDS namespace: the shared metadata values of
// shared/attr.h under pvfs::mds, and the results only the namespace store
// produces. No storage and no wire types: mds/namespace_store.h takes and
// returns these. Thread-safe to copy.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "shared/attr.h"
#include "shared/ids.h"
#include "shared/layout.h"

namespace pvfs::mds {

// The values shared with the client and the wire conversions: Timespec,
// Caller, Attr, SetAttr with its kSet* mask bits, kRename* flags, DirEntry.
using pvfs::Attr;
using pvfs::Caller;
using pvfs::DirEntry;
using pvfs::SetAttr;
using pvfs::Timespec;
using pvfs::kRenameExchange;
using pvfs::kRenameNoReplace;
using pvfs::kSetAtime;
using pvfs::kSetAtimeNow;
using pvfs::kSetGid;
using pvfs::kSetMode;
using pvfs::kSetMtime;
using pvfs::kSetMtimeNow;
using pvfs::kSetSize;
using pvfs::kSetUid;

// Every kSet* bit setattr understands.
inline constexpr uint32_t kSetAllBits = 255;

// Permission bits of access() and check_open(), as access(2): R_OK, W_OK, X_OK.
inline constexpr uint32_t kMayRead = 4;
inline constexpr uint32_t kMayWrite = 2;
inline constexpr uint32_t kMayExec = 1;

// setxattr flags, as setxattr(2).
inline constexpr uint32_t kXattrCreate = 1;
inline constexpr uint32_t kXattrReplace = 2;

// A page of a directory (shared/attr.h).
using ReaddirResult = pvfs::DirPage;

// What unlink did: the inode and the links it has left (0: gone or orphaned).
struct UnlinkResult {
  InodeId ino;
  uint32_t nlink = 0;
};

// What rename did: the regular file it replaced when that was the file's last
// link. The file is an orphan now (see NamespaceStore::list_orphans).
struct RenameResult {
  std::optional<InodeId> replaced_orphan;
};

// A regular file without links whose objects still have to be deleted.
struct Orphan {
  InodeId ino;
  Layout layout;
};

// What NamespaceStore::scan_files returns (shared/attr.h).
using pvfs::FileInfo;
using pvfs::FileScan;

// A storage server as the MDS remembers it across restarts.
struct StoredServer {
  uint32_t id = 0;
  std::string address;
  uint64_t capacity_bytes = 0, free_bytes = 0;
  bool operator==(const StoredServer&) const = default;
};

}  // namespace pvfs::mds
