#include "mds/namespace_store.h"

#include <sys/stat.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "shared/lmdb/lmdb_env.h"
#include "mds/namespace_txn.h"
#include "mds/permissions.h"

namespace pvfs::mds {

using detail::NsTxn;
using detail::Tables;
using detail::touch_dir;
using detail::with_read;
using detail::with_write;

namespace {

constexpr uint64_t kRootLocal = 1;

// The attributes of `ino` as clients get them: with the hint that lets
// them skip asking for security.* xattrs (the kernel asks before every write,
// ls -l for every entry).
Result<Attr> attr_with_hints(NsTxn& tx, InodeId ino) {
  auto r = tx.inode(ino);
  if (!r) return r.status();
  auto has = tx.has_security_xattrs(ino);
  if (!has) return has.status();
  r->attr.no_security_xattrs = !*has;
  return r->attr;
}

// The directory `name` may be created in: the lookup of `name` in `parent`
// found nothing (exists otherwise) and the caller may add entries.
Result<InodeRecord> dir_for_create(NsTxn& tx, const Caller& caller, InodeId parent,
                                   std::string_view name) {
  auto dir = tx.dir_for_lookup(caller, parent);
  if (!dir) return dir;
  if (Status s = detail::check_name(name); !s.ok()) return s;
  auto existing = tx.entry(parent, name);
  if (!existing) return existing.status();
  if (existing->has_value()) return Errc::exists;
  if (Status s = check_create(caller, dir->attr); !s.ok()) return s;
  return dir;
}

// A new inode of `mode` owned as new_owner() decides, stamped `now`.
Result<InodeRecord> new_inode(NsTxn& tx, const Caller& caller, const InodeRecord& dir,
                              uint32_t mode, Timespec now) {
  auto ino = tx.allocate_ino();
  if (!ino) return ino.status();
  NewOwner owner = new_owner(caller, dir.attr, mode);
  InodeRecord r;
  r.attr.ino = *ino;
  r.attr.mode = owner.mode;
  r.attr.uid = owner.uid;
  r.attr.gid = owner.gid;
  r.attr.nlink = 1;
  r.attr.atime = r.attr.mtime = r.attr.ctime = now;
  r.attr.no_security_xattrs = true;  // a fresh number: nothing is attached to it yet
  return r;
}

// Links the new inode `child` into `dir` as `name` and stores both.
Status finish_create(NsTxn& tx, InodeRecord& dir, std::string_view name, const InodeRecord& child,
                     Timespec now) {
  if (Status s = tx.insert_entry(dir, name, child.attr); !s.ok()) return s;
  if (Status s = tx.put_inode(child); !s.ok()) return s;
  touch_dir(dir, now);
  return tx.put_inode(dir);
}

// The entry `name` of `dir` and the inode it names. Errors: not_found;
// busy when it is the root of another file set (see add_fileset_root()).
Result<std::pair<DentryRecord, InodeRecord>> named_inode(NsTxn& tx, InodeId dir,
                                                         std::string_view name) {
  if (Status s = detail::check_name(name); !s.ok()) return s;
  auto entry = tx.entry(dir, name);
  if (!entry) return entry.status();
  if (!entry->has_value()) return Status(Errc::not_found, "no such entry");
  if ((*entry)->ino.fileset() != dir.fileset())
    return Status(Errc::busy, "the root of another file set");
  auto victim = tx.inode((*entry)->ino);
  if (!victim) return victim.status();
  return std::pair{**entry, std::move(*victim)};
}

}  // namespace

NamespaceStore::NamespaceStore(std::unique_ptr<Tables> tables) : t_(std::move(tables)) {}
NamespaceStore::~NamespaceStore() = default;

InodeId NamespaceStore::root() const { return t_->root; }

Result<std::unique_ptr<NamespaceStore>> NamespaceStore::open(const std::filesystem::path& dir,
                                                             FileSetId set, Timespec now) {
  auto t = std::make_unique<Tables>();
  auto env = lmdb::Env::open(dir);
  if (!env) return env.status();
  t->env = std::move(*env);
  t->set = set;
  t->root = InodeId::make(set, kRootLocal);
  std::pair<const char*, lmdb::Db*> dbs[] = {
      {kMetaDb, &t->meta},       {kInodesDb, &t->inodes},   {kDentriesDb, &t->dentries},
      {kSeqDb, &t->seqs},        {kXattrsDb, &t->xattrs},   {kOrphansDb, &t->orphans},
      {kServersDb, &t->servers}, {kLocksDb, &t->locks},
  };
  for (auto& [name, db] : dbs) {
    auto handle = t->env->open_db(name);
    if (!handle) return handle.status();
    *db = *handle;
  }
  Status s = with_write(*t, [&](NsTxn& tx) -> Status {
    lmdb::Txn& raw = tx.raw();
    auto format = raw.get(t->meta, kMetaFormat);
    if (format) {
      auto version = decode_u64(*format);
      if (!version) return version.status();
      if (*version != kFormatVersion) return Status(Errc::corrupt, "unknown namespace format");
      auto stored_set = raw.get(t->meta, kMetaFileSet);
      if (!stored_set) return stored_set.status();
      auto id = decode_u64(*stored_set);
      if (!id) return id.status();
      if (*id != set.value)
        return Status(Errc::invalid_argument, "directory holds file set " + std::to_string(*id));
      return {};
    }
    if (format.code() != Errc::not_found) return format.status();
    InodeRecord root;
    root.attr.ino = t->root;
    root.attr.mode = S_IFDIR | 0755;
    root.attr.nlink = 2;
    root.attr.atime = root.attr.mtime = root.attr.ctime = now;
    root.parent = t->root;
    for (auto [key, value] : {std::pair{kMetaFormat, kFormatVersion},
                              std::pair{kMetaFileSet, uint64_t{set.value}},
                              std::pair{kMetaNextIno, kRootLocal + 1}})
      if (Status put = raw.put(t->meta, key, encode_u64(value)); !put.ok()) return put;
    return tx.put_inode(root);
  });
  if (!s.ok()) return s;
  // Numbers are handed out from the stored counter on (see Tables).
  auto counter = with_read(*t, [&](NsTxn& tx) -> Result<uint64_t> {
    auto bytes = tx.raw().get(t->meta, kMetaNextIno);
    if (!bytes) {
      if (bytes.code() == Errc::not_found) return Status(Errc::corrupt, "no inode counter");
      return bytes.status();
    }
    return decode_u64(*bytes);
  });
  if (!counter) return counter.status();
  t->next_ino = t->ino_reserved = *counter;
  return std::unique_ptr<NamespaceStore>(new NamespaceStore(std::move(t)));
}

Result<Attr> NamespaceStore::lookup(const Caller& caller, InodeId parent, std::string_view name,
                                    uint64_t* cookie) {
  return with_read(*t_, [&](NsTxn& tx) -> Result<Attr> {
    auto dir = tx.dir_for_lookup(caller, parent);
    if (!dir) return dir.status();
    if (Status s = detail::check_name(name); !s.ok()) return s;
    auto entry = tx.entry(parent, name);
    if (!entry) return entry.status();
    if (!entry->has_value()) return Status(Errc::not_found, "no such entry");
    if (cookie) *cookie = (*entry)->seq;
    if ((*entry)->ino.fileset() != t_->set) {
      Attr root;  // another file set's root: its store has the rest
      root.ino = (*entry)->ino;
      root.mode = S_IFDIR;
      return root;
    }
    return attr_with_hints(tx, (*entry)->ino);
  });
}

Result<std::vector<uint64_t>> NamespaceStore::name_hashes(const Caller& caller, InodeId dir,
                                                         const NameHashKey& key, size_t max_entries) {
  return with_read(*t_, [&](NsTxn& tx) -> Result<std::vector<uint64_t>> {
    auto record = tx.dir_for_lookup(caller, dir);
    if (!record) return record.status();
    if (Status s = check_permission(caller, record->attr, kMayRead); !s.ok()) return s;
    const std::string prefix = dentry_prefix(dir);
    std::vector<uint64_t> out;
    bool more = false;
    Status s = tx.raw().scan(tx.tables().dentries, prefix, {}, [&](std::string_view k, std::string_view) {
      if (out.size() == max_entries) {
        more = true;
        return false;
      }
      out.push_back(name_hash(key, k.substr(prefix.size())));
      return true;
    });
    if (!s.ok()) return s;
    if (more) return Status(Errc::too_big, "directory has more entries than [mds_tuning] dir_lease_max_entries");
    return out;
  });
}

Result<Attr> NamespaceStore::getattr(InodeId ino) {
  return with_read(*t_, [&](NsTxn& tx) -> Result<Attr> { return attr_with_hints(tx, ino); });
}

Result<Attr> NamespaceStore::setattr(const Caller& caller, InodeId ino, const SetAttr& change,
                                     Timespec now) {
  return with_write(*t_, [&](NsTxn& tx) -> Result<Attr> {
    auto r = tx.inode(ino);
    if (!r) return r.status();
    auto next = apply_setattr(caller, r->attr, change, now);
    if (!next) return next;
    r->attr = *next;
    if (Status s = tx.put_inode(*r); !s.ok()) return s;
    return r->attr;
  });
}

Result<Attr> NamespaceStore::mknod(const Caller& caller, InodeId parent, std::string_view name,
                                   uint32_t mode, uint32_t rdev, const Layout& layout,
                                   Timespec now) {
  if ((mode & S_IFMT) == 0) mode |= S_IFREG;
  const uint32_t type = mode & S_IFMT;
  if (type == S_IFDIR) return Status(Errc::not_permitted, "mknod of a directory");
  if (type != S_IFREG && type != S_IFIFO && type != S_IFSOCK && type != S_IFCHR && type != S_IFBLK)
    return Status(Errc::invalid_argument, "bad file type");
  return with_write(*t_, [&](NsTxn& tx) -> Result<Attr> {
    auto dir = dir_for_create(tx, caller, parent, name);
    if (!dir) return dir.status();
    if ((type == S_IFCHR || type == S_IFBLK) && !is_root(caller))
      return Status(Errc::not_permitted, "only root may create devices");
    auto child = new_inode(tx, caller, *dir, type | (mode & 07777), now);
    if (!child) return child.status();
    if (type == S_IFREG) {
      child->attr.layout = layout;
      child->attr.blocks = 0;
    }
    if (type == S_IFCHR || type == S_IFBLK) child->attr.rdev = rdev;
    if (Status s = finish_create(tx, *dir, name, *child, now); !s.ok()) return s;
    return child->attr;
  });
}

Result<Attr> NamespaceStore::mkdir(const Caller& caller, InodeId parent, std::string_view name,
                                   uint32_t mode, Timespec now) {
  return with_write(*t_, [&](NsTxn& tx) -> Result<Attr> {
    auto dir = dir_for_create(tx, caller, parent, name);
    if (!dir) return dir.status();
    auto child = new_inode(tx, caller, *dir, S_IFDIR | (mode & (0777 | S_ISVTX)), now);
    if (!child) return child.status();
    child->attr.nlink = 2;
    child->parent = parent;
    child->policy = dir->policy;
    dir->attr.nlink += 1;
    if (Status s = finish_create(tx, *dir, name, *child, now); !s.ok()) return s;
    return child->attr;
  });
}

Result<UnlinkResult> NamespaceStore::unlink(const Caller& caller, InodeId parent,
                                            std::string_view name, bool keep_open, Timespec now) {
  return with_write(*t_, [&](NsTxn& tx) -> Result<UnlinkResult> {
    auto dir = tx.dir_for_lookup(caller, parent);
    if (!dir) return dir.status();
    auto found = named_inode(tx, parent, name);
    if (found.code() == Errc::busy) return Errc::is_dir;  // a file set root
    if (!found) return found.status();
    auto& [entry, victim] = *found;
    if (Status s = check_delete(caller, dir->attr, victim.attr, false); !s.ok()) return s;
    if (Status s = tx.erase_entry(parent, name, entry); !s.ok()) return s;
    auto orphaned = tx.drop_link(victim, keep_open, now);
    if (!orphaned) return orphaned.status();
    touch_dir(*dir, now);
    if (Status s = tx.put_inode(*dir); !s.ok()) return s;
    return UnlinkResult{victim.attr.ino, victim.attr.nlink};
  });
}

Status NamespaceStore::rmdir(const Caller& caller, InodeId parent, std::string_view name,
                             Timespec now) {
  return with_write(*t_, [&](NsTxn& tx) -> Status {
    auto dir = tx.dir_for_lookup(caller, parent);
    if (!dir) return dir.status();
    auto found = named_inode(tx, parent, name);
    if (!found) return found.status();
    auto& [entry, victim] = *found;
    if (Status s = check_delete(caller, dir->attr, victim.attr, true); !s.ok()) return s;
    if (victim.attr.ino.local() == kRootLocal) return Status(Errc::busy, "a file set root");
    auto empty = tx.dir_empty(victim.attr.ino);
    if (!empty) return empty.status();
    if (!*empty) return Errc::not_empty;
    if (Status s = tx.erase_entry(parent, name, entry); !s.ok()) return s;
    if (Status s = tx.erase_inode(victim.attr.ino); !s.ok()) return s;
    dir->attr.nlink -= 1;
    touch_dir(*dir, now);
    return tx.put_inode(*dir);
  });
}

Result<Attr> NamespaceStore::symlink(const Caller& caller, InodeId parent, std::string_view name,
                                     std::string_view target, Timespec now) {
  if (target.empty()) return Status(Errc::not_found, "empty symlink target");
  if (target.size() > kMaxSymlinkTarget) return Errc::name_too_long;
  if (target.find('\0') != std::string_view::npos)
    return Status(Errc::invalid_argument, "NUL in symlink target");
  return with_write(*t_, [&](NsTxn& tx) -> Result<Attr> {
    auto dir = dir_for_create(tx, caller, parent, name);
    if (!dir) return dir.status();
    auto child = new_inode(tx, caller, *dir, S_IFLNK | 0777, now);
    if (!child) return child.status();
    child->attr.size = target.size();
    child->target = std::string(target);
    if (Status s = finish_create(tx, *dir, name, *child, now); !s.ok()) return s;
    return child->attr;
  });
}

Result<std::string> NamespaceStore::readlink(InodeId ino) {
  return with_read(*t_, [&](NsTxn& tx) -> Result<std::string> {
    auto r = tx.inode(ino);
    if (!r) return r.status();
    if (!S_ISLNK(r->attr.mode)) return Status(Errc::invalid_argument, "not a symlink");
    return std::move(r->target);
  });
}

Result<Attr> NamespaceStore::link(const Caller& caller, InodeId ino, InodeId new_parent,
                                  std::string_view new_name, Timespec now) {
  if (ino.fileset() != t_->set || new_parent.fileset() != t_->set) return Errc::cross_device;
  return with_write(*t_, [&](NsTxn& tx) -> Result<Attr> {
    auto source = tx.inode(ino);
    if (!source) return source.status();
    auto dir = dir_for_create(tx, caller, new_parent, new_name);
    if (!dir) return dir.status();
    if (S_ISDIR(source->attr.mode)) return Status(Errc::not_permitted, "hard link to a directory");
    if (source->attr.nlink == 0) return Status(Errc::not_found, "file was unlinked");
    if (source->attr.nlink >= kMaxLinks) return Errc::too_many_links;
    source->attr.nlink += 1;
    source->attr.ctime = now;
    if (Status s = tx.insert_entry(*dir, new_name, source->attr); !s.ok()) return s;
    if (Status s = tx.put_inode(*source); !s.ok()) return s;
    touch_dir(*dir, now);
    if (Status s = tx.put_inode(*dir); !s.ok()) return s;
    return source->attr;
  });
}

Result<ReaddirResult> NamespaceStore::readdir(const Caller& caller, InodeId ino, uint64_t cookie,
                                              uint32_t max_entries, bool plus) {
  return with_read(*t_, [&](NsTxn& tx) -> Result<ReaddirResult> {
    auto dir = tx.inode(ino);
    if (!dir) return dir.status();
    if (!S_ISDIR(dir->attr.mode)) return Errc::not_dir;
    if (Status s = check_permission(caller, dir->attr, kMayRead); !s.ok()) return s;
    if (max_entries == 0) return Status(Errc::invalid_argument, "max_entries is 0");
    ReaddirResult out;
    if (cookie == UINT64_MAX) {
      out.eof = true;
      return out;
    }
    const uint64_t first = std::max(cookie + 1, kFirstSeq);
    Status bad;
    bool more = false;
    Status s = tx.raw().scan(
        tx.tables().seqs, dentry_prefix(ino), seq_key(ino, first),
        [&](std::string_view key, std::string_view value) {
          if (out.entries.size() == max_entries) {
            more = true;
            return false;
          }
          auto record = decode_seq(value);
          auto seq = decode_seq_key(key);
          if (!record || !seq) {
            bad = Status(Errc::corrupt, "bad directory order record");
            return false;
          }
          out.entries.push_back(DirEntry{std::move(record->name), record->ino, record->type, *seq, {}});
          return true;
        });
    if (!s.ok()) return s;
    if (!bad.ok()) return bad;
    out.eof = !more;
    if (plus) {
      for (DirEntry& e : out.entries) {
        if (e.ino.fileset() != t_->set) continue;
        auto attr = attr_with_hints(tx, e.ino);
        if (!attr) return attr.status();
        e.attr = *attr;
      }
    }
    return out;
  });
}

Result<Attr> NamespaceStore::access(const Caller& caller, InodeId ino, uint32_t mask) {
  if ((mask & ~(kMayRead | kMayWrite | kMayExec)) != 0)
    return Status(Errc::invalid_argument, "bad access mask");
  auto attr = getattr(ino);
  if (!attr) return attr;
  if (mask != 0) {
    if (Status s = check_permission(caller, *attr, mask); !s.ok()) return s;
  }
  return attr;
}

Result<Attr> NamespaceStore::check_open(const Caller& caller, InodeId ino, uint32_t mask,
                                        bool held_here) {
  if ((mask & ~(kMayRead | kMayWrite)) != 0) return Status(Errc::invalid_argument, "bad open mask");
  auto attr = getattr(ino);
  if (!attr) return attr;
  if (S_ISREG(attr->mode) && attr->nlink == 0 && !held_here) return Status(Errc::not_found, "file was unlinked");
  if (S_ISLNK(attr->mode)) return Errc::loop;
  if (S_ISDIR(attr->mode) && (mask & kMayWrite) != 0) return Errc::is_dir;
  if (Status s = check_permission(caller, *attr, mask); !s.ok()) return s;
  return attr;
}

Result<Attr> NamespaceStore::update_size(InodeId ino, uint64_t size, bool touch_mtime, Timespec now,
                                         std::optional<uint64_t> blocks) {
  return with_write(*t_, [&](NsTxn& tx) -> Result<Attr> {
    auto r = tx.inode(ino);
    if (!r) return r.status();
    if (S_ISDIR(r->attr.mode)) return Errc::is_dir;
    if (!S_ISREG(r->attr.mode)) return Status(Errc::invalid_argument, "size of a non-regular file");
    r->attr.size = std::max(r->attr.size, size);
    if (blocks) r->attr.blocks = blocks;
    if (touch_mtime) r->attr.mtime = r->attr.ctime = now;
    if (Status s = tx.put_inode(*r); !s.ok()) return s;
    return r->attr;
  });
}

Result<Attr> NamespaceStore::set_layout_policy(const Caller& caller, InodeId dir,
                                               const LayoutPolicy& policy) {
  return with_write(*t_, [&](NsTxn& tx) -> Result<Attr> {
    auto r = tx.inode(dir);
    if (!r) return r.status();
    if (!S_ISDIR(r->attr.mode)) return Errc::not_dir;
    if (!owner_or_root(caller, r->attr))
      return Status(Errc::not_permitted, "only the owner may set a layout policy");
    r->policy = policy;
    if (Status s = tx.put_inode(*r); !s.ok()) return s;
    return r->attr;
  });
}

Result<LayoutPolicy> NamespaceStore::get_layout_policy(InodeId dir) {
  return with_read(*t_, [&](NsTxn& tx) -> Result<LayoutPolicy> {
    auto r = tx.inode(dir);
    if (!r) return r.status();
    if (!S_ISDIR(r->attr.mode)) return Errc::not_dir;
    return r->policy;
  });
}

Result<Attr> NamespaceStore::set_file_layout(const Caller& caller, InodeId file,
                                             const Layout& layout) {
  return with_write(*t_, [&](NsTxn& tx) -> Result<Attr> {
    auto r = tx.inode(file);
    if (!r) return r.status();
    if (S_ISDIR(r->attr.mode)) return Errc::is_dir;
    if (!S_ISREG(r->attr.mode)) return Status(Errc::invalid_argument, "layout of a non-regular file");
    if (!layout.valid()) return Status(Errc::invalid_argument, "invalid layout");
    if (!owner_or_root(caller, r->attr))
      return Status(Errc::not_permitted, "only the owner may set a layout");
    if (r->attr.size != 0) return Status(Errc::busy, "file already has data");
    r->attr.layout = layout;
    if (Status s = tx.put_inode(*r); !s.ok()) return s;
    return r->attr;
  });
}

Result<std::vector<Orphan>> NamespaceStore::list_orphans(uint32_t max, std::optional<InodeId> after) {
  return with_read(*t_, [&](NsTxn& tx) -> Result<std::vector<Orphan>> {
    std::vector<InodeId> ids;
    Status bad;
    if (after && after->value == std::numeric_limits<uint64_t>::max()) return std::vector<Orphan>{};
    const std::string from = after ? inode_key(InodeId(after->value + 1)) : std::string();
    Status s = tx.raw().scan(tx.tables().orphans, {}, from, [&](std::string_view key, std::string_view value) {
      if (ids.size() == max) return false;
      auto ino = decode_inode_key(key);
      auto record = decode_orphan(value);
      if (!ino || !record) {
        bad = Status(Errc::corrupt, "bad orphan record");
        return false;
      }
      if (!record->held) ids.push_back(*ino);
      return true;
    });
    if (!s.ok()) return s;
    if (!bad.ok()) return bad;
    std::vector<Orphan> out;
    for (InodeId ino : ids) {
      auto r = tx.inode(ino);
      if (!r) return r.status();
      out.push_back(Orphan{ino, r->attr.layout});
    }
    return out;
  });
}

Result<std::vector<InodeId>> NamespaceStore::held_orphans() {
  return with_read(*t_, [&](NsTxn& tx) -> Result<std::vector<InodeId>> {
    std::vector<InodeId> held;
    Status bad;
    Status s = tx.raw().scan(tx.tables().orphans, {}, {}, [&](std::string_view key, std::string_view value) {
      auto ino = decode_inode_key(key);
      auto record = decode_orphan(value);
      if (!ino || !record) {
        bad = Status(Errc::corrupt, "bad orphan record");
        return false;
      }
      if (record->held) held.push_back(*ino);
      return true;
    });
    if (!s.ok()) return s;
    if (!bad.ok()) return bad;
    return held;
  });
}

namespace {

// The orphan record of `ino`. Errors: not_found when `ino` is not an
// orphan; corrupt.
Result<OrphanRecord> orphan_of(NsTxn& tx, InodeId ino) {
  auto bytes = tx.raw().get(tx.tables().orphans, inode_key(ino));
  if (!bytes) return bytes.code() == Errc::not_found ? Status(Errc::not_found, "not an orphan") : bytes.status();
  return decode_orphan(*bytes);
}

// Marks orphan `ino` held open (not listed for the collector) or not.
Status set_orphan_held(NsTxn& tx, InodeId ino, bool held) {
  auto record = orphan_of(tx, ino);
  if (!record) return record.status();
  if (record->held == held) return Status{};
  return tx.raw().put(tx.tables().orphans, inode_key(ino), encode_orphan(OrphanRecord{held}));
}

}  // namespace

Result<bool> NamespaceStore::orphan_held(InodeId ino) {
  return with_read(*t_, [&](NsTxn& tx) -> Result<bool> {
    auto record = orphan_of(tx, ino);
    if (!record) return record.status();
    return record->held;
  });
}

Status NamespaceStore::hold_orphan(InodeId ino) {
  return with_write(*t_, [&](NsTxn& tx) { return set_orphan_held(tx, ino, true); });
}

Status NamespaceStore::release_orphan(InodeId ino) {
  return with_write(*t_, [&](NsTxn& tx) { return set_orphan_held(tx, ino, false); });
}

Status NamespaceStore::purge(InodeId ino) {
  return with_write(*t_, [&](NsTxn& tx) -> Status {
    auto record = orphan_of(tx, ino);
    if (!record) return record.status();
    if (record->held) return Status(Errc::busy, "orphan still open");
    return tx.erase_inode(ino);
  });
}

Result<uint32_t> NamespaceStore::purge_many(std::span<const InodeId> inos) {
  return with_write(*t_, [&](NsTxn& tx) -> Result<uint32_t> {
    uint32_t purged = 0;
    for (InodeId ino : inos) {
      auto bytes = tx.raw().get(t_->orphans, inode_key(ino));
      if (!bytes) {
        if (bytes.code() == Errc::not_found) continue;
        return bytes.status();
      }
      auto record = decode_orphan(*bytes);
      if (!record) return record.status();
      if (record->held) continue;
      if (Status s = tx.erase_inode(ino); !s.ok()) return s;
      ++purged;
    }
    return purged;
  });
}

Result<uint64_t> NamespaceStore::orphan_count() {
  return with_read(*t_, [&](NsTxn& tx) { return tx.raw().count(t_->orphans); });
}

Result<uint64_t> NamespaceStore::inode_count() {
  return with_read(*t_, [&](NsTxn& tx) { return tx.raw().count(t_->inodes); });
}

Status NamespaceStore::save_server(const StoredServer& server) {
  return with_write(*t_, [&](NsTxn& tx) {
    return tx.raw().put(t_->servers, server_key(server.id), encode_server(server));
  });
}

Result<std::vector<StoredServer>> NamespaceStore::load_servers() {
  return with_read(*t_, [&](NsTxn& tx) -> Result<std::vector<StoredServer>> {
    std::vector<StoredServer> out;
    Status bad;
    Status s = tx.raw().scan(t_->servers, {}, {}, [&](std::string_view, std::string_view value) {
      auto server = decode_server(value);
      if (!server) {
        bad = server.status();
        return false;
      }
      out.push_back(std::move(*server));
      return true;
    });
    if (!s.ok()) return s;
    if (!bad.ok()) return bad;
    return out;
  });
}

Status NamespaceStore::save_locks(InodeId ino, std::string_view text) {
  return with_write(*t_, [&](NsTxn& tx) -> Status {
    if (!text.empty()) return tx.raw().put(t_->locks, inode_key(ino), text);
    Status s = tx.raw().del(t_->locks, inode_key(ino));
    return s.code() == Errc::not_found ? Status{} : s;
  });
}

Result<std::vector<std::pair<InodeId, std::string>>> NamespaceStore::load_locks() {
  return with_read(*t_, [&](NsTxn& tx) -> Result<std::vector<std::pair<InodeId, std::string>>> {
    std::vector<std::pair<InodeId, std::string>> out;
    Status bad;
    Status s = tx.raw().scan(t_->locks, {}, {}, [&](std::string_view key, std::string_view value) {
      auto ino = decode_inode_key(key);
      if (!ino) {
        bad = ino.status();
        return false;
      }
      out.emplace_back(*ino, std::string(value));
      return true;
    });
    if (!s.ok()) return s;
    if (!bad.ok()) return bad;
    return out;
  });
}

Status NamespaceStore::sync() { return t_->env->sync(); }

}  // namespace pvfs::mds
