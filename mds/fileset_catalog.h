// The file sets one metadata server holds: one NamespaceStore (one LMDB
// environment) each, in DATA_DIR/fileset-<id>. File set 0 holds the root
// of the namespace and is created on first start; the others are made by
// `pvfs-ctl fileset create` or, with [mds] fileset_per_top_directory, by
// mkdir in the root directory. An inode routes to its store by the file
// set id in its number (shared/ids.h), without a table.
// Not thread-safe: owned by the MDS's network thread. Stores are shared
// so a sync running on another thread keeps its store alive.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <vector>

#include "mds/namespace_store.h"

namespace pvfs::mds {

class FileSetCatalog {
 public:
  // Opens every file set found in `data_dir`, creating file set 0 (the
  // namespace root, stamped `now`) when it is missing. Errors: those of
  // NamespaceStore::open, naming the directory.
  static Result<std::unique_ptr<FileSetCatalog>> open(const std::filesystem::path& data_dir,
                                                      Timespec now);

  // The store of the file set `ino` belongs to, or nullptr when this
  // server holds no such file set.
  NamespaceStore* find(InodeId ino) const;
  // File set 0: the root of the namespace, and the registry of storage servers.
  NamespaceStore& root() const { return *sets_.begin()->second; }

  // Makes a new, empty file set whose id is the first free one from
  // `seed` (any number; the caller draws it at random so that ids spread
  // over the 16-bit space) and returns its store. Errors: no_space when
  // every id is taken; those of NamespaceStore::open.
  Result<NamespaceStore*> create(uint64_t seed, Timespec now);
  // Closes file set `set` and deletes its environment. Errors: invalid_argument
  // for file set 0; not_found; io.
  Status destroy(FileSetId set);

  // Every store, in file set order.
  std::vector<std::shared_ptr<NamespaceStore>> stores() const;
  size_t size() const { return sets_.size(); }

 private:
  explicit FileSetCatalog(std::filesystem::path data_dir) : data_dir_(std::move(data_dir)) {}
  std::filesystem::path dir_of(FileSetId set) const;

  std::filesystem::path data_dir_;
  std::map<uint16_t, std::shared_ptr<NamespaceStore>> sets_;
};

}  // namespace pvfs::mds
