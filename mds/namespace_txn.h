// Internal to the namespace store: one LMDB transaction over a file set's
// tables, with typed reads and writes of inodes, entries, orphans and xattrs
// and the steps every namespace operation shares (look up a parent, insert
// or erase an entry, drop a link). Enforces no permissions itself beyond
// dir_for_lookup(). Not thread-safe: used by the store's owning thread.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "mds/inode_record.h"
#include "shared/lmdb/lmdb_env.h"
#include "mds/namespace_types.h"
#include "shared/status.h"

namespace pvfs::mds::detail {

// The environment and its databases (see mds/inode_record.h for contents).
struct Tables {
  std::unique_ptr<lmdb::Env> env;
  lmdb::Db meta, inodes, dentries, seqs, xattrs, orphans, servers, locks;
  FileSetId set;
  InodeId root;
  // Inode numbers (local parts) come from memory below `ino_reserved`,
  // the value stored as kMetaNextIno: only the commit that hands out the
  // first number of a block stores the counter. A restart skips the rest of
  // the block. `ino_reserving` is what the open write transaction stored
  // (0: nothing); it becomes `ino_reserved` when that one commits.
  mutable uint64_t next_ino = 0;
  mutable uint64_t ino_reserved = 0;
  mutable uint64_t ino_reserving = 0;
};

// Inode numbers reserved per store of the counter.
inline constexpr uint64_t kInoBlock = 1024;

// Errors: invalid_argument for "", ".", "..", '/' or NUL; name_too_long past 255.
Status check_name(std::string_view name);

// Sets a directory's mtime and ctime after its entries changed.
void touch_dir(InodeRecord& dir, Timespec now);

class NsTxn {
 public:
  // A read-only snapshot, or the write transaction. Errors: io.
  static Result<NsTxn> read(const Tables& t);
  static Result<NsTxn> write(const Tables& t);

  // The record of `ino`. Errors: not_found, corrupt.
  Result<InodeRecord> inode(InodeId ino);
  // Stores `record` under its inode number, replacing the previous one.
  Status put_inode(const InodeRecord& record);
  // Removes `ino` with its xattrs and any orphan record.
  Status erase_inode(InodeId ino);
  // A fresh inode number of this file set. Errors: no_space when exhausted.
  Result<InodeId> allocate_ino();

  // Directory `parent` for a lookup by `caller`: it exists (stale), is a
  // directory (not_dir) and the caller may search it (access_denied).
  Result<InodeRecord> dir_for_lookup(const Caller& caller, InodeId parent);
  // The entry `name` of `dir`, or nullopt. Errors: corrupt.
  Result<std::optional<DentryRecord>> entry(InodeId dir, std::string_view name);
  // Adds `name` -> `child` to `dir` with the next seq of `dir`, which the
  // caller must store afterwards.
  Status insert_entry(InodeRecord& dir, std::string_view name, const Attr& child);
  // Removes entry `name` (found as `entry`) from both indexes of `dir`.
  Status erase_entry(InodeId dir, std::string_view name, const DentryRecord& entry);
  // Points the existing entry `name` of `dir` at `child`, keeping its seq.
  Status repoint_entry(InodeId dir, std::string_view name, const DentryRecord& entry,
                       const Attr& child);
  // Whether `dir` has no entries.
  Result<bool> dir_empty(InodeId dir);
  // Whether `ino` has an xattr in the security.* namespace.
  Result<bool> has_security_xattrs(InodeId ino);
  // Whether directory `ancestor` is `dir` or above it (walking parents).
  Result<bool> is_ancestor(InodeId ancestor, InodeId dir);

  // Takes one link from non-directory `victim` at `now` and stores the
  // outcome: the inode with fewer links; an orphan (held when `keep_open`)
  // for a regular file's last link; otherwise erases it. Returns whether it
  // became an orphan.
  Result<bool> drop_link(InodeRecord& victim, bool keep_open, Timespec now);

  // The LMDB transaction, for records without a typed accessor here.
  lmdb::Txn& raw() { return txn_; }
  const Tables& tables() const { return *t_; }
  // Commits a write transaction; see lmdb::Txn::commit().
  Status commit();

 private:
  NsTxn(const Tables& t, lmdb::Txn txn) : t_(&t), txn_(std::move(txn)) {}
  const Tables* t_;
  lmdb::Txn txn_;
};

// Runs `body` (NsTxn& -> Status or Result<T>) in a write transaction and
// commits when it succeeds; a failure aborts every change it made.
template <typename Body>
auto with_write(const Tables& t, Body&& body) -> std::invoke_result_t<Body, NsTxn&> {
  auto tx = NsTxn::write(t);
  if (!tx) return tx.status();
  auto out = std::forward<Body>(body)(*tx);
  if (out.ok()) {
    if (Status s = tx->commit(); !s.ok()) return s;
  }
  return out;
}

// Runs `body` in a read-only snapshot.
template <typename Body>
auto with_read(const Tables& t, Body&& body) -> std::invoke_result_t<Body, NsTxn&> {
  auto tx = NsTxn::read(t);
  if (!tx) return tx.status();
  return std::forward<Body>(body)(*tx);
}

}  // namespace pvfs::mds::detail
