// FUSE callbacks on directories and names: mknod, mkdir, symlink, link,
// unlink, rmdir, rename, listing (opendir, readdir, readdirplus), fsyncdir.
// Listings are stateless here: the offset the kernel passes back is "." = 1,
// ".." = 2, or the cookie of the last entry it received (the client keeps
// what it fetched ahead, fs/listing_ahead.h).
// Callbacks, work and reply all run on the client's io thread.
#include "fs/fuse_bridge_internal.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <string>

namespace pvfs::fuse {
namespace {

void reply_entry(Bridge& b, fuse_req_t req, const Attr& attr) {
  fuse_entry_param e = b.entry(attr);
  fuse_reply_entry(req, &e);
}

void on_mknod(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode, dev_t rdev) {
  Bridge& b = bridge(req);
  b.spawn(req, "mknod",
          call(b.client(), &Client::mknod, b.credentials(req), InodeId(parent), std::string(name),
               static_cast<uint32_t>(mode), static_cast<uint32_t>(rdev)),
          [&b](fuse_req_t r, const Attr& attr) { reply_entry(b, r, attr); });
}

void on_mkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t mode) {
  Bridge& b = bridge(req);
  b.spawn(req, "mkdir",
          call(b.client(), &Client::mkdir, b.credentials(req), InodeId(parent), std::string(name),
               static_cast<uint32_t>(mode)),
          [&b, parent, name = std::string(name)](fuse_req_t r, const Attr& attr) {
            b.remember_dir(attr, parent, name);
            reply_entry(b, r, attr);
          });
}

void on_symlink(fuse_req_t req, const char* target, fuse_ino_t parent, const char* name) {
  Bridge& b = bridge(req);
  b.spawn(req, "symlink",
          call(b.client(), &Client::symlink, b.credentials(req), InodeId(parent), std::string(name),
               std::string(target)),
          [&b](fuse_req_t r, const Attr& attr) { reply_entry(b, r, attr); });
}

void on_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t new_parent, const char* new_name) {
  Bridge& b = bridge(req);
  b.spawn(req, "link",
          call(b.client(), &Client::link, b.credentials(req), InodeId(ino), InodeId(new_parent),
               std::string(new_name)),
          [&b](fuse_req_t r, const Attr& attr) { reply_entry(b, r, attr); });
}

void on_unlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  Bridge& b = bridge(req);
  b.spawn(req, "unlink",
          call(b.client(), &Client::unlink, b.credentials(req), InodeId(parent),
               std::string(name)));
}

void on_rmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  Bridge& b = bridge(req);
  b.spawn(req, "rmdir",
          call(b.client(), &Client::rmdir, b.credentials(req), InodeId(parent),
               std::string(name)));
}

void on_rename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t new_parent,
               const char* new_name, unsigned int flags) {
  Bridge& b = bridge(req);
  uint32_t pvfs_flags = 0;
  if (flags & RENAME_NOREPLACE) pvfs_flags |= kRenameNoReplace;
  if (flags & RENAME_EXCHANGE) pvfs_flags |= kRenameExchange;
  if ((flags & ~unsigned{RENAME_NOREPLACE | RENAME_EXCHANGE}) != 0 ||
      pvfs_flags == (kRenameNoReplace | kRenameExchange)) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  b.spawn(req, "rename",
          call(b.client(), &Client::rename, b.credentials(req), InodeId(parent), std::string(name),
               InodeId(new_parent), std::string(new_name), pvfs_flags));
}

// Listings need no per-open state: every readdir names its position. The
// open only asks the MDS whether the directory still exists (ESTALE makes
// the kernel look its name up again: another client may have replaced it).
asio::awaitable<void> opendir_and_reply(Bridge& b, fuse_req_t req, Credentials who, fuse_ino_t ino,
                                        fuse_file_info info) {
  Status st = co_await b.client().opendir(who, InodeId(ino));
  if (!st.ok()) {
    reply_error(req, "opendir", st);
    co_return;
  }
  info.fh = 0;
  fuse_reply_open(req, &info);
}

void on_opendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Bridge& b = bridge(req);
  b.spawn_replying(req, "opendir", opendir_and_reply(b, req, b.credentials(req), ino, *fi));
}

void on_releasedir(fuse_req_t req, fuse_ino_t, fuse_file_info*) { fuse_reply_err(req, 0); }

// Returns once the directory's entries (and the rest of its file set) are
// on the MDS's disk.
void on_fsyncdir(fuse_req_t req, fuse_ino_t ino, int, fuse_file_info*) {
  Bridge& b = bridge(req);
  b.spawn(req, "fsyncdir", call(b.client(), &Client::fsync_dir, b.credentials(req), InodeId(ino)));
}

constexpr uint64_t kDotOffset = 1;     // offset after "."
constexpr uint64_t kDotDotOffset = 2;  // offset after ".."

// Smallest encoded entry (header plus an 8-byte name): enough entries to
// fill the kernel's buffer are asked for in one page.
constexpr size_t kMinDirentBytes = 24 + 8;
constexpr size_t kMinDirentPlusBytes = 128 + 24 + 8;

// Encodes entries into a buffer of the kernel's size. An entry that does not
// fit is left for the next call, which starts after the last one that did.
class ListingBuffer {
 public:
  ListingBuffer(Bridge& b, fuse_req_t req, size_t size, bool plus)
      : bridge_(b), req_(req), plus_(plus), bytes_(size, '\0') {}

  // Adds one entry; `attr` (readdirplus only) lets the kernel skip a lookup,
  // for the cache timeouts less `age_s`, how long ago the MDS read it.
  // `next` is the offset of the following entry. False when it did not fit.
  bool add(const std::string& name, InodeId ino, uint32_t mode, const Attr* attr, uint64_t next,
           double age_s = 0) {
    char* at = bytes_.data() + used_;
    size_t room = bytes_.size() - used_;
    size_t need;
    const auto off = static_cast<off_t>(next);
    if (plus_) {
      fuse_entry_param e{};
      if (attr) {
        e = bridge_.entry(*attr);
        e.attr_timeout = std::max(0.0, e.attr_timeout - age_s);
        e.entry_timeout = std::max(0.0, e.entry_timeout - age_s);
      } else {
        // ino 0: the kernel lists the name but does not instantiate an inode.
        e.attr.st_ino = ino.value;
        e.attr.st_mode = mode;
      }
      need = fuse_add_direntry_plus(req_, at, room, name.c_str(), &e, off);
    } else {
      struct stat st {};
      st.st_ino = ino.value;
      st.st_mode = mode;
      need = fuse_add_direntry(req_, at, room, name.c_str(), &st, off);
    }
    if (need > room) return false;
    used_ += need;
    return true;
  }

  bool empty() const { return used_ == 0; }
  // The encoded entries; the buffer is spent afterwards.
  std::string take() {
    bytes_.resize(used_);
    return std::move(bytes_);
  }

 private:
  Bridge& bridge_;
  fuse_req_t req_;
  bool plus_;
  std::string bytes_;
  size_t used_ = 0;
};

// Lists `dir` from `offset` into at most `size` bytes of encoded entries.
// Pages are fetched until the buffer is full or the directory ends.
asio::awaitable<Result<std::string>> list_directory(Bridge& b, fuse_req_t req, Credentials who,
                                                    InodeId dir, size_t size, uint64_t offset,
                                                    bool plus) {
  ListingBuffer out(b, req, size, plus);
  bool full = false;
  // The kernel ignores d_ino of ".."; the directory's own number is a valid stand-in.
  if (offset < kDotOffset) full = !out.add(".", dir, S_IFDIR, nullptr, kDotOffset);
  if (!full && offset < kDotDotOffset) full = !out.add("..", dir, S_IFDIR, nullptr, kDotDotOffset);

  uint64_t cookie = offset <= kDotDotOffset ? 0 : offset;
  const size_t min_entry_bytes = plus ? kMinDirentPlusBytes : kMinDirentBytes;
  const auto max_entries = static_cast<uint32_t>(std::max<size_t>(1, size / min_entry_bytes));
  while (!full) {
    Result<ReaddirPage> page = co_await b.client().readdir(who, dir, cookie, max_entries, plus);
    if (!page.ok()) {
      // Entries already encoded go out; the next call retries from there.
      if (out.empty()) co_return page.status();
      break;
    }
    const double age_s = std::chrono::duration<double>(page->attr_age).count();
    for (const DirEntry& e : page->entries) {
      if (!out.add(e.name, e.ino, e.mode, e.attr ? &*e.attr : nullptr, e.cookie, age_s)) {
        full = true;
        break;
      }
      if (plus && e.attr) b.remember_dir(*e.attr, dir.value, e.name);
      cookie = e.cookie;
    }
    if (page->eof || full) break;
    if (page->entries.empty()) {
      // Nothing and not the end breaks the client's contract; an empty reply
      // would read as the end of the directory, so fail loudly instead.
      if (out.empty()) co_return Status(Errc::io, "empty readdir page before the end");
      break;
    }
  }
  co_return out.take();
}

void list(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, bool plus) {
  Bridge& b = bridge(req);
  if (offset < 0) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  b.spawn(req, plus ? "readdirplus" : "readdir",
          list_directory(b, req, b.credentials(req), InodeId(ino), size,
                         static_cast<uint64_t>(offset), plus),
          [](fuse_req_t r, const std::string& bytes) {
            fuse_reply_buf(r, bytes.data(), bytes.size());
          });
}

void on_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info*) {
  list(req, ino, size, offset, false);
}

void on_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info*) {
  list(req, ino, size, offset, true);
}

}  // namespace

void add_dir_ops(fuse_lowlevel_ops& ops) {
  ops.mknod = on_mknod;
  ops.mkdir = on_mkdir;
  ops.symlink = on_symlink;
  ops.link = on_link;
  ops.unlink = on_unlink;
  ops.rmdir = on_rmdir;
  ops.rename = on_rename;
  ops.opendir = on_opendir;
  ops.readdir = on_readdir;
  ops.readdirplus = on_readdirplus;
  ops.releasedir = on_releasedir;
  ops.fsyncdir = on_fsyncdir;
}

}  // namespace pvfs::fuse
