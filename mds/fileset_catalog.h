// The file sets one metadata server holds: one NamespaceStore (one LMDB
// environment) each, in DATA_DIR/fileset-<id>. File set 0 holds the root
// of the namespace and is created on first start; the others are made by
// `pvfs-ctl fileset create` or, with [mds] fileset_per_top_directory, by
// mkdir in the root directory. An inode routes to its store by the file
// set id in its number (shared/ids.h), without a table.
// Each file set held is locked (mds/fileset_lock.h) so that no other
// member copies it away while this process may write to it; release_locks()
// and reacquire_locks() fence and unfence this member.
// Not thread-safe: owned by the MDS's network thread. Stores are shared
// so a sync running on another thread keeps its store alive.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mds/fileset_lock.h"
#include "mds/namespace_store.h"

namespace pvfs::mds {

class FileSetCatalog {
 public:
  // Opens and locks every file set found in `data_dir`, creating file set
  // 0 (the namespace root, stamped `now`) when it is missing and
  // `create_root` (in an MDS cluster only the member that owns it makes
  // it). Leftovers of interrupted moves (fileset-N.incoming-*) are
  // removed. Errors: busy when a file set is locked by another process
  // (another pvfs-mds on this data dir, or a member taking it over); those
  // of NamespaceStore::open, naming the directory.
  static Result<std::unique_ptr<FileSetCatalog>> open(const std::filesystem::path& data_dir,
                                                      Timespec now, bool create_root = true);

  // The store of the file set `ino` belongs to, or nullptr when this
  // server holds no such file set.
  NamespaceStore* find(InodeId ino) const;
  NamespaceStore* find(FileSetId set) const;
  // As find(), sharing ownership: the store stays open while the caller
  // holds it (a sync on another thread), even if the set is deleted.
  std::shared_ptr<NamespaceStore> share(FileSetId set) const;
  bool has(FileSetId set) const { return sets_.count(set.value) != 0; }
  // The ids held, in increasing order.
  std::vector<uint16_t> ids() const;

  // Makes a new, empty file set whose id is the first free one from
  // `seed` (any number; the caller draws it at random so that ids spread
  // over the 16-bit space) and returns its store. Errors: no_space when
  // every id is taken; those of NamespaceStore::open.
  Result<NamespaceStore*> create(uint64_t seed, Timespec now);
  // Makes the new, empty file set `set`. Errors: exists; those of NamespaceStore::open.
  Result<NamespaceStore*> create(FileSetId set, Timespec now);
  // Opens file set `set` from dir_of(set), placed there by a move. Errors:
  // exists when already held; those of NamespaceStore::open.
  Result<NamespaceStore*> adopt(FileSetId set, Timespec now);
  // The same with the lock of dir_of(set) already held by this process
  // (taken on the directory before it was renamed into place), so that no
  // other member can take the set between its arrival and its opening.
  Result<NamespaceStore*> adopt(FileSetId set, Timespec now, FileSetLock held);
  // Closes file set `set` and deletes its environment (file set 0 too: it
  // moves between metadata servers like any other). Errors: not_found; io.
  Status destroy(FileSetId set);

  // Fencing. Drops the lock of every file set held, which stay open but
  // must not be written until reacquire_locks(); the caller has synced
  // them. Another member may then take them over from shared storage.
  void release_locks();
  // Takes every lock back. A file set whose lock another process holds or
  // whose directory is no longer the one it was opened from (it was taken
  // over meanwhile) is closed, its files left alone; their ids are returned.
  std::vector<uint16_t> reacquire_locks();

  const std::filesystem::path& data_dir() const { return data_dir_; }
  // Where file set `set` lives: data_dir/fileset-<id>.
  std::filesystem::path dir_of(FileSetId set) const;
  // The id in a directory name "fileset-<id>", or nullopt for other names.
  static std::optional<uint16_t> parse_dir_name(const std::string& name);

  // Every store, in file set order.
  std::vector<std::shared_ptr<NamespaceStore>> stores() const;
  // The store of `set` shared, for a caller that waits (co_await) while
  // using it: it stays valid even if the file set is closed meanwhile
  // (check find(set) == it.get() to know). nullptr when not held.
  std::shared_ptr<NamespaceStore> shared(FileSetId set) const;
  size_t size() const { return sets_.size(); }

 private:
  explicit FileSetCatalog(std::filesystem::path data_dir) : data_dir_(std::move(data_dir)) {}

  std::filesystem::path data_dir_;
  // Opens (or creates) the store in dir_of(set) under its lock.
  Result<NamespaceStore*> open_locked(FileSetId set, Timespec now, FileSetLock held = {});

  std::map<uint16_t, std::shared_ptr<NamespaceStore>> sets_;
  std::map<uint16_t, FileSetLock> locks_;
};

}  // namespace pvfs::mds
