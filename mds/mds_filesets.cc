// MdsService: making, finding and removing file sets (see
// mds/fileset_catalog.h). A file set's root is named by an entry of a
// directory in another file set; operations reach the right store by the
// file set id in each inode number.
#include <sys/stat.h>

#include <fmt/format.h>

#include "mds/mds_service.h"
#include "mds/permissions.h"
#include "shared/log.h"

namespace pvfs::mds {

asio::awaitable<Result<Attr>> MdsService::with_root_attr(FileSetId parent_set, Result<Attr> found,
                                                         rpc::Origin origin) {
  // Only roots of other file sets come back partial (ino and type).
  if (!found || found->ino.fileset() == parent_set) co_return found;
  NamespaceStore* store = filesets_.find(found->ino);
  if (store && !cluster_.moving(found->ino.fileset())) co_return store->getattr(found->ino);
  co_return co_await cluster_.remote_getattr(found->ino, origin);
}

void MdsService::add_root_attrs(ReaddirResult& page) {
  for (DirEntry& e : page.entries) {
    if (e.attr) continue;
    NamespaceStore* store = filesets_.find(e.ino);
    if (!store) continue;  // listed without attributes: the client looks it up
    if (auto attr = store->getattr(e.ino)) e.attr = *attr;
  }
}

Result<MdsService::MadeFileSet> MdsService::make_fileset(const Caller& caller, InodeId dir,
                                                         Timespec now) {
  NamespaceStore* parent_store = filesets_.find(dir);
  if (!parent_store) return Status(Errc::not_found, "no such directory");
  if (caller.uid != 0) return Status(Errc::not_permitted, "only root makes file sets");
  auto attr = parent_store->getattr(dir);
  if (!attr) return attr.status();
  if (!S_ISDIR(attr->mode)) return Errc::not_dir;
  if (dir == parent_store->root()) return Status(Errc::busy, "already the root of a file set");
  auto empty = parent_store->dir_empty(dir);
  if (!empty) return empty.status();
  if (!*empty) return Status(Errc::not_empty, "only an empty directory becomes a file set");
  auto policy = parent_store->get_layout_policy(dir);
  if (!policy) return policy.status();
  // The new set first: a crash before the entry is repointed leaves only an
  // unreachable, empty file set (made afresh when its id is drawn again).
  auto made = cluster_.create_fileset(now);
  if (!made) return made.status();
  NamespaceStore& child = **made;
  auto undo = [&](Status why) -> Status {
    (void)filesets_.destroy(child.fileset());
    return why;
  };
  if (Status s = child.init_root(*attr, *policy); !s.ok()) return undo(s);
  auto moved = parent_store->replace_with_fileset_root(caller, dir, child.root(), now);
  if (!moved) return undo(moved.status());
  auto root = child.getattr(child.root());
  if (!root) return root.status();
  spdlog::info("directory {:#x} ('{}' in {:#x}) is now file set {}", dir.value, moved->second,
               moved->first.value, child.fileset().value);
  return MadeFileSet{moved->first, moved->second, *root};
}

Result<Attr> MdsService::mkdir_fileset(const Caller& caller, std::string_view name, uint32_t mode,
                                       Timespec now) {
  NamespaceStore* root = filesets_.find(kRootInode);
  if (!root) return Status(Errc::again, "the root file set is not here");
  NamespaceStore& parent = *root;
  // Checked before a file set is made for nothing.
  auto existing = parent.fileset_root_at(caller, kRootInode, name);
  if (!existing) return existing.status();
  if (existing->has_value()) return Errc::exists;
  auto parent_attr = parent.getattr(kRootInode);
  if (!parent_attr) return parent_attr.status();
  auto policy = parent.get_layout_policy(kRootInode);
  if (!policy) return policy.status();
  auto made = cluster_.create_fileset(now);
  if (!made) return made.status();
  NamespaceStore& child = **made;
  const NewOwner owner = new_owner(caller, *parent_attr, S_IFDIR | (mode & (0777 | S_ISVTX)));
  Attr like;
  like.mode = owner.mode;
  like.uid = owner.uid;
  like.gid = owner.gid;
  like.atime = like.mtime = like.ctime = now;
  Status st = child.init_root(like, *policy);
  if (st.ok()) st = parent.add_fileset_root(caller, kRootInode, name, child.root(), now);
  if (!st.ok()) {
    (void)filesets_.destroy(child.fileset());
    return st;
  }
  spdlog::info("'{}' in / is new file set {}", name, child.fileset().value);
  return child.getattr(child.root());
}

asio::awaitable<Status> MdsService::rmdir(NamespaceStore& store, const Caller& caller, InodeId parent,
                                          std::string_view name, Timespec now, rpc::Origin origin) {
  auto root = store.fileset_root_at(caller, parent, name);
  if (!root) co_return root.status();
  if (!root->has_value()) co_return store.rmdir(caller, parent, name, now);
  const InodeId root_ino = **root;
  const FileSetId gone = root_ino.fileset();
  // The set's owner checks it is empty and marks it detached first; the
  // entry goes after (the store may have changed while we waited).
  Result<Attr> attr = Status(Errc::again, "");
  if (filesets_.find(root_ino) && !cluster_.moving(gone)) {
    if (Status s = detach(gone); !s.ok()) co_return s;
    attr = filesets_.find(root_ino)->getattr(root_ino);
  } else {
    attr = co_await cluster_.remote_getattr(root_ino, origin);
    if (!attr) co_return attr.status();
    if (Status s = co_await cluster_.remote_detach(gone, origin); !s.ok()) co_return s;
  }
  if (!attr) co_return attr.status();
  // `store` may be gone after the awaits above (its file set deleted or
  // moved away; a move waits for this request, but nothing else does):
  // look the parent's store up again.
  NamespaceStore* here = filesets_.find(parent);
  if (!here)
    co_return Status(Errc::again, fmt::format("file set {} moved meanwhile", parent.fileset().value));
  auto again = here->fileset_root_at(caller, parent, name);
  if (!again) co_return again.status();
  if (*again != std::optional<InodeId>(root_ino)) {
    spdlog::error("file set {} was detached for rmdir but its entry '{}' changed meanwhile", gone.value, name);
    co_return Status(Errc::again, "the directory changed");
  }
  if (Status s = here->remove_fileset_root(caller, parent, name, *attr, now); !s.ok()) co_return s;
  spdlog::info("file set {} ('{}' in {:#x}) removed", gone.value, name, parent.value);
  co_return Status{};
}

Status MdsService::detach(FileSetId set) {
  NamespaceStore* child = filesets_.find(set);
  if (!child) return Status(Errc::again, fmt::format("file set {} is not here", set.value));
  auto empty = child->dir_empty(child->root());
  if (!empty) return empty.status();
  if (!*empty) return Errc::not_empty;
  // Its unlinked files' objects are deleted first (orphan_loop), then the set.
  detached_.insert(set.value);
  return {};
}

void MdsService::drop_if_detached(NamespaceStore& store) {
  const FileSetId set = store.fileset();
  if (!detached_.count(set.value)) return;
  auto orphans = store.list_orphans(1);
  if (!orphans || !orphans->empty()) return;
  detached_.erase(set.value);
  if (Status s = filesets_.destroy(set); !s.ok())
    spdlog::warn("deleting file set {}: {}", set.value, s.to_string());
}

}  // namespace pvfs::mds
