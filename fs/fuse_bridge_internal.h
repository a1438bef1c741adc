// Internals shared by the bridge's files (fuse_bridge.cc, fuse_bridge_file.cc,
// fuse_bridge_dir.cc): the per-mount Bridge object libfuse hands to every
// callback, open-file handles, attribute conversion, and spawn(), which runs
// the work on the client's io thread and sends the one reply. Not a public
// header: only the bridge's own .cc files include it (it pulls in libfuse).
#pragma once


#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <sys/stat.h>

#include <exception>
#include <memory>
#include <set>
#include <unordered_map>
#include <utility>

#include <spdlog/spdlog.h>

#include "fs/caller_cache.h"
#include "fs/client.h"
#include "fs/fuse_bridge.h"
#include "fs/fuse_invalidator.h"
#include "fs/job_id.h"
#include "fs/xattr_absence.h"

namespace pvfs::fuse {

// The largest read or write the kernel sends in one request.
inline constexpr uint32_t kMaxTransferBytes = 1u << 20;

// What fi->fh points to from open/create until release. Requests on the
// handle use the opener's identity: the kernel sends writeback and release
// without one, and permission was checked at open.
struct FileHandle {
  std::shared_ptr<OpenFile> file;
  Credentials opener;
  // Lock owners that locked through this open file description
  // (locks=cluster): an OFD lock's owner is the description, and the
  // kernel sends no unlock for it at the last close, so release() drops
  // what these owners still hold (fuse_bridge_lock.cc).
  std::set<uint64_t> lock_owners;
};

// Stores a new handle in fi->fh; the caller replies, then release() frees it.
void attach_handle(fuse_file_info* fi, std::shared_ptr<OpenFile> file, Credentials opener);
// The handle behind fi->fh (valid from attach_handle until take_handle).
FileHandle& handle_of(const fuse_file_info* fi);
// Takes ownership back from fi->fh (in release, or when an open reply failed).
std::unique_ptr<FileHandle> take_handle(fuse_file_info* fi);

// Full attributes as the kernel wants them: st_blksize is the stripe size
// (4096 for non-files), st_blocks is what the MDS recorded the servers had
// allocated (Attr::blocks), or 512-byte units of the size when it has none.
struct stat to_stat(const Attr& attr);

// Replies with the errno for `status` (which must not be ok) and logs it.
void reply_error(fuse_req_t req, const char* op, const Status& status);

// A coroutine that owns copies of everything a client call needs. The
// client's methods take references, and the callback's locals are gone
// before the work runs on the io thread.
template <typename R, typename... Params, typename... Args>
asio::awaitable<R> call(Client& client,
                        asio::awaitable<R> (Client::*method)(const Credentials&, Params...),
                        Credentials who, Args... args) {
  co_return co_await (client.*method)(who, std::move(args)...);
}

// The same for calls on an open file.
template <typename R, typename... Params, typename... Args>
asio::awaitable<R> call_file(
    Client& client, asio::awaitable<R> (Client::*method)(const Credentials&, OpenFile&, Params...),
    Credentials who, std::shared_ptr<OpenFile> file, Args... args) {
  co_return co_await (client.*method)(who, *file, std::move(args)...);
}

// Counts one operation in the mount's stats (pvfs-ctl client) when it is
// answered: from the callback to the reply.
struct OpTimer {
  MountStats& stats;
  const char* op;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  void done(bool failed) const { stats.op(op, failed, std::chrono::steady_clock::now() - started); }
};

// The reply a request is owed. Passed by value to the coroutine that
// answers it, so it lives in that coroutine's frame from the moment the
// work is spawned, before it first runs. Work that ends without having
// replied, because it threw or because the mount stopped while it waited
// or before it started (pvfsmount unwinds such work on its way out),
// answers EIO as it goes: the caller gets an error rather than a hang, and
// libfuse frees the request.
class OwedReply {
 public:
  explicit OwedReply(fuse_req_t req) : req_(req) {}
  OwedReply(OwedReply&& other) noexcept : req_(std::exchange(other.req_, nullptr)) {}
  OwedReply& operator=(OwedReply&&) = delete;
  ~OwedReply() {
    if (req_) fuse_reply_err(req_, EIO);
  }
  fuse_req_t req() const { return req_; }
  // The reply has been sent.
  void paid() { req_ = nullptr; }

 private:
  fuse_req_t req_;
};

// Awaits `work` and sends its reply: reply(req, value) on success, the
// mapped errno otherwise. reply() must send exactly one fuse_reply_* and
// send it last, so that an exception before it still gets EIO.
template <typename T, typename Reply>
asio::awaitable<void> finish(OwedReply owed, const char* op, asio::awaitable<Result<T>> work, Reply reply,
                             OpTimer timer) {
  const fuse_req_t req = owed.req();
  Result<T> result = co_await std::move(work);
  timer.done(!result.ok());
  if (!result.ok()) {
    reply_error(req, op, result.status());
    owed.paid();
    co_return;
  }
  reply(req, result.value());
  owed.paid();
}

// Replies 0 or the mapped errno.
asio::awaitable<void> finish_status(OwedReply owed, const char* op, asio::awaitable<Status> work, OpTimer timer);
// Awaits `work`, which replies to the request itself, last.
asio::awaitable<void> finish_replying(OwedReply owed, asio::awaitable<void> work, OpTimer timer);

// State of one mount; libfuse's userdata. Callbacks, the work they start and
// the replies all run on the client's io thread (fs/fuse_loop.h), which owns
// this object once the session exists (set_session).
class Bridge {
 public:
  Bridge(Client& client, JobIdCache& jobs, const FuseMountParams& params);

  Client& client() { return client_; }
  const MountOptions& options() const { return params_.options; }
  double attr_timeout_s() const { return params_.attr_timeout_s; }

  // Identity of the process behind `req`: uid, gid, pid, supplementary
  // groups (from /proc, empty if unreadable), job id and a new request id.
  // Groups and job id come from /proc at most once a second per thread
  // (CallerCache).
  Credentials credentials(fuse_req_t req);
  // For a request on an open file: the opener's identity with this
  // request's pid (when the kernel gives one) and a new request id.
  Credentials credentials(fuse_req_t req, const FileHandle& handle);

  // Absent security.* and system.posix_acl_* xattrs, remembered for the
  // attribute timeout (fs/xattr_absence.h).
  XattrAbsence& xattr_absence() { return xattr_absence_; }

  // Takes note of what `attr` says beyond the attributes (no security.*
  // xattrs) and whether it is a set-id file.
  void learn(const Attr& attr);
  // Mode and group of `ino` if it was last seen as a regular file with
  // S_ISUID or S_ISGID.
  struct SetidFile {
    uint32_t mode = 0, gid = 0;
  };
  const SetidFile* setid_file(fuse_ino_t ino) const {
    auto it = setid_files_.find(ino);
    return it == setid_files_.end() ? nullptr : &it->second;
  }
  // A lookup reply for `attr` with the mount's timeouts (and learn(attr)).
  fuse_entry_param entry(const Attr& attr);

  // Close-to-open: before an open is answered, drop the kernel's cached
  // attributes of `ino` so the next read or stat sees the size and mtime the
  // open fetched from the MDS (another client may have written meanwhile).
  // Only attributes, never pages: the kernel takes no inode or page lock for
  // it, so it is safe while a request on the inode is in flight.
  void forget_cached_attributes(fuse_ino_t ino) {
    if (session_) fuse_lowlevel_notify_inval_inode(session_, ino, -1, 0);
  }
  // Makes the kernel drop the cached pages and attributes of `ino`, from
  // the invalidator's thread (the kernel may wait for reads this io thread
  // serves meanwhile), and returns once it has: a lock just granted then
  // reads what the previous holder wrote on another node.
  asio::awaitable<void> forget_cached_pages(fuse_ino_t ino);
  // Set once after fuse_session_new, before any request arrives. Starts
  // forgetting the entries the client reports replaced (file sets made).
  void set_session(fuse_session* session);
  // Stops sending notifications: before the session is destroyed.
  void stop_notifications() { invalidator_.stop(); }

  // Where the kernel has each directory it was handed (by lookup, mkdir
  // or readdirplus): its parent and name. When the MDS says a directory is
  // gone, removed or replaced by another client while the kernel had it
  // cached, forget_stale_dir() makes the kernel forget that entry, so its
  // next path walk looks the name up again. The kernel repeats most calls
  // that meet a stale directory by itself, but not mkdir, mknod, symlink
  // and link, which would otherwise fail with ESTALE until the entry
  // timeout ran out. Bounded: all forgotten at once past kMaxDirNames (such
  // a directory stays stale only for the entry timeout).
  void remember_dir(const Attr& attr, fuse_ino_t parent, std::string_view name);
  // Returns once the kernel has forgotten the entry, so that a call the
  // kernel does not repeat finds the new directory when tried again.
  asio::awaitable<void> forget_stale_dir(fuse_ino_t dir);
  static constexpr size_t kMaxDirNames = 65536;

  // Runs `work` on the client's io thread (this thread); its end sends the reply.
  template <typename T, typename Reply>
  void spawn(fuse_req_t req, const char* op, asio::awaitable<Result<T>> work, Reply reply) {
    asio::co_spawn(client_.io(), finish(OwedReply(req), op, std::move(work), std::move(reply), OpTimer{client_.mount_stats(), op}),
                   [op](std::exception_ptr e) { on_exception(op, e); });
  }
  void spawn(fuse_req_t req, const char* op, asio::awaitable<Status> work) {
    asio::co_spawn(client_.io(), finish_status(OwedReply(req), op, std::move(work), OpTimer{client_.mount_stats(), op}),
                   [op](std::exception_ptr e) { on_exception(op, e); });
  }
  // Runs `work`, which sends the reply itself.
  void spawn_replying(fuse_req_t req, const char* op, asio::awaitable<void> work) {
    asio::co_spawn(client_.io(), finish_replying(OwedReply(req), std::move(work), OpTimer{client_.mount_stats(), op}),
                   [op](std::exception_ptr e) { on_exception(op, e); });
  }

 private:
  // A coroutine threw: a bug or out of memory. Logs it (its OwedReply
  // answered EIO).
  static void on_exception(const char* op, std::exception_ptr e);

  Client& client_;
  JobIdCache& jobs_;
  CallerCache callers_;
  const FuseMountParams params_;
  XattrAbsence xattr_absence_;
  std::unordered_map<uint64_t, SetidFile> setid_files_;
  std::unordered_map<fuse_ino_t, std::pair<fuse_ino_t, std::string>> dir_names_;
  fuse_session* session_ = nullptr;
  EntryInvalidator invalidator_;
  // Request ids: a random tag of this mount in the top 24 bits, so ids
  // from different clients differ in the daemons' logs, then a count.
  uint64_t next_request_id_;
};

inline Bridge& bridge(fuse_req_t req) { return *static_cast<Bridge*>(fuse_req_userdata(req)); }

// Fill in the callbacks of each part of the bridge.
void add_inode_ops(fuse_lowlevel_ops& ops);  // fuse_bridge.cc
void add_file_ops(fuse_lowlevel_ops& ops);   // fuse_bridge_file.cc
void add_dir_ops(fuse_lowlevel_ops& ops);    // fuse_bridge_dir.cc
void add_lock_ops(fuse_lowlevel_ops& ops);   // fuse_bridge_lock.cc (locks=cluster)
// With FUSE_HANDLE_KILLPRIV_V2 (fs/fuse_loop.h) the kernel leaves to the
// file system what it used to do before a write or truncation: remove the
// file's capabilities (security.capability), and on a write by a caller
// without CAP_FSETID (`kill_setid`) clear S_ISUID, and S_ISGID unless the
// file is not group-executable and the caller is in its group. Whether
// there may be anything to do, from what the mount knows of the inode
// (cheap: a write asks it). fs/fuse_bridge_privileges.cc.
bool privileges_to_drop(Bridge& b, const Credentials& who, fuse_ino_t ino, bool kill_setid);
// Does it, as `who`, before the write or truncation proceeds.
asio::awaitable<Status> drop_privileges(Bridge& b, Credentials who, fuse_ino_t ino, bool kill_setid);

// Drops the locks of the owners recorded on `handle` (at release) and of
// `owner` (at flush, for POSIX locks: any close drops the process's
// locks). Best effort: a failure is logged, the locks lapse with the lease.
asio::awaitable<void> release_locks(Client& client, Credentials who, InodeId ino, std::vector<uint64_t> owners);

}  // namespace pvfs::fuse
