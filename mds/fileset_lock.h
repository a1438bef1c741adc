// The fence between the member that serves a file set and one that takes
// it over from shared storage (issue 14): an exclusive lock on the file
// DIR/owner.lock, held by the process that has the file set open, and taken
// by a member before it copies a failed member's file set. The kernel (or
// the shared file system's lock manager) drops it when the holder dies, and
// a member that is alive but paused keeps it, so a file set is never copied
// away while its holder can still write to it. Open file description locks
// (F_OFD_SETLK): two opens in one process conflict too, and closing another
// descriptor of the file does not drop them. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <filesystem>

#include "shared/status.h"

namespace pvfs::mds {

class FileSetLock {
 public:
  FileSetLock() = default;
  ~FileSetLock();
  FileSetLock(FileSetLock&& other) noexcept;
  FileSetLock& operator=(FileSetLock&& other) noexcept;

  // Takes the lock of file set directory `dir` without waiting, creating
  // its lock file (mode 0600) if needed. Errors: busy when another open
  // file holds it (its holder is alive, perhaps paused or cut off); io.
  static Result<FileSetLock> acquire(const std::filesystem::path& dir);

  bool held() const { return fd_ >= 0; }
  // Whether `dir`'s lock file is still the file this lock was taken on:
  // false once the directory was renamed away (taken over) or replaced.
  bool still_at(const std::filesystem::path& dir) const;
  // Drops the lock and closes the file; remembers which file it was.
  void release();
  // Takes the lock again on the same file after release(). Errors: busy
  // (another process holds it: a member is taking the file set over);
  // not_found when `dir` no longer holds the file this lock was taken on
  // (the file set was taken over and its directory renamed); io.
  Status reacquire(const std::filesystem::path& dir);

 private:
  explicit FileSetLock(int fd, dev_t dev, ino_t ino) : fd_(fd), dev_(dev), ino_(ino) {}
  int fd_ = -1;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};

}  // namespace pvfs::mds
