// NamespaceStore: the entries that name the roots of other file sets.
#include <sys/stat.h>

#include "mds/namespace_store.h"
#include "mds/namespace_txn.h"
#include "mds/permissions.h"

namespace pvfs::mds {

using detail::NsTxn;
using detail::touch_dir;
using detail::with_read;
using detail::with_write;

FileSetId NamespaceStore::fileset() const { return t_->set; }

Result<std::optional<InodeId>> NamespaceStore::fileset_root_at(const Caller& caller, InodeId parent,
                                                               std::string_view name) {
  return with_read(*t_, [&](NsTxn& tx) -> Result<std::optional<InodeId>> {
    auto dir = tx.dir_for_lookup(caller, parent);
    if (!dir) return dir.status();
    if (Status s = detail::check_name(name); !s.ok()) return s;
    auto entry = tx.entry(parent, name);
    if (!entry) return entry.status();
    if (!entry->has_value() || (*entry)->ino.fileset() == t_->set) return std::optional<InodeId>();
    return std::optional<InodeId>((*entry)->ino);
  });
}

Status NamespaceStore::add_fileset_root(const Caller& caller, InodeId parent, std::string_view name,
                                        InodeId root, Timespec now) {
  if (root.fileset() == t_->set) return Status(Errc::invalid_argument, "root of this file set");
  return with_write(*t_, [&](NsTxn& tx) -> Status {
    auto dir = tx.dir_for_lookup(caller, parent);
    if (!dir) return dir.status();
    if (Status s = detail::check_name(name); !s.ok()) return s;
    auto existing = tx.entry(parent, name);
    if (!existing) return existing.status();
    if (existing->has_value()) return Errc::exists;
    if (Status s = check_create(caller, dir->attr); !s.ok()) return s;
    Attr child;
    child.ino = root;
    child.mode = S_IFDIR;
    if (Status s = tx.insert_entry(*dir, name, child); !s.ok()) return s;
    dir->attr.nlink += 1;
    touch_dir(*dir, now);
    return tx.put_inode(*dir);
  });
}

Result<std::pair<InodeId, std::string>> NamespaceStore::replace_with_fileset_root(const Caller& caller,
                                                                                  InodeId dir,
                                                                                  InodeId root,
                                                                                  Timespec now) {
  if (caller.uid != 0) return Status(Errc::not_permitted, "only root makes file sets");
  if (root.fileset() == t_->set) return Status(Errc::invalid_argument, "root of this file set");
  return with_write(*t_, [&](NsTxn& tx) -> Result<std::pair<InodeId, std::string>> {
    auto victim = tx.inode(dir);
    if (!victim) return victim.status();
    if (!S_ISDIR(victim->attr.mode)) return Errc::not_dir;
    if (dir == t_->root) return Status(Errc::busy, "already the root of a file set");
    auto empty = tx.dir_empty(dir);
    if (!empty) return empty.status();
    if (!*empty) return Errc::not_empty;
    // Directories have one entry, in their parent: find its name.
    const InodeId parent = victim->parent;
    std::string name;
    Status bad;
    Status scanned = tx.raw().scan(tx.tables().seqs, dentry_prefix(parent), dentry_prefix(parent),
                                   [&](std::string_view, std::string_view value) {
                                     auto record = decode_seq(value);
                                     if (!record) {
                                       bad = record.status();
                                       return false;
                                     }
                                     if (record->ino != dir) return true;
                                     name = std::move(record->name);
                                     return false;
                                   });
    if (!scanned.ok()) return scanned;
    if (!bad.ok()) return bad;
    if (name.empty()) return Status(Errc::corrupt, "directory is in no entry of its parent");
    auto entry = tx.entry(parent, name);
    if (!entry) return entry.status();
    if (!entry->has_value()) return Status(Errc::corrupt, "directory order and entries disagree");
    Attr child;
    child.ino = root;
    child.mode = S_IFDIR;
    if (Status s = tx.repoint_entry(parent, name, **entry, child); !s.ok()) return s;
    if (Status s = tx.erase_inode(dir); !s.ok()) return s;
    auto pdir = tx.inode(parent);
    if (!pdir) return pdir.status();
    touch_dir(*pdir, now);
    if (Status s = tx.put_inode(*pdir); !s.ok()) return s;
    return std::pair{parent, name};
  });
}

Status NamespaceStore::remove_fileset_root(const Caller& caller, InodeId parent, std::string_view name,
                                           const Attr& root_attr, Timespec now) {
  return with_write(*t_, [&](NsTxn& tx) -> Status {
    auto dir = tx.dir_for_lookup(caller, parent);
    if (!dir) return dir.status();
    if (Status s = detail::check_name(name); !s.ok()) return s;
    auto entry = tx.entry(parent, name);
    if (!entry) return entry.status();
    if (!entry->has_value() || (*entry)->ino != root_attr.ino)
      return Status(Errc::not_found, "no such file set root");
    if (Status s = check_delete(caller, dir->attr, root_attr, true); !s.ok()) return s;
    if (Status s = tx.erase_entry(parent, name, **entry); !s.ok()) return s;
    dir->attr.nlink -= 1;
    touch_dir(*dir, now);
    return tx.put_inode(*dir);
  });
}

Status NamespaceStore::init_root(const Attr& like, const LayoutPolicy& policy) {
  return with_write(*t_, [&](NsTxn& tx) -> Status {
    auto root = tx.inode(t_->root);
    if (!root) return root.status();
    root->attr.mode = S_IFDIR | (like.mode & 07777);
    root->attr.uid = like.uid;
    root->attr.gid = like.gid;
    root->attr.atime = like.atime;
    root->attr.mtime = like.mtime;
    root->attr.ctime = like.ctime;
    root->policy = policy;
    return tx.put_inode(*root);
  });
}

Result<bool> NamespaceStore::dir_empty(InodeId dir) {
  return with_read(*t_, [&](NsTxn& tx) -> Result<bool> {
    auto r = tx.inode(dir);
    if (!r) return r.status();
    if (!S_ISDIR(r->attr.mode)) return Errc::not_dir;
    return tx.dir_empty(dir);
  });
}

}  // namespace pvfs::mds
