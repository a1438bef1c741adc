// FUSE callbacks on regular files: open, create, read, write, flush, fsync,
// fallocate, lseek (SEEK_DATA / SEEK_HOLE), release (with the unlocks a
// close implies under locks=cluster). fi->fh points to a
// FileHandle (fuse_bridge_internal.h) from the open reply until release.
// Callbacks, the work and the reply all run on the client's io thread.
#include "fs/fuse_bridge_internal.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <vector>

#include "fs/fuse_loop.h"
#include "shared/buffer.h"

namespace pvfs::fuse {
namespace {

// The open or create syscall was interrupted after the file was opened here:
// the kernel will never release this handle, so close it now.
void abandon(Bridge& b, fuse_file_info* info) {
  std::unique_ptr<FileHandle> handle = take_handle(info);
  asio::co_spawn(b.client().io(),
                 call(b.client(), &Client::release, std::move(handle->opener),
                      std::move(handle->file)),
                 asio::detached);
}

// `info` is a copy: libfuse's fuse_file_info lives only during the callback.
// A descriptor that appends bypasses the page cache: the kernel would put
// the bytes at the size it has cached, where another node may have
// appended already; pvfsmount asks the MDS where the end is instead
// (Client::write), and the kernel must not cache them elsewhere.
void prepare_open_reply(Bridge& b, fuse_file_info& info, std::shared_ptr<OpenFile> file,
                        Credentials opener) {
  const bool appends = (info.flags & O_APPEND) && (info.flags & O_ACCMODE) != O_RDONLY;
  info.direct_io = b.options().direct_io || appends;
  info.keep_cache = 0;  // close-to-open: revalidate cached pages at every open
  attach_handle(&info, std::move(file), std::move(opener));
}

// An open with O_TRUNC first removes the file's capabilities (`drop`; the
// MDS clears set-id bits as it truncates).
asio::awaitable<Result<std::shared_ptr<OpenFile>>> open(Bridge& b, Credentials who, fuse_ino_t ino, int flags,
                                                        bool drop) {
  if (drop) {
    if (Status st = co_await drop_privileges(b, who, ino, false); !st.ok()) co_return st;
  }
  co_return co_await b.client().open(who, InodeId(ino), flags);
}

void on_open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Bridge& b = bridge(req);
  Credentials who = b.credentials(req);
  const bool drop = (fi->flags & O_TRUNC) && privileges_to_drop(b, who, ino, false);
  b.spawn(req, "open", open(b, who, ino, fi->flags, drop),
          [&b, info = *fi, who, ino](fuse_req_t r, std::shared_ptr<OpenFile>& file) mutable {
            prepare_open_reply(b, info, std::move(file), std::move(who));
            // Before the reply: a read issued right after open() returns
            // must not use the size the kernel cached earlier.
            b.forget_cached_attributes(ino);
            if (fuse_reply_open(r, &info) != 0) abandon(b, &info);
          });
}

void on_create(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode,
               fuse_file_info* fi) {
  Bridge& b = bridge(req);
  Credentials who = b.credentials(req);
  b.spawn(req, "create",
          call(b.client(), &Client::create, who, InodeId(parent), std::string(name),
               static_cast<uint32_t>(mode), fi->flags),
          [&b, info = *fi, who](fuse_req_t r,
                                std::pair<Attr, std::shared_ptr<OpenFile>>& created) mutable {
            fuse_entry_param e = b.entry(created.first);
            prepare_open_reply(b, info, std::move(created.second), std::move(who));
            if (fuse_reply_create(r, &e, &info) != 0) abandon(b, &info);
          });
}

void on_read(fuse_req_t req, fuse_ino_t, size_t size, off_t offset, fuse_file_info* fi) {
  Bridge& b = bridge(req);
  if (offset < 0) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  if (size == 0) {
    fuse_reply_buf(req, nullptr, 0);
    return;
  }
  FileHandle& h = handle_of(fi);
  b.spawn(req, "read",
          call_file(b.client(), &Client::read_buffers, b.credentials(req, h), h.file,
                    static_cast<uint64_t>(offset), size),
          [&b](fuse_req_t r, const ReadData& data) {
            // The kernel copies straight from the replies' buffers.
            std::vector<iovec> parts;
            parts.reserve(data.buffers.size());
            for (const Buffer& piece : data.buffers) {
              parts.push_back({const_cast<std::byte*>(piece.data()), piece.size()});
              b.client().mount_stats().bytes_read += piece.size();
            }
            fuse_reply_iov(r, parts.data(), static_cast<int>(parts.size()));
          });
}

// `request` owns the bytes `data` points into: the buffer the FUSE loop read
// the request into (fs/fuse_loop.h), kept until the write has been sent (by
// this frame's copy, or by the client's until a write behind has ended).
// Privileges are dropped first when `drop` (fs/fuse_bridge_privileges.cc);
// such a write, and an O_DIRECT one (`direct`: its caller expects the
// servers to have the data), never goes behind (pvfsmount(8) write_behind).
struct PrivilegeDrop {
  bool needed = false;
  bool kill_setid = false;
};
asio::awaitable<Result<size_t>> write_from_request(Bridge& b, Credentials who, fuse_ino_t ino,
                                                   std::shared_ptr<OpenFile> file, uint64_t offset,
                                                   std::shared_ptr<Buffer> request,
                                                   std::span<const std::byte> data, PrivilegeDrop drop,
                                                   bool direct) {
  if (drop.needed) {
    if (Status st = co_await drop_privileges(b, who, ino, drop.kill_setid); !st.ok()) co_return st;
  } else if (!direct) {
    co_return co_await b.client().write_behind(who, std::move(file), offset, data, std::move(request));
  }
  co_return co_await b.client().write(who, *file, offset, data);
}

// `offset` is where the bytes go, except on a descriptor opened O_APPEND,
// whose bytes go where the MDS says the end is (Client::write).
void on_write(fuse_req_t req, fuse_ino_t ino, const char* buf, size_t size, off_t offset,
              fuse_file_info* fi) {
  Bridge& b = bridge(req);
  if (offset < 0) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  std::shared_ptr<Buffer> request = keep_request_buffer();
  PVFS_CHECK(request != nullptr);
  std::span<const std::byte> data(reinterpret_cast<const std::byte*>(buf), size);
  FileHandle& h = handle_of(fi);
  Credentials who = b.credentials(req, h);
  PrivilegeDrop drop;
  drop.kill_setid = current_write_kills_setid();
  drop.needed = privileges_to_drop(b, who, ino, drop.kill_setid);
  b.spawn(req, "write",
          write_from_request(b, std::move(who), ino, h.file, static_cast<uint64_t>(offset), std::move(request),
                             data, drop, (fi->flags & O_DIRECT) != 0),
          [&b](fuse_req_t r, size_t written) {
            b.client().mount_stats().bytes_written += written;
            fuse_reply_write(r, written);
          });
}

// Publishes size and mtime, then (locks=cluster) drops the POSIX locks of
// the closing process: any close(2) of the file ends them, as POSIX says.
asio::awaitable<Status> flush_and_unlock(Client& client, Credentials who, std::shared_ptr<OpenFile> file,
                                         InodeId ino, std::optional<uint64_t> lock_owner) {
  Status st = co_await client.flush(who, *file);
  if (lock_owner) {
    std::vector<uint64_t> owners(1, *lock_owner);
    co_await release_locks(client, who, ino, std::move(owners));
  }
  co_return st;
}

// Called at every close() of a descriptor: publishes size and mtime so that
// the next open anywhere sees them (close-to-open).
void on_flush(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Bridge& b = bridge(req);
  FileHandle& h = handle_of(fi);
  std::optional<uint64_t> owner;
  if (b.options().cluster_locks) {
    owner = fi->lock_owner;
    h.lock_owners.erase(fi->lock_owner);
  }
  b.spawn(req, "flush", flush_and_unlock(b.client(), b.credentials(req, h), h.file, InodeId(ino), owner));
}

// fdatasync gets the same full fsync: the size is metadata it must make
// durable too, and the MDS syncs a whole file set at once anyway.
void on_fsync(fuse_req_t req, fuse_ino_t, int /*datasync*/, fuse_file_info* fi) {
  Bridge& b = bridge(req);
  FileHandle& h = handle_of(fi);
  b.spawn(req, "fsync", call_file(b.client(), &Client::fsync, b.credentials(req, h), h.file));
}

void on_fallocate(fuse_req_t req, fuse_ino_t, int mode, off_t offset, off_t length,
                  fuse_file_info* fi) {
  Bridge& b = bridge(req);
  Client::Falloc how;
  if (mode == 0) how = Client::Falloc::allocate;
  else if (mode == FALLOC_FL_KEEP_SIZE) how = Client::Falloc::keep_size;
  else if (mode == (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)) how = Client::Falloc::punch;
  else {
    fuse_reply_err(req, EOPNOTSUPP);
    return;
  }
  if (offset < 0 || length <= 0) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  FileHandle& h = handle_of(fi);
  b.spawn(req, "fallocate",
          call_file(b.client(), &Client::fallocate, b.credentials(req, h), h.file,
                    static_cast<uint64_t>(offset), static_cast<uint64_t>(length), how));
}

// Only SEEK_DATA and SEEK_HOLE come here; the kernel does the others.
void on_lseek(fuse_req_t req, fuse_ino_t, off_t offset, int whence, fuse_file_info* fi) {
  Bridge& b = bridge(req);
  if (whence != SEEK_DATA && whence != SEEK_HOLE) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  if (offset < 0) {
    fuse_reply_err(req, ENXIO);
    return;
  }
  FileHandle& h = handle_of(fi);
  b.spawn(req, "lseek",
          call_file(b.client(), &Client::seek, b.credentials(req, h), h.file, static_cast<uint64_t>(offset),
                    whence == SEEK_HOLE),
          [](fuse_req_t r, const std::optional<uint64_t>& found) {
            if (found) fuse_reply_lseek(r, static_cast<off_t>(*found));
            else fuse_reply_err(r, ENXIO);
          });
}

// Drops the locks this description's owners still hold, then closes it.
asio::awaitable<Status> unlock_and_release(Client& client, Credentials who, std::shared_ptr<OpenFile> file,
                                           InodeId ino, std::vector<uint64_t> owners) {
  if (!owners.empty()) co_await release_locks(client, who, ino, std::move(owners));
  co_return co_await client.release(who, std::move(file));
}

// The last request on this handle: the kernel has had every other reply.
void on_release(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Bridge& b = bridge(req);
  std::unique_ptr<FileHandle> handle = take_handle(fi);
  Credentials who = b.credentials(req, *handle);
  std::vector<uint64_t> owners(handle->lock_owners.begin(), handle->lock_owners.end());
  if (b.options().cluster_locks && fi->flock_release && !handle->lock_owners.contains(fi->lock_owner))
    owners.push_back(fi->lock_owner);
  b.spawn(req, "release",
          unlock_and_release(b.client(), std::move(who), std::move(handle->file), InodeId(ino), std::move(owners)));
}

}  // namespace

void add_file_ops(fuse_lowlevel_ops& ops) {
  ops.open = on_open;
  ops.create = on_create;
  ops.read = on_read;
  ops.write = on_write;
  ops.flush = on_flush;
  ops.fsync = on_fsync;
  ops.fallocate = on_fallocate;
  ops.lseek = on_lseek;
  ops.release = on_release;
}

}  // namespace pvfs::fuse
