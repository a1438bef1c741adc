// NamespaceStore's extended attributes: one record per (inode, name) in the
// xattrs database. Namespace and permission rules are in mds/permissions.h.
#include <string>
#include <vector>

#include "mds/namespace_store.h"
#include "mds/namespace_txn.h"
#include "mds/permissions.h"

namespace pvfs::mds {

using detail::NsTxn;

namespace {

// The attributes of `ino` if `caller` may read or write xattr `name` on it.
Result<Attr> xattr_target(NsTxn& tx, const Caller& caller, InodeId ino, std::string_view name,
                          bool write) {
  auto r = tx.inode(ino);
  if (!r) return r.status();
  if (Status s = check_xattr(caller, r->attr, name, write); !s.ok()) return s;
  return r->attr;
}

}  // namespace

Status NamespaceStore::setxattr(const Caller& caller, InodeId ino, std::string_view name,
                                std::string_view value, uint32_t flags) {
  if ((flags & ~(kXattrCreate | kXattrReplace)) != 0)
    return Status(Errc::invalid_argument, "bad setxattr flags");
  if (Status s = check_xattr_name(name); !s.ok()) return s;
  if (value.size() > kMaxXattrValue) return Status(Errc::too_big, "xattr value over 64 KiB");
  return detail::with_write(*t_, [&](NsTxn& tx) -> Status {
    if (auto attr = xattr_target(tx, caller, ino, name, true); !attr) return attr.status();
    const std::string key = xattr_key(ino, name);
    auto existing = tx.raw().get(t_->xattrs, key);
    if (!existing && existing.code() != Errc::not_found) return existing.status();
    if ((flags & kXattrCreate) != 0 && existing.ok()) return Errc::exists;
    if ((flags & kXattrReplace) != 0 && !existing.ok()) return Errc::no_data;
    return tx.raw().put(t_->xattrs, key, value);
  });
}

Result<std::string> NamespaceStore::getxattr(const Caller& caller, InodeId ino,
                                             std::string_view name) {
  if (Status s = check_xattr_name(name); !s.ok()) return s;
  return detail::with_read(*t_, [&](NsTxn& tx) -> Result<std::string> {
    if (auto attr = xattr_target(tx, caller, ino, name, false); !attr) return attr.status();
    auto value = tx.raw().get(t_->xattrs, xattr_key(ino, name));
    if (!value) return value.code() == Errc::not_found ? Status(Errc::no_data) : value.status();
    return std::string(*value);
  });
}

Result<std::vector<std::string>> NamespaceStore::listxattr(const Caller& caller, InodeId ino) {
  return detail::with_read(*t_, [&](NsTxn& tx) -> Result<std::vector<std::string>> {
    if (auto r = tx.inode(ino); !r) return r.status();
    const std::string prefix = xattr_prefix(ino);
    std::vector<std::string> names;
    Status s = tx.raw().scan(t_->xattrs, prefix, {}, [&](std::string_view key, std::string_view) {
      std::string_view name = key.substr(prefix.size());
      if (xattr_listed(caller, name)) names.emplace_back(name);
      return true;
    });
    if (!s.ok()) return s;
    return names;
  });
}

Status NamespaceStore::removexattr(const Caller& caller, InodeId ino, std::string_view name) {
  if (Status s = check_xattr_name(name); !s.ok()) return s;
  return detail::with_write(*t_, [&](NsTxn& tx) -> Status {
    if (auto attr = xattr_target(tx, caller, ino, name, true); !attr) return attr.status();
    Status s = tx.raw().del(t_->xattrs, xattr_key(ino, name));
    return s.code() == Errc::not_found ? Status(Errc::no_data) : s;
  });
}

}  // namespace pvfs::mds
