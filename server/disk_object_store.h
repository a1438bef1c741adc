// The storage server's object store on local disk: one file per object under
// data_dir/objects/<low byte of ino, 2 hex>/<ino, 16 hex>.<index>.
// Owns the files, an LRU cache of their open descriptors and the directory's
// LOCK; knows nothing of redirects, fragments or the elevator (the storage
// service layers those on top). Called from the service's blocking pool
// and, for small reads and writes, its network thread: every method is
// thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "server/object_store.h"

namespace pvfs {

class DiskObjectStore final : public ObjectStore {
 public:
  // Default bound on cached open descriptors; open() lowers it to half of
  // RLIMIT_NOFILE when that is smaller.
  static constexpr size_t kDefaultMaxOpenFiles = 1024;

  // Opens (creating if needed) the store under data_dir; takes an exclusive
  // flock on data_dir/LOCK so two servers can never share a directory: a
  // second open, in this process or another, fails with Errc::busy naming the
  // directory and the holder's pid. Other failures map through errno_to_errc.
  // The lock is held until the returned store is destroyed.
  // `max_open_files` bounds the descriptor cache (at least 1).
  static Result<std::unique_ptr<DiskObjectStore>> open(const std::filesystem::path& data_dir,
                                                       size_t max_open_files = kDefaultMaxOpenFiles);

  // Closes every cached descriptor and releases the lock. No call may be in
  // flight.
  ~DiskObjectStore() override;

  // ObjectStore, on the files (errors map through errno_to_errc, with a
  // detail naming the object). stat() also forgets a cached descriptor of a
  // file deleted behind the store's back (fsck finds those), so it is not
  // read, written or truncated through afterwards; space() is statvfs of
  // data_dir.
  Result<size_t> write(ObjectId id, uint64_t offset, std::span<const std::byte> data, bool sync) override;
  Result<size_t> read(ObjectId id, uint64_t offset, std::span<std::byte> out) override;
  Result<size_t> writev(ObjectId id, uint64_t offset, std::span<const std::span<const std::byte>> parts,
                        bool sync) override;
  Result<size_t> readv(ObjectId id, uint64_t offset, std::span<const std::span<std::byte>> parts) override;
  Status truncate(ObjectId id, uint64_t size) override;
  Status allocate(ObjectId id, uint64_t offset, uint64_t length, bool punch) override;
  Result<std::optional<uint64_t>> seek(ObjectId id, uint64_t offset, bool hole) override;
  Status remove(ObjectId id) override;
  Status fsync(ObjectId id) override;
  Result<ObjectStat> stat(ObjectId id) override;
  Result<StoreSpace> space() override;
  Result<std::vector<ObjectId>> list() override;

  // Where the store keeps `id` (for tools and tests); the file may not exist.
  std::filesystem::path object_path(ObjectId id) const;

  // Descriptors currently cached (for tests and metrics).
  size_t cached_files() const;

 private:
  struct OpenFile;
  struct IdHash {
    size_t operator()(ObjectId id) const;
  };
  struct CacheEntry {
    std::shared_ptr<OpenFile> file;
    std::list<ObjectId>::iterator lru_pos;
  };

  DiskObjectStore(std::filesystem::path data_dir, int lock_fd, size_t max_open_files);

  // The object's open file, from the cache or freshly opened (and cached).
  // Without `create`, a missing object yields nullptr and no error.
  Result<std::shared_ptr<OpenFile>> acquire(ObjectId id, bool create);
  // Drops the least recently used entries until at most `keep` remain.
  // Requires mu_ held. In-flight users keep their descriptors open.
  void evict_locked(size_t keep);
  // fdatasync of a written object, then sync_entry(): the tail of a
  // durable write.
  Status sync_data(ObjectId id, int fd, OpenFile& file);
  // Makes a newly created object's directory entry durable (once).
  Status sync_entry(ObjectId id, OpenFile& file);
  std::string object_name(ObjectId id) const;
  std::string fanout_dir(ObjectId id) const;

  const std::filesystem::path data_dir_;
  const std::string objects_dir_;
  const int lock_fd_;
  const size_t max_open_files_;
  // Per fan-out directory: made by this store and its entry in objects/ not
  // yet fsynced. Set under mu_ (at the mkdir), cleared by sync_entry().
  std::array<std::atomic<bool>, 256> fanout_new_{};

  // Guards cache_ and lru_, and is held across the open()/unlink() of an
  // object so a remove() can never race a concurrent open into caching a
  // descriptor of the unlinked file. A leaf lock: nothing else is taken
  // while it is held. Reads and writes of data run outside it.
  mutable std::mutex mu_;
  std::unordered_map<ObjectId, CacheEntry, IdHash> cache_;
  std::list<ObjectId> lru_;  // most recently used first
};

}  // namespace pvfs
