#include "mds/namespace_txn.h"

#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <vector>

#include "mds/permissions.h"

namespace pvfs::mds::detail {

namespace {
constexpr size_t kNameMax = 255;
}

Status check_name(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos)
    return Status(Errc::invalid_argument, "bad name");
  if (name.size() > kNameMax) return Errc::name_too_long;
  return {};
}

void touch_dir(InodeRecord& dir, Timespec now) {
  dir.attr.mtime = now;
  dir.attr.ctime = now;
}

Result<NsTxn> NsTxn::read(const Tables& t) {
  auto txn = t.env->begin_read();
  if (!txn) return txn.status();
  return NsTxn(t, std::move(*txn));
}

Result<NsTxn> NsTxn::write(const Tables& t) {
  auto txn = t.env->begin_write();
  if (!txn) return txn.status();
  t.ino_reserving = 0;  // a reservation of an aborted transaction was never stored
  return NsTxn(t, std::move(*txn));
}

Status NsTxn::commit() {
  Status s = txn_.commit();
  if (s.ok() && t_->ino_reserving != 0) t_->ino_reserved = t_->ino_reserving;
  t_->ino_reserving = 0;
  return s;
}

Result<InodeRecord> NsTxn::inode(InodeId ino) {
  auto bytes = txn_.get(t_->inodes, inode_key(ino));
  if (!bytes) {
    if (bytes.code() == Errc::not_found) return Status(Errc::not_found, "no inode");
    return bytes.status();
  }
  return decode_inode(ino, *bytes);
}

Status NsTxn::put_inode(const InodeRecord& record) {
  return txn_.put(t_->inodes, inode_key(record.attr.ino), encode_inode(record));
}

Status NsTxn::erase_inode(InodeId ino) {
  std::vector<std::string> names;
  Status s = txn_.scan(t_->xattrs, xattr_prefix(ino), {}, [&](std::string_view key, std::string_view) {
    names.emplace_back(key);
    return true;
  });
  if (!s.ok()) return s;
  for (const std::string& key : names)
    if (s = txn_.del(t_->xattrs, key); !s.ok()) return s;
  s = txn_.del(t_->orphans, inode_key(ino));
  if (!s.ok() && s.code() != Errc::not_found) return s;
  return txn_.del(t_->inodes, inode_key(ino));
}

Result<InodeId> NsTxn::allocate_ino() {
  // Every number handed out is below the counter this transaction or an
  // earlier commit stored, so none is handed out twice across a crash. A
  // number taken by a transaction that aborts is skipped.
  const uint64_t next = t_->next_ino;
  if (next > InodeId::kLocalMask) return Status(Errc::no_space, "inode numbers exhausted");
  if (next >= std::max(t_->ino_reserved, t_->ino_reserving)) {
    const uint64_t upto = std::min(next + kInoBlock, InodeId::kLocalMask + 1);
    if (Status s = txn_.put(t_->meta, kMetaNextIno, encode_u64(upto)); !s.ok()) return s;
    t_->ino_reserving = upto;
  }
  t_->next_ino = next + 1;
  return InodeId::make(t_->set, next);
}

Result<InodeRecord> NsTxn::dir_for_lookup(const Caller& caller, InodeId parent) {
  auto dir = inode(parent);
  // Another client removed the directory while the caller's kernel still
  // had it cached: stale, so that the kernel looks its name up again,
  // where not_found would say the entry is missing from a directory that
  // (under the same name) may well exist.
  if (dir.code() == Errc::not_found) return Status(Errc::stale, "directory no longer exists");
  if (!dir) return dir;
  if (!S_ISDIR(dir->attr.mode)) return Errc::not_dir;
  if (Status s = check_permission(caller, dir->attr, kMayExec); !s.ok()) return s;
  return dir;
}

Result<std::optional<DentryRecord>> NsTxn::entry(InodeId dir, std::string_view name) {
  auto bytes = txn_.get(t_->dentries, dentry_key(dir, name));
  if (!bytes) {
    if (bytes.code() == Errc::not_found) return std::optional<DentryRecord>();
    return bytes.status();
  }
  auto record = decode_dentry(*bytes);
  if (!record) return record.status();
  return std::optional<DentryRecord>(*record);
}

Status NsTxn::insert_entry(InodeRecord& dir, std::string_view name, const Attr& child) {
  const uint32_t type = child.mode & S_IFMT;
  const uint64_t seq = dir.next_seq++;
  Status s = txn_.put(t_->dentries, dentry_key(dir.attr.ino, name),
                      encode_dentry(DentryRecord{child.ino, type, seq}));
  if (!s.ok()) return s;
  return txn_.put(t_->seqs, seq_key(dir.attr.ino, seq),
                  encode_seq(SeqRecord{child.ino, type, std::string(name)}));
}

Status NsTxn::erase_entry(InodeId dir, std::string_view name, const DentryRecord& entry) {
  if (Status s = txn_.del(t_->dentries, dentry_key(dir, name)); !s.ok()) return s;
  Status s = txn_.del(t_->seqs, seq_key(dir, entry.seq));
  if (s.code() == Errc::not_found) return Status(Errc::corrupt, "entry missing from readdir order");
  return s;
}

Status NsTxn::repoint_entry(InodeId dir, std::string_view name, const DentryRecord& entry,
                            const Attr& child) {
  const uint32_t type = child.mode & S_IFMT;
  Status s = txn_.put(t_->dentries, dentry_key(dir, name),
                      encode_dentry(DentryRecord{child.ino, type, entry.seq}));
  if (!s.ok()) return s;
  return txn_.put(t_->seqs, seq_key(dir, entry.seq),
                  encode_seq(SeqRecord{child.ino, type, std::string(name)}));
}

Result<bool> NsTxn::dir_empty(InodeId dir) {
  bool empty = true;
  Status s = txn_.scan(t_->dentries, dentry_prefix(dir), {}, [&](std::string_view, std::string_view) {
    empty = false;
    return false;
  });
  if (!s.ok()) return s;
  return empty;
}

Result<bool> NsTxn::has_security_xattrs(InodeId ino) {
  bool found = false;
  const std::string prefix = xattr_key(ino, "security.");
  Status s = txn_.scan(t_->xattrs, prefix, {}, [&](std::string_view, std::string_view) {
    found = true;
    return false;
  });
  if (!s.ok()) return s;
  return found;
}

Result<bool> NsTxn::is_ancestor(InodeId ancestor, InodeId dir) {
  // The walk ends at the root, which is its own parent; the bound stops a
  // corrupted parent chain from looping forever.
  for (int depth = 0; depth < 100000; ++depth) {
    if (dir == ancestor) return true;
    if (dir == t_->root) return false;
    auto record = inode(dir);
    if (!record) return record.status();
    if (record->parent == dir) return false;
    dir = record->parent;
  }
  return Status(Errc::corrupt, "directory parent chain loops");
}

Result<bool> NsTxn::drop_link(InodeRecord& victim, bool keep_open, Timespec now) {
  PVFS_CHECK(!S_ISDIR(victim.attr.mode));
  if (victim.attr.nlink == 0) return Status(Errc::corrupt, "named inode without links");
  victim.attr.nlink -= 1;
  victim.attr.ctime = now;
  if (victim.attr.nlink > 0) {
    if (Status s = put_inode(victim); !s.ok()) return s;
    return false;
  }
  if (!S_ISREG(victim.attr.mode)) {
    if (Status s = erase_inode(victim.attr.ino); !s.ok()) return s;
    return false;
  }
  if (Status s = put_inode(victim); !s.ok()) return s;
  Status s = txn_.put(t_->orphans, inode_key(victim.attr.ino), encode_orphan(OrphanRecord{keep_open}));
  if (!s.ok()) return s;
  return true;
}

}  // namespace pvfs::mds::detail
