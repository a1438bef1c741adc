#include "mds/fileset_lock.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace pvfs::mds {

namespace {
constexpr const char* kLockFile = "owner.lock";
}  // namespace

FileSetLock::~FileSetLock() { release(); }

FileSetLock::FileSetLock(FileSetLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), dev_(other.dev_), ino_(other.ino_) {}

FileSetLock& FileSetLock::operator=(FileSetLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = std::exchange(other.fd_, -1);
    dev_ = other.dev_;
    ino_ = other.ino_;
  }
  return *this;
}

Result<FileSetLock> FileSetLock::acquire(const std::filesystem::path& dir) {
  const auto path = dir / kLockFile;
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return Status(Errc::io, "open " + path.string() + ": " + std::strerror(errno));
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  if (::fcntl(fd, F_OFD_SETLK, &lock) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EAGAIN || err == EACCES)
      return Status(Errc::busy, path.string() + " is locked by another process");
    return Status(Errc::io, "lock " + path.string() + ": " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Status(Errc::io, "stat " + path.string() + ": " + std::strerror(err));
  }
  return FileSetLock(fd, st.st_dev, st.st_ino);
}

bool FileSetLock::still_at(const std::filesystem::path& dir) const {
  if (fd_ < 0) return false;
  struct stat st {};
  if (::stat((dir / kLockFile).c_str(), &st) != 0) return false;
  return st.st_dev == dev_ && st.st_ino == ino_;
}

Status FileSetLock::reacquire(const std::filesystem::path& dir) {
  if (fd_ >= 0) return {};
  struct stat st {};
  if (::stat((dir / kLockFile).c_str(), &st) != 0 || st.st_dev != dev_ || st.st_ino != ino_)
    return Status(Errc::not_found, dir.string() + " was taken over by another member");
  auto again = acquire(dir);
  if (!again) return again.status();
  if (again->dev_ != dev_ || again->ino_ != ino_)
    return Status(Errc::not_found, dir.string() + " was taken over by another member");
  *this = std::move(*again);
  return {};
}

void FileSetLock::release() {
  if (fd_ < 0) return;
  ::close(fd_);  // closing the last descriptor of the open file drops its OFD lock
  fd_ = -1;
}

}  // namespace pvfs::mds
