// What the storage server keeps object bytes in: numbered objects with
// POSIX file semantics (holes, truncate, fallocate, SEEK_DATA). Knows
// nothing of redirects, fragments or the elevator (the storage service
// layers those on top). The daemon's store is DiskObjectStore (one file per
// object); tests wrap it in FaultyObjectStore (tests/support) to fail, stall
// or crash operations. Called from the service's blocking pool and, for
// small reads and writes, its network thread: every implementation must be
// thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
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
  uint64_t capacity_bytes = 0;  // size of the file system holding data_dir, less root's reserve
  uint64_t free_bytes = 0;      // bytes an unprivileged writer may still use
};

class ObjectStore {
 public:
  // Objects may not extend past this offset; larger requests are bad input.
  static constexpr uint64_t kMaxObjectBytes = uint64_t{1} << 62;

  // The store on local disk (disk_object_store.h): DiskObjectStore::open.
  static Result<std::unique_ptr<ObjectStore>> open(const std::filesystem::path& data_dir);

  ObjectStore() = default;
  ObjectStore(const ObjectStore&) = delete;
  ObjectStore& operator=(const ObjectStore&) = delete;
  // No call may be in flight.
  virtual ~ObjectStore() = default;

  // Writes all of `data` at `offset`, creating the object if missing (also for
  // an empty `data`); a write past the end leaves a hole that reads as zeros.
  // With `sync`, the data (and, for a new object, its directory entry) is on
  // stable storage before this returns. Returns data.size().
  // Errors: invalid_argument when offset + size exceeds kMaxObjectBytes;
  // no_space, io, ... from the file system, with a detail naming the object.
  virtual Result<size_t> write(ObjectId id, uint64_t offset, std::span<const std::byte> data,
                               bool sync) = 0;

  // Reads into `out` from `offset`. Returns the bytes read: fewer than
  // out.size() at the end of the object, 0 for a missing object or an offset
  // at or past its end. Never creates the object.
  // Errors: invalid_argument when offset + out.size() exceeds kMaxObjectBytes; io, ...
  virtual Result<size_t> read(ObjectId id, uint64_t offset, std::span<std::byte> out) = 0;

  // Vectored forms for the elevator's merged operations: `parts` are the
  // adjacent pieces of [offset, offset + total) in order, done with one
  // pwritev/preadv (and one fdatasync for `sync`). Same results and errors
  // as write()/read() of the concatenation.
  virtual Result<size_t> writev(ObjectId id, uint64_t offset,
                                std::span<const std::span<const std::byte>> parts, bool sync) = 0;
  virtual Result<size_t> readv(ObjectId id, uint64_t offset,
                               std::span<const std::span<std::byte>> parts) = 0;

  // Sets the object's size to `size`, creating it if missing; growing leaves
  // a hole that reads as zeros. Errors: invalid_argument above kMaxObjectBytes.
  virtual Status truncate(ObjectId id, uint64_t size) = 0;

  // Without `punch`: reserves disk blocks for [offset, offset + length) of
  // the object, creating it if missing, without changing its size (later
  // writes there cannot fail for want of space). With `punch`: frees them;
  // the range reads as zeros, and a missing object stays missing. A length
  // of 0 without `punch` only makes sure the object exists.
  // Errors: invalid_argument beyond kMaxObjectBytes; not_supported when the
  // file system cannot; no_space; io.
  virtual Status allocate(ObjectId id, uint64_t offset, uint64_t length, bool punch) = 0;

  // lseek(SEEK_DATA), or with `hole` lseek(SEEK_HOLE), from `offset` in the
  // object's file: the offset found, or nullopt when there is no data at or
  // after `offset` (a missing object has none). A hole is always found: past
  // the end, or in a missing object, it is `offset` itself.
  // Errors: invalid_argument beyond kMaxObjectBytes; io.
  virtual Result<std::optional<uint64_t>> seek(ObjectId id, uint64_t offset, bool hole) = 0;

  // Deletes the object; a missing object is not an error. Writes that start
  // after this returns recreate it empty.
  virtual Status remove(ObjectId id) = 0;

  // Flushes the object's data and metadata to stable storage; a missing
  // object is not an error.
  virtual Status fsync(ObjectId id) = 0;

  // Whether the object exists and its size, as stored now (a file deleted
  // behind the store's back reads as missing).
  virtual Result<ObjectStat> stat(ObjectId id) = 0;

  // Capacity and free space of what holds the objects.
  virtual Result<StoreSpace> space() = 0;

  // Every object in the store (for fsck); order unspecified. Files whose
  // names are not object names are skipped.
  virtual Result<std::vector<ObjectId>> list() = 0;
};

}  // namespace pvfs
