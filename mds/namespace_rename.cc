// NamespaceStore::rename: renameat2(2) semantics, checked in the order Linux
// checks them (do_renameat2, then vfs_rename) so callers see the same errno.
#include <sys/stat.h>

#include "mds/namespace_store.h"
#include "mds/namespace_txn.h"
#include "mds/permissions.h"

namespace pvfs::mds {

using detail::NsTxn;

namespace {

struct Named {
  DentryRecord entry;
  InodeRecord inode;
};

// The entry `name` of `dir` and its inode, or nullopt when absent.
// Errors: cross_device when it names another file set's inode.
Result<std::optional<Named>> find(NsTxn& tx, FileSetId set, InodeId dir, std::string_view name) {
  auto entry = tx.entry(dir, name);
  if (!entry) return entry.status();
  if (!entry->has_value()) return std::optional<Named>();
  if ((*entry)->ino.fileset() != set) return Errc::cross_device;
  auto inode = tx.inode((*entry)->ino);
  if (!inode) return inode.status();
  return std::optional<Named>(Named{**entry, std::move(*inode)});
}

}  // namespace

Result<RenameResult> NamespaceStore::rename(const Caller& caller, InodeId parent,
                                            std::string_view name, InodeId new_parent,
                                            std::string_view new_name, uint32_t flags,
                                            Timespec now, bool keep_open) {
  if ((flags & ~(kRenameNoReplace | kRenameExchange)) != 0 ||
      flags == (kRenameNoReplace | kRenameExchange))
    return Status(Errc::invalid_argument, "bad rename flags");
  if (parent.fileset() != t_->set || new_parent.fileset() != t_->set) return Errc::cross_device;
  const bool exchange = (flags & kRenameExchange) != 0;
  const bool same_dir = parent == new_parent;

  return detail::with_write(*t_, [&](NsTxn& tx) -> Result<RenameResult> {
    auto old_dir = tx.dir_for_lookup(caller, parent);
    if (!old_dir) return old_dir.status();
    auto other_dir = same_dir ? Result<InodeRecord>(InodeRecord{}) : tx.dir_for_lookup(caller, new_parent);
    if (!other_dir) return other_dir.status();
    InodeRecord& odir = *old_dir;
    InodeRecord& ndir = same_dir ? *old_dir : *other_dir;
    if (Status s = detail::check_name(name); !s.ok()) return s;
    if (Status s = detail::check_name(new_name); !s.ok()) return s;

    auto source = find(tx, t_->set, parent, name);
    if (!source) return source.status();
    if (!source->has_value()) return Status(Errc::not_found, "no such entry");
    auto target = find(tx, t_->set, new_parent, new_name);
    if (!target) return target.status();
    if ((flags & kRenameNoReplace) != 0 && target->has_value()) return Errc::exists;
    if (exchange && !target->has_value()) return Status(Errc::not_found, "no entry to exchange with");

    Named& src = **source;
    const bool src_dir = S_ISDIR(src.inode.attr.mode);
    const bool dst_dir = target->has_value() && S_ISDIR((*target)->inode.attr.mode);
    if (src_dir) {
      auto inside = tx.is_ancestor(src.inode.attr.ino, new_parent);
      if (!inside) return inside.status();
      if (*inside) return Status(Errc::invalid_argument, "directory moved into its own subtree");
    }
    if (dst_dir) {
      auto inside = tx.is_ancestor((*target)->inode.attr.ino, parent);
      if (!inside) return inside.status();
      if (*inside) return exchange ? Errc::invalid_argument : Errc::not_empty;
    }
    if (target->has_value() && (*target)->inode.attr.ino == src.inode.attr.ino) return RenameResult{};

    if (Status s = check_delete(caller, odir.attr, src.inode.attr, src_dir); !s.ok()) return s;
    if (!target->has_value()) {
      if (Status s = check_create(caller, ndir.attr); !s.ok()) return s;
    } else if (Status s = check_delete(caller, ndir.attr, (*target)->inode.attr,
                                       exchange ? dst_dir : src_dir);
               !s.ok()) {
      return s;
    }
    // A directory that changes parent has its ".." rewritten.
    if (!same_dir && src_dir) {
      if (Status s = check_permission(caller, src.inode.attr, kMayWrite); !s.ok()) return s;
    }
    if (!same_dir && exchange && dst_dir) {
      if (Status s = check_permission(caller, (*target)->inode.attr, kMayWrite); !s.ok()) return s;
    }
    if (!exchange && dst_dir) {
      auto empty = tx.dir_empty((*target)->inode.attr.ino);
      if (!empty) return empty.status();
      if (!*empty) return Errc::not_empty;
    }

    RenameResult out;
    if (exchange) {
      Named& dst = **target;
      if (Status s = tx.repoint_entry(parent, name, src.entry, dst.inode.attr); !s.ok()) return s;
      if (Status s = tx.repoint_entry(new_parent, new_name, dst.entry, src.inode.attr); !s.ok())
        return s;
      if (!same_dir && src_dir) {
        src.inode.parent = new_parent;
        odir.attr.nlink -= 1;
        ndir.attr.nlink += 1;
      }
      if (!same_dir && dst_dir) {
        dst.inode.parent = parent;
        ndir.attr.nlink -= 1;
        odir.attr.nlink += 1;
      }
      dst.inode.attr.ctime = now;
      if (Status s = tx.put_inode(dst.inode); !s.ok()) return s;
    } else {
      if (Status s = tx.erase_entry(parent, name, src.entry); !s.ok()) return s;
      if (target->has_value()) {
        Named& dst = **target;
        if (Status s = tx.erase_entry(new_parent, new_name, dst.entry); !s.ok()) return s;
        if (dst_dir) {
          if (Status s = tx.erase_inode(dst.inode.attr.ino); !s.ok()) return s;
          ndir.attr.nlink -= 1;
        } else {
          auto orphaned = tx.drop_link(dst.inode, keep_open, now);
          if (!orphaned) return orphaned.status();
          if (*orphaned) out.replaced_orphan = dst.inode.attr.ino;
        }
      }
      if (Status s = tx.insert_entry(ndir, new_name, src.inode.attr); !s.ok()) return s;
      if (!same_dir && src_dir) {
        src.inode.parent = new_parent;
        odir.attr.nlink -= 1;
        ndir.attr.nlink += 1;
      }
    }
    src.inode.attr.ctime = now;
    if (Status s = tx.put_inode(src.inode); !s.ok()) return s;
    detail::touch_dir(odir, now);
    if (Status s = tx.put_inode(odir); !s.ok()) return s;
    if (!same_dir) {
      detail::touch_dir(ndir, now);
      if (Status s = tx.put_inode(ndir); !s.ok()) return s;
    }
    return out;
  });
}

}  // namespace pvfs::mds
