// DiskObjectStore: local files, an LRU descriptor cache, and the directory LOCK.
// Descriptors are shared_ptr-owned so eviction never closes one a concurrent
// read or write is still using; data moves outside the cache mutex.
#include "server/disk_object_store.h"

#include <limits.h>
#include <sys/uio.h>

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <optional>
#include <string_view>

#include <fmt/format.h>

namespace pvfs {

struct DiskObjectStore::OpenFile {
  explicit OpenFile(int fd_in, bool entry_durable_in) : fd(fd_in), entry_durable(entry_durable_in) {}
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;
  ~OpenFile() { ::close(fd); }

  const int fd;
  // False while the object was created by us and its directory entry has not
  // been fsynced yet; a sync write or fsync() makes it durable.
  std::atomic<bool> entry_durable;
};

namespace {

constexpr mode_t kObjectMode = 0600;
constexpr mode_t kDirMode = 0700;

// Offset and length must stay inside [0, kMaxObjectBytes]; also catches wrap-around.
bool range_ok(uint64_t offset, uint64_t length) {
  return offset <= ObjectStore::kMaxObjectBytes && length <= ObjectStore::kMaxObjectBytes - offset;
}

int open_retry(const char* path, int flags, mode_t mode = 0) {
  int fd;
  do {
    fd = ::open(path, flags, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

// mkdir that tolerates an existing directory; sets `created` when it made one.
Status make_dir(const std::string& path, bool& created) {
  if (::mkdir(path.c_str(), kDirMode) == 0) {
    created = true;
    return {};
  }
  if (errno == EEXIST) return {};
  return Status::from_errno(errno, fmt::format("mkdir {}", path));
}

Status fsync_dir(const std::string& path) {
  int fd = open_retry(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::from_errno(errno, fmt::format("open directory {}", path));
  Status s;
  if (::fsync(fd) != 0) s = Status::from_errno(errno, fmt::format("fsync directory {}", path));
  ::close(fd);
  return s;
}

// A file's modification time in ns since the epoch.
int64_t mtime_ns(const struct ::stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

// Parses "<16 hex>.<decimal index>" into an ObjectId.

std::optional<ObjectId> parse_object_name(std::string_view name) {
  if (name.size() < 18 || name[16] != '.') return std::nullopt;
  uint64_t ino = 0;
  uint32_t index = 0;
  const char* first = name.data();
  auto [p1, e1] = std::from_chars(first, first + 16, ino, 16);
  if (e1 != std::errc() || p1 != first + 16) return std::nullopt;
  const char* idx = first + 17;
  const char* last = name.data() + name.size();
  if (*idx < '0' || *idx > '9') return std::nullopt;
  auto [p2, e2] = std::from_chars(idx, last, index, 10);
  if (e2 != std::errc() || p2 != last) return std::nullopt;
  return ObjectId{InodeId(ino), index};
}

}  // namespace

size_t DiskObjectStore::IdHash::operator()(ObjectId id) const {
  // splitmix64 finaliser over both fields.
  uint64_t x = id.ino.value ^ (uint64_t{id.index} * 0x9e3779b97f4a7c15ULL);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<size_t>(x ^ (x >> 31));
}

Result<std::unique_ptr<DiskObjectStore>> DiskObjectStore::open(const std::filesystem::path& data_dir,
                                                               size_t max_open_files) {
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) return Status::from_errno(ec.value(), fmt::format("create data directory {}", data_dir.string()));

  const std::string lock_path = (data_dir / "LOCK").string();
  int lock_fd = open_retry(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd < 0) return Status::from_errno(errno, fmt::format("open {}", lock_path));
  int rc;
  do {
    rc = ::flock(lock_fd, LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    const int err = errno;
    char pid_text[32] = {};
    ssize_t n = ::pread(lock_fd, pid_text, sizeof(pid_text) - 1, 0);
    ::close(lock_fd);
    if (err == EWOULDBLOCK) {
      std::string_view holder(pid_text, n > 0 ? static_cast<size_t>(n) : 0);
      while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.remove_suffix(1);
      return Status(Errc::busy,
                    fmt::format("data directory {} is in use by another server{}{}{}; two servers "
                                "cannot share one directory",
                                data_dir.string(), holder.empty() ? "" : " (pid ", holder,
                                holder.empty() ? "" : ")"));
    }
    return Status::from_errno(err, fmt::format("flock {}", lock_path));
  }
  // The pid is only a hint for the operator reading a busy error; the flock
  // is what excludes.
  const std::string pid = fmt::format("{}\n", ::getpid());
  if (::ftruncate(lock_fd, 0) != 0 || ::pwrite(lock_fd, pid.data(), pid.size(), 0) < 0) {
    Status s = Status::from_errno(errno, fmt::format("write {}", lock_path));
    ::close(lock_fd);
    return s;
  }

  // The 256 fan-out directories are made on first use: most stores in tests
  // and small clusters touch few of them, and a mkdir costs ~1 ms here.
  const std::string objects_dir = (data_dir / "objects").string();
  bool created = false;
  Status s = make_dir(objects_dir, created);
  if (s.ok() && created) s = fsync_dir(data_dir.string());
  if (!s.ok()) {
    ::close(lock_fd);
    return s;
  }

  // Leave half the process's descriptors to sockets and LMDB.
  size_t limit = std::max<size_t>(max_open_files, 1);
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    limit = std::min<size_t>(limit, std::max<size_t>(rl.rlim_cur / 2, 1));
  return std::unique_ptr<DiskObjectStore>(new DiskObjectStore(data_dir, lock_fd, limit));
}

DiskObjectStore::DiskObjectStore(std::filesystem::path data_dir, int lock_fd, size_t max_open_files)
    : data_dir_(std::move(data_dir)),
      objects_dir_((data_dir_ / "objects").string()),
      lock_fd_(lock_fd),
      max_open_files_(max_open_files) {}

DiskObjectStore::~DiskObjectStore() {
  cache_.clear();
  lru_.clear();
  ::close(lock_fd_);  // releases the flock
}

std::filesystem::path DiskObjectStore::object_path(ObjectId id) const {
  return fmt::format("{}/{:02x}/{:016x}.{}", objects_dir_, id.ino.value & 0xff, id.ino.value,
                     id.index);
}

std::string DiskObjectStore::fanout_dir(ObjectId id) const {
  return fmt::format("{}/{:02x}", objects_dir_, id.ino.value & 0xff);
}

std::string DiskObjectStore::object_name(ObjectId id) const {
  return fmt::format("object {:016x}.{}", id.ino.value, id.index);
}

size_t DiskObjectStore::cached_files() const {
  std::lock_guard lock(mu_);
  return cache_.size();
}

void DiskObjectStore::evict_locked(size_t keep) {
  while (cache_.size() > keep) {
    cache_.erase(lru_.back());
    lru_.pop_back();
  }
}

Result<std::shared_ptr<DiskObjectStore::OpenFile>> DiskObjectStore::acquire(ObjectId id, bool create) {
  std::lock_guard lock(mu_);
  if (auto it = cache_.find(id); it != cache_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.lru_pos);
    return it->second.file;
  }
  const std::string path = object_path(id).string();
  bool created = false;
  int fd = -1;
  int err = 0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    fd = open_retry(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && create) {
      fd = open_retry(path.c_str(), O_RDWR | O_CLOEXEC | O_CREAT | O_EXCL, kObjectMode);
      if (fd < 0 && errno == ENOENT) {
        // First object in this fan-out directory.
        bool dir_created = false;
        if (Status s = make_dir(fanout_dir(id), dir_created); !s.ok()) return s;
        if (dir_created) fanout_new_[id.ino.value & 0xff].store(true, std::memory_order_release);
        fd = open_retry(path.c_str(), O_RDWR | O_CLOEXEC | O_CREAT | O_EXCL, kObjectMode);
      }
      if (fd >= 0) created = true;
      // Someone outside the store created it between our two opens.
      else if (errno == EEXIST) fd = open_retry(path.c_str(), O_RDWR | O_CLOEXEC);
    }
    err = fd < 0 ? errno : 0;
    if (fd >= 0 || (err != EMFILE && err != ENFILE) || cache_.empty()) break;
    // Out of descriptors: give back half of ours and try once more.
    evict_locked(cache_.size() / 2);
  }
  if (fd < 0) {
    if (err == ENOENT && !create) return std::shared_ptr<OpenFile>();
    return Status::from_errno(err, fmt::format("open {} ({})", object_name(id), path));
  }
  auto file = std::make_shared<OpenFile>(fd, !created);
  evict_locked(max_open_files_ - 1);
  lru_.push_front(id);
  cache_.emplace(id, CacheEntry{file, lru_.begin()});
  return file;
}

Status DiskObjectStore::sync_entry(ObjectId id, OpenFile& file) {
  if (file.entry_durable.load(std::memory_order_acquire)) return {};
  // The fan-out directory's own entry first, if it is as new as the object.
  std::atomic<bool>& dir_new = fanout_new_[id.ino.value & 0xff];
  Status s;
  if (dir_new.load(std::memory_order_acquire)) {
    s = fsync_dir(objects_dir_);
    if (s.ok()) dir_new.store(false, std::memory_order_release);
  }
  if (s.ok()) s = fsync_dir(fanout_dir(id));
  if (!s.ok()) return Status(s.code(), fmt::format("{}: {}", object_name(id), s.detail()));
  file.entry_durable.store(true, std::memory_order_release);
  return {};
}

Result<size_t> DiskObjectStore::write(ObjectId id, uint64_t offset, std::span<const std::byte> data,
                                  bool sync) {
  if (!range_ok(offset, data.size()))
    return Status(Errc::invalid_argument,
                  fmt::format("write {} at offset {} length {}: beyond the maximum object size",
                              object_name(id), offset, data.size()));
  auto file = acquire(id, true);
  if (!file) return file.status();
  const int fd = (*file)->fd;
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::pwrite(fd, data.data() + done, data.size() - done,
                         static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::from_errno(errno, fmt::format("pwrite {} at offset {}", object_name(id),
                                                   offset + done));
    }
    if (n == 0)
      return Status(Errc::io, fmt::format("pwrite {} at offset {} wrote nothing", object_name(id),
                                          offset + done));
    done += static_cast<size_t>(n);
  }
  if (sync)
    if (Status s = sync_data(id, fd, **file); !s.ok()) return s;
  return done;
}

Result<size_t> DiskObjectStore::read(ObjectId id, uint64_t offset, std::span<std::byte> out) {
  if (!range_ok(offset, out.size()))
    return Status(Errc::invalid_argument,
                  fmt::format("read {} at offset {} length {}: beyond the maximum object size",
                              object_name(id), offset, out.size()));
  if (out.empty()) return size_t{0};
  auto file = acquire(id, false);
  if (!file) return file.status();
  if (!*file) return size_t{0};
  const int fd = (*file)->fd;
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::pread(fd, out.data() + done, out.size() - done,
                        static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::from_errno(errno, fmt::format("pread {} at offset {}", object_name(id),
                                                   offset + done));
    }
    if (n == 0) break;  // end of object
    done += static_cast<size_t>(n);
  }
  return done;
}

Status DiskObjectStore::sync_data(ObjectId id, int fd, OpenFile& file) {
  int rc;
  do {
    rc = ::fdatasync(fd);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) return Status::from_errno(errno, fmt::format("fdatasync {}", object_name(id)));
  return sync_entry(id, file);
}

namespace {

// Runs pwritev/preadv over `iov` from `offset` until every byte is done (or,
// for reads, the end of the file). Returns the bytes done or -errno.
template <typename Call>
ssize_t vectored(int fd, std::vector<iovec> iov, uint64_t offset, bool stop_at_eof, Call call) {
  size_t done = 0, first = 0;
  while (first < iov.size()) {
    ssize_t n = call(fd, iov.data() + first, static_cast<int>(std::min<size_t>(iov.size() - first, IOV_MAX)),
                     static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (n == 0) {
      if (stop_at_eof) break;
      return -EIO;
    }
    done += static_cast<size_t>(n);
    for (size_t left = static_cast<size_t>(n); left > 0 && first < iov.size();) {
      if (left >= iov[first].iov_len) {
        left -= iov[first].iov_len;
        ++first;
      } else {
        iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
        iov[first].iov_len -= left;
        left = 0;
      }
    }
  }
  return static_cast<ssize_t>(done);
}

}  // namespace

Result<size_t> DiskObjectStore::writev(ObjectId id, uint64_t offset,
                                   std::span<const std::span<const std::byte>> parts, bool sync) {
  if (parts.size() == 1) return write(id, offset, parts[0], sync);
  std::vector<iovec> iov;
  size_t total = 0;
  for (auto p : parts) {
    iov.push_back({const_cast<std::byte*>(p.data()), p.size()});
    total += p.size();
  }
  if (!range_ok(offset, total))
    return Status(Errc::invalid_argument, fmt::format("write {} at offset {} length {}: beyond the "
                                                      "maximum object size", object_name(id), offset, total));
  auto file = acquire(id, true);
  if (!file) return file.status();
  const int fd = (*file)->fd;
  ssize_t n = vectored(fd, std::move(iov), offset, false, ::pwritev);
  if (n < 0) return Status::from_errno(static_cast<int>(-n), fmt::format("pwritev {} at offset {}",
                                                                          object_name(id), offset));
  if (sync)
    if (Status s = sync_data(id, fd, **file); !s.ok()) return s;
  return static_cast<size_t>(n);
}

Result<size_t> DiskObjectStore::readv(ObjectId id, uint64_t offset, std::span<const std::span<std::byte>> parts) {
  if (parts.size() == 1) return read(id, offset, parts[0]);
  std::vector<iovec> iov;
  size_t total = 0;
  for (auto p : parts) {
    iov.push_back({p.data(), p.size()});
    total += p.size();
  }
  if (!range_ok(offset, total))
    return Status(Errc::invalid_argument, fmt::format("read {} at offset {} length {}: beyond the "
                                                      "maximum object size", object_name(id), offset, total));
  if (total == 0) return size_t{0};
  auto file = acquire(id, false);
  if (!file) return file.status();
  if (!*file) return size_t{0};
  ssize_t n = vectored((*file)->fd, std::move(iov), offset, true, ::preadv);
  if (n < 0) return Status::from_errno(static_cast<int>(-n), fmt::format("preadv {} at offset {}",
                                                                          object_name(id), offset));
  return static_cast<size_t>(n);
}

Status DiskObjectStore::truncate(ObjectId id, uint64_t size) {
  if (size > kMaxObjectBytes)
    return Status(Errc::invalid_argument, fmt::format("truncate {} to {}: beyond the maximum "
                                                      "object size", object_name(id), size));
  auto file = acquire(id, true);
  if (!file) return file.status();
  int rc;
  do {
    rc = ::ftruncate((*file)->fd, static_cast<off_t>(size));
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) return Status::from_errno(errno, fmt::format("truncate {} to {}", object_name(id), size));
  return {};
}

Status DiskObjectStore::allocate(ObjectId id, uint64_t offset, uint64_t length, bool punch) {
  if (!range_ok(offset, length))
    return Status(Errc::invalid_argument,
                  fmt::format("allocate {} at offset {} length {}: beyond the maximum object size",
                              object_name(id), offset, length));
  if (length == 0 && punch) return {};
  auto file = acquire(id, !punch);
  if (!file) return file.status();
  if (!*file || length == 0) return {};
  const int mode = FALLOC_FL_KEEP_SIZE | (punch ? FALLOC_FL_PUNCH_HOLE : 0);
  int rc;
  do {
    rc = ::fallocate((*file)->fd, mode, static_cast<off_t>(offset), static_cast<off_t>(length));
  } while (rc != 0 && errno == EINTR);
  if (rc != 0)
    return Status::from_errno(errno, fmt::format("{} {} at offset {} length {}", punch ? "punch" : "allocate",
                                                 object_name(id), offset, length));
  return {};
}

Result<std::optional<uint64_t>> DiskObjectStore::seek(ObjectId id, uint64_t offset, bool hole) {
  if (offset > kMaxObjectBytes)
    return Status(Errc::invalid_argument, fmt::format("seek {} from {}: beyond the maximum object size",
                                                      object_name(id), offset));
  auto file = acquire(id, false);
  if (!file) return file.status();
  if (!*file) return hole ? std::optional<uint64_t>(offset) : std::nullopt;
  const off_t at = ::lseek((*file)->fd, static_cast<off_t>(offset), hole ? SEEK_HOLE : SEEK_DATA);
  if (at < 0) {
    // ENXIO: `offset` is at or past the end (SEEK_HOLE), or no data follows it.
    if (errno == ENXIO) return hole ? std::optional<uint64_t>(offset) : std::nullopt;
    return Status::from_errno(errno, fmt::format("seek {} from {}", object_name(id), offset));
  }
  return std::optional<uint64_t>(static_cast<uint64_t>(at));
}

Status DiskObjectStore::remove(ObjectId id) {
  const std::string path = object_path(id).string();
  std::lock_guard lock(mu_);
  if (auto it = cache_.find(id); it != cache_.end()) {
    lru_.erase(it->second.lru_pos);
    cache_.erase(it);
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    return Status::from_errno(errno, fmt::format("remove {} ({})", object_name(id), path));
  return {};
}

Status DiskObjectStore::fsync(ObjectId id) {
  auto file = acquire(id, false);
  if (!file) return file.status();
  if (!*file) return {};
  int rc;
  do {
    rc = ::fsync((*file)->fd);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) return Status::from_errno(errno, fmt::format("fsync {}", object_name(id)));
  return sync_entry(id, **file);
}

Result<ObjectStat> DiskObjectStore::stat(ObjectId id) {
  const std::string path = object_path(id).string();
  struct ::stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return Status::from_errno(errno, fmt::format("stat {} ({})", object_name(id), path));
    // Checked again under the lock: acquire() creates and caches under it.
    std::lock_guard lock(mu_);
    if (::stat(path.c_str(), &st) == 0)
      return ObjectStat{true, static_cast<uint64_t>(st.st_size), mtime_ns(st),
                        static_cast<uint64_t>(st.st_blocks)};
    if (auto it = cache_.find(id); it != cache_.end()) {
      lru_.erase(it->second.lru_pos);
      cache_.erase(it);
    }
    return ObjectStat{};
  }
  return ObjectStat{true, static_cast<uint64_t>(st.st_size), mtime_ns(st),
                    static_cast<uint64_t>(st.st_blocks)};
}

Result<StoreSpace> DiskObjectStore::space() {
  struct statvfs vfs {};
  if (::statvfs(data_dir_.c_str(), &vfs) != 0)
    return Status::from_errno(errno, fmt::format("statvfs {}", data_dir_.string()));
  // Blocks reserved for root (ext4's 5%) are neither ours to use nor used:
  // left out of the capacity, so df on the mount counts as used only what
  // is (as df does on the server's own file system).
  const uint64_t reserved = vfs.f_bfree > vfs.f_bavail ? vfs.f_bfree - vfs.f_bavail : 0;
  return StoreSpace{(static_cast<uint64_t>(vfs.f_blocks) - reserved) * vfs.f_frsize,
                    static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize};
}

Result<std::vector<ObjectId>> DiskObjectStore::list() {
  std::vector<ObjectId> out;
  for (unsigned sub = 0; sub < 256; ++sub) {
    const std::string dir = fmt::format("{}/{:02x}", objects_dir_, sub);
    DIR* d = ::opendir(dir.c_str());
    if (!d) {
      if (errno == ENOENT) continue;
      return Status::from_errno(errno, fmt::format("list {}", dir));
    }
    for (;;) {
      errno = 0;
      const dirent* e = ::readdir(d);
      if (!e) break;
      auto id = parse_object_name(e->d_name);
      // A file in the wrong fan-out directory is not one the store would open.
      if (id && (id->ino.value & 0xff) == sub) out.push_back(*id);
    }
    const int err = errno;
    ::closedir(d);
    if (err != 0) return Status::from_errno(err, fmt::format("list {}", dir));
  }
  return out;
}

Result<std::unique_ptr<ObjectStore>> ObjectStore::open(const std::filesystem::path& data_dir) {
  auto store = DiskObjectStore::open(data_dir);
  if (!store) return store.status();
  return std::unique_ptr<ObjectStore>(std::move(*store));
}

}  // namespace pvfs
