// The storage server's local object store: one file per object under
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

#include "shared/ids.h"
#include "shared/status.h"

namespace pvfs {

struct ObjectStat {
  bool exists = false;
  uint64_t size = 0;      // bytes, holes included; 0 when !exists
  int64_t mtime_ns = 0;   // last data change, ns since the Unix epoch; 0 when !exists
  uint64_t blocks = 0;    // 512-byte blocks allocated (st_blocks); 0 when !exists
};

struct StoreSpace {
  uint64_t capacity_bytes = 0;  // size of the file system holding data_dir
  uint64_t free_bytes = 0;      // bytes an unprivileged writer may still use
};

class ObjectStore {
 public:
  // Objects may not extend past this offset; larger requests are bad input.
  static constexpr uint64_t kMaxObjectBytes = uint64_t{1} << 62;
  // Default bound on cached open descriptors; open() lowers it to half of
  // RLIMIT_NOFILE when that is smaller.
  static constexpr size_t kDefaultMaxOpenFiles = 1024;

  // Opens (creating if needed) the store under data_dir; takes an exclusive
  // flock on data_dir/LOCK so two servers can never share a directory: a
  // second open, in this process or another, fails with Errc::busy naming the
  // directory and the holder's pid. Other failures map through errno_to_errc.
  // The lock is held until the returned store is destroyed.
  // `max_open_files` bounds the descriptor cache (at least 1).
  static Result<std::unique_ptr<ObjectStore>> open(const std::filesystem::path& data_dir,
                                                   size_t max_open_files = kDefaultMaxOpenFiles);

  ObjectStore(const ObjectStore&) = delete;
  ObjectStore& operator=(const ObjectStore&) = delete;
  // Closes every cached descriptor and releases the lock. No call may be in
  // flight.
  ~ObjectStore();

  // Writes all of `data` at `offset`, creating the object if missing (also for
  // an empty `data`); a write past the end leaves a hole that reads as zeros.
  // With `sync`, the data (and, for a new object, its directory entry) is on
  // stable storage before this returns. Returns data.size().
  // Errors: invalid_argument when offset + size exceeds kMaxObjectBytes;
  // no_space, io, ... from the file system, with a detail naming the object.
  Result<size_t> write(ObjectId id, uint64_t offset, std::span<const std::byte> data, bool sync);

  // Reads into `out` from `offset`. Returns the bytes read: fewer than
  // out.size() at the end of the object, 0 for a missing object or an offset
  // at or past its end. Never creates the object.
  // Errors: invalid_argument when offset + out.size() exceeds kMaxObjectBytes; io, ...
  Result<size_t> read(ObjectId id, uint64_t offset, std::span<std::byte> out);

  // Vectored forms for the elevator's merged operations: `parts` are the
  // adjacent pieces of [offset, offset + total) in order, done with one
  // pwritev/preadv (and one fdatasync for `sync`). Same results and errors
  // as write()/read() of the concatenation.
  Result<size_t> writev(ObjectId id, uint64_t offset, std::span<const std::span<const std::byte>> parts,
                        bool sync);
  Result<size_t> readv(ObjectId id, uint64_t offset, std::span<const std::span<std::byte>> parts);

  // Sets the object's size to `size`, creating it if missing; growing leaves
  // a hole that reads as zeros. Errors: invalid_argument above kMaxObjectBytes.
  Status truncate(ObjectId id, uint64_t size);

  // Without `punch`: reserves disk blocks for [offset, offset + length) of
  // the object, creating it if missing, without changing its size (later
  // writes there cannot fail for want of space). With `punch`: frees them;
  // the range reads as zeros, and a missing object stays missing. A length
  // of 0 without `punch` only makes sure the object exists.
  // Errors: invalid_argument beyond kMaxObjectBytes; not_supported when the
  // file system cannot; no_space; io.
  Status allocate(ObjectId id, uint64_t offset, uint64_t length, bool punch);

  // lseek(SEEK_DATA), or with `hole` lseek(SEEK_HOLE), from `offset` in the
  // object's file: the offset found, or nullopt when there is no data at or
  // after `offset` (a missing object has none). A hole is always found: past
  // the end, or in a missing object, it is `offset` itself.
  // Errors: invalid_argument beyond kMaxObjectBytes; io.
  Result<std::optional<uint64_t>> seek(ObjectId id, uint64_t offset, bool hole);

  // Deletes the object; a missing object is not an error. Writes that start
  // after this returns recreate it empty.
  Status remove(ObjectId id);

  // Flushes the object's data and metadata to stable storage; a missing
  // object is not an error.
  Status fsync(ObjectId id);

  // Whether the object's file exists and its size, from the file system.
  // When the file is gone the store also forgets any descriptor it cached
  // for it, so a file deleted behind its back (fsck finds those) is not
  // read, written or truncated through a stale descriptor afterwards.
  Result<ObjectStat> stat(ObjectId id);

  // Capacity and free space of the file system holding data_dir (statvfs).
  Result<StoreSpace> space();

  // Every object in the store (for fsck); order unspecified. Files whose
  // names are not object names are skipped.
  Result<std::vector<ObjectId>> list();

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

  ObjectStore(std::filesystem::path data_dir, int lock_fd, size_t max_open_files);

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
