// One file set's namespace, stored in one LMDB environment (one directory):
// inodes, directory entries with stable readdir cookies, symlink targets,
// xattrs, orphans (unlinked files whose objects still exist) and the MDS's
// registry of storage servers. Enforces POSIX semantics and Linux's
// permission rules (mds/permissions.h); does not touch storage objects,
// read a clock or draw random numbers. Each mutating call is one atomic
// LMDB transaction. Not thread-safe: owned by the MDS's network thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "mds/namespace_types.h"
#include "shared/ids.h"
#include "shared/layout.h"
#include "shared/name_hash.h"
#include "shared/status.h"

namespace pvfs::mds {

namespace detail {
struct Tables;
}

// Most links a non-directory may have (link fails with too_many_links).
inline constexpr uint32_t kMaxLinks = 65000;
// Longest symlink target in bytes.
inline constexpr size_t kMaxSymlinkTarget = 4095;
// Largest xattr value in bytes.
inline constexpr size_t kMaxXattrValue = 65536;

// Common errors, not repeated below: not_found for an unknown inode or name;
// not_dir when a parent is not a directory; invalid_argument for a name that
// is empty, ".", ".." or holds '/' or NUL; name_too_long past 255 bytes;
// access_denied without search (x) permission on a parent; corrupt when a
// stored record fails to decode; no_space and io from LMDB.
// Changing a directory's entries needs write and search permission on it
// (access_denied) and sets its mtime and ctime to `now`.
class NamespaceStore {
 public:
  // Opens the namespace of file set `set` kept in `dir`, creating it on
  // first use with a root directory (InodeId::make(set, 1), mode 0755, owned
  // by root) stamped `now`. Everything stored before is found again.
  // Errors: invalid_argument when `dir` holds another file set; corrupt for
  // an unknown format; io.
  static Result<std::unique_ptr<NamespaceStore>> open(const std::filesystem::path& dir,
                                                      FileSetId set, Timespec now);
  ~NamespaceStore();
  NamespaceStore(const NamespaceStore&) = delete;
  NamespaceStore& operator=(const NamespaceStore&) = delete;

  // This file set's root directory.
  InodeId root() const;

  // The inode `name` in directory `parent` names.
  // `cookie`, when given, gets the entry's readdir cookie.
  Result<Attr> lookup(const Caller& caller, InodeId parent, std::string_view name,
                      uint64_t* cookie = nullptr);
  // The attributes of `ino`.
  Result<Attr> getattr(InodeId ino);
  // Changes the fields in change.mask; rules and errors in apply_setattr()
  // (mds/permissions.h). A size change records the size only: the client
  // truncates the objects. Returns the new attributes.
  Result<Attr> setattr(const Caller& caller, InodeId ino, const SetAttr& change, Timespec now);

  // Creates `name` in `parent`: a regular file (type 0 or S_IFREG) storing
  // `layout`, a FIFO, a socket, or a character or block device (`rdev`).
  // `mode` is already masked by the umask. Errors: exists; invalid_argument
  // for another type; not_permitted for S_IFDIR, or a device by non-root.
  Result<Attr> mknod(const Caller& caller, InodeId parent, std::string_view name, uint32_t mode,
                     uint32_t rdev, const Layout& layout, Timespec now);
  // Creates directory `name` (mode bits rwx and sticky of `mode`); it copies
  // the parent's layout policy. Errors: exists.
  Result<Attr> mkdir(const Caller& caller, InodeId parent, std::string_view name, uint32_t mode,
                     Timespec now);
  // Removes `name` from `parent`. A regular file losing its last link
  // becomes an orphan, held (not listed) until release_orphan() when
  // `keep_open`; other inodes without links are deleted. Errors: is_dir;
  // not_permitted in a sticky directory (see check_delete()).
  Result<UnlinkResult> unlink(const Caller& caller, InodeId parent, std::string_view name,
                              bool keep_open, Timespec now);
  // Removes the empty directory `name`. Errors: not_dir; not_empty; busy for
  // a file set root; not_permitted in a sticky directory.
  Status rmdir(const Caller& caller, InodeId parent, std::string_view name, Timespec now);
  // Creates symlink `name` pointing at `target`. Errors: exists; not_found
  // for an empty target; name_too_long past kMaxSymlinkTarget bytes.
  Result<Attr> symlink(const Caller& caller, InodeId parent, std::string_view name,
                       std::string_view target, Timespec now);
  // The target of symlink `ino`. Errors: invalid_argument when not a symlink.
  Result<std::string> readlink(InodeId ino);
  // Moves `name` in `parent` to `new_name` in `new_parent`, as renameat2(2)
  // with kRename* flags: replaces a file by a file or a directory by an
  // empty directory; kRenameNoReplace fails with exists; kRenameExchange
  // swaps the two (not_found without a target). Renaming onto the same
  // inode does nothing. A moved entry gets a new readdir cookie. Errors:
  // invalid_argument for bad flags or moving a directory into its own
  // subtree; not_empty; is_dir / not_dir for type mismatches; cross_device
  // for another file set; not_permitted in sticky directories;
  // access_denied without write permission on a directory moved to another
  // parent. The replaced inode loses a link: see RenameResult; a replaced
  // regular file left without links is held like unlink's when `keep_open`.
  Result<RenameResult> rename(const Caller& caller, InodeId parent, std::string_view name,
                              InodeId new_parent, std::string_view new_name, uint32_t flags,
                              Timespec now, bool keep_open = false);
  // Adds `new_name` in `new_parent` for `ino`. Errors: exists; not_permitted
  // for a directory; too_many_links at kMaxLinks; cross_device for another
  // file set; not_found for an orphan.
  Result<Attr> link(const Caller& caller, InodeId ino, InodeId new_parent, std::string_view new_name,
                    Timespec now);
  // Up to `max_entries` entries of directory `ino` inserted after `cookie`
  // (0: from the start), in insertion order, without "." and "..". Cookies
  // stay valid while entries come and go: an entry listed once is never
  // listed again, one present throughout is listed exactly once. `plus`
  // adds each entry's attributes. Errors: not_dir; access_denied without
  // read permission; invalid_argument when max_entries is 0.
  Result<ReaddirResult> readdir(const Caller& caller, InodeId ino, uint64_t cookie,
                                uint32_t max_entries, bool plus);
  // The hash under `key` (shared/name_hash.h) of every name in directory
  // `dir`, for a directory lease (mds/dir_lease_table.h). Errors: stale when
  // `dir` is gone; not_dir; access_denied without read and search
  // permission; too_big past `max_entries` names.
  Result<std::vector<uint64_t>> name_hashes(const Caller& caller, InodeId dir, const NameHashKey& key,
                                            size_t max_entries);

  // Sets xattr `name` of `ino` to `value`; `flags` kXattrCreate fails with
  // exists when present, kXattrReplace with no_data when absent. Errors:
  // too_big past kMaxXattrValue; invalid_argument for other flag bits; name
  // and permission errors in check_xattr_name() and check_xattr().
  Status setxattr(const Caller& caller, InodeId ino, std::string_view name, std::string_view value,
                  uint32_t flags);
  // The value of xattr `name`. Errors: no_data when absent; as setxattr.
  Result<std::string> getxattr(const Caller& caller, InodeId ino, std::string_view name);
  // The names of the xattrs of `ino` the caller may see, in byte order.
  Result<std::vector<std::string>> listxattr(const Caller& caller, InodeId ino);
  // Removes xattr `name`. Errors: no_data when absent; as setxattr.
  Status removexattr(const Caller& caller, InodeId ino, std::string_view name);

  // access(2): whether `caller` holds kMay* bits `mask` (0 checks only
  // existence). Returns the attributes. Errors: invalid_argument for other
  // bits; access_denied.
  Result<Attr> access(const Caller& caller, InodeId ino, uint32_t mask);
  // Whether `caller` may open `ino` for kMayRead/kMayWrite `mask`. A file
  // unlinked while open (an orphan) opens only for the caller that unlinked
  // it while holding it (`held_here`): to anyone else it is gone, though a
  // stale name may still lead there. Errors: not_found for an orphan; is_dir when
  // writing a directory; loop for a symlink; access_denied.
  Result<Attr> check_open(const Caller& caller, InodeId ino, uint32_t mask, bool held_here = false);
  // Records that regular file `ino` is at least `size` bytes (sizes only
  // grow here); `touch_mtime` sets mtime and ctime to `now`; `blocks`, when
  // given, replaces the allocated blocks (Attr::blocks). No permission
  // check: the client checked when it opened the file. Errors: is_dir;
  // invalid_argument for another non-regular file.
  Result<Attr> update_size(InodeId ino, uint64_t size, bool touch_mtime, Timespec now,
                           std::optional<uint64_t> blocks = std::nullopt);

  // Sets the policy directory `dir` hands to new files and subdirectories.
  // Errors: not_dir; not_permitted unless owner or root.
  Result<Attr> set_layout_policy(const Caller& caller, InodeId dir, const LayoutPolicy& policy);
  // The policy of directory `dir`. Errors: not_dir.
  Result<LayoutPolicy> get_layout_policy(InodeId dir);
  // Replaces the layout of empty regular file `file`. Errors: busy when its
  // size is not 0; is_dir / invalid_argument for other types or an invalid
  // layout; not_permitted unless owner or root.
  Result<Attr> set_file_layout(const Caller& caller, InodeId file, const Layout& layout);

  // Up to `max` orphans not held open with inode numbers above `after`
  // (all when nullopt), in inode order, with their layouts. The orphan
  // collector pages through them with `after` so that orphans it cannot
  // delete yet (a server down) do not hide the ones behind them.
  Result<std::vector<Orphan>> list_orphans(uint32_t max, std::optional<InodeId> after = std::nullopt);
  // The orphans held open by their clients (keep_open), in inode order:
  // the MDS gives each a lease when it loads the file set (mds/orphan_holds.h).
  Result<std::vector<InodeId>> held_orphans();
  // Whether orphan `ino` is held open. Errors: not_found when not an orphan.
  Result<bool> orphan_held(InodeId ino);
  // Holds orphan `ino` (another client has it open): not listed until
  // release_orphan(). Errors: not_found when not an orphan.
  Status hold_orphan(InodeId ino);
  // The client that kept orphan `ino` open has closed it: list it from now
  // on. Errors: not_found when `ino` is not an orphan.
  Status release_orphan(InodeId ino);
  // Forgets orphan `ino` (inode and xattrs) once its objects are deleted.
  // Errors: not_found when not an orphan; busy while held.
  Status purge(InodeId ino);
  // purge() of each of `inos` in one transaction (one commit for a whole
  // batch of deleted orphans). Those no longer orphans, or held open again,
  // are skipped. Returns how many were forgotten. Errors: corrupt, io.
  Result<uint32_t> purge_many(std::span<const InodeId> inos);
  // Orphans in this file set, held ones included (metrics).
  Result<uint64_t> orphan_count();

  // Up to `max` regular files with inode numbers above `after`, in inode
  // order, orphans included and marked (for fsck; namespace_scan.cc).
  // Errors: invalid_argument when `max` is 0.
  Result<FileScan> scan_files(InodeId after, uint32_t max);

  // ---- file set roots (mds/namespace_fileset.cc) ---------------------
  // A directory entry may name the root of another file set. lookup()
  // returns only such a root's ino and S_IFDIR (its own store has the
  // rest); readdir lists it without attributes; unlink fails with is_dir,
  // rmdir with busy (the service removes it with remove_fileset_root()),
  // rename and link with cross_device.

  // The file set this store holds.
  FileSetId fileset() const;
  // The root of another file set that `name` in `parent` names, or nullopt
  // when `name` is absent or names an inode of this set. Errors: as lookup.
  Result<std::optional<InodeId>> fileset_root_at(const Caller& caller, InodeId parent,
                                                 std::string_view name);
  // Adds `name` in `parent` naming `root`, the root directory of another
  // file set, as mkdir would add a directory. Errors: as mkdir.
  Status add_fileset_root(const Caller& caller, InodeId parent, std::string_view name, InodeId root,
                          Timespec now);
  // Makes the entry of empty directory `dir` name `root` instead (same name,
  // same readdir cookie) and deletes `dir`. Returns the parent and the name.
  // Errors: not_permitted unless the caller is root (uid 0); not_dir;
  // not_empty; busy for this file set's root; not_found.
  Result<std::pair<InodeId, std::string>> replace_with_fileset_root(const Caller& caller, InodeId dir,
                                                                    InodeId root, Timespec now);
  // Removes `name` in `parent`, which names file set root `root` with
  // attributes `root_attr` (the caller checked the set is empty).
  // Errors: not_found when `name` does not name `root`; as rmdir.
  Status remove_fileset_root(const Caller& caller, InodeId parent, std::string_view name,
                             const Attr& root_attr, Timespec now);
  // Gives this set's root directory the mode, owner, times and `policy`
  // of a directory it replaces or is created as.
  Status init_root(const Attr& like, const LayoutPolicy& policy);
  // Whether directory `dir` has no entries. Errors: not_dir.
  Result<bool> dir_empty(InodeId dir);

  // Number of inodes, orphans included (statfs).
  Result<uint64_t> inode_count();
  // Remembers storage server `server`, replacing the record with its id.
  Status save_server(const StoredServer& server);
  // Every remembered storage server, in id order.
  Result<std::vector<StoredServer>> load_servers();
  // Locks across clients (mds/lock_host.h): the text of the locks held on
  // `ino` (empty: none, the record goes), kept with the file set so that
  // they move and fail over with it.
  Status save_locks(InodeId ino, std::string_view text);
  // Every inode's stored locks, in inode order. Errors: corrupt for a bad key.
  Result<std::vector<std::pair<InodeId, std::string>>> load_locks();
  // Forces every commit to stable storage (see lmdb::Env).
  Status sync();

 private:
  explicit NamespaceStore(std::unique_ptr<detail::Tables> tables);
  std::unique_ptr<detail::Tables> t_;
};

}  // namespace pvfs::mds
