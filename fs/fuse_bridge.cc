// The FUSE session (mount, serve, unmount), the init negotiation, the shared
// helpers of fuse_bridge_internal.h, and the callbacks on inodes: lookup,
// forget, attributes, symlink targets, access, statfs and xattrs. File and
// directory callbacks live in fuse_bridge_file.cc and fuse_bridge_dir.cc.
// Callbacks run on the client's io thread (fs/fuse_loop.h) and only convert,
// spawn and reply.
#include "fs/fuse_bridge_internal.h"
#include "fs/fuse_loop.h"

#include <sys/statvfs.h>
#include <sys/xattr.h>

#include <csignal>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <random>
#include <cerrno>
#include <string>
#include <vector>

namespace pvfs {
namespace fuse {

// ---- helpers -------------------------------------------------------------

void attach_handle(fuse_file_info* fi, std::shared_ptr<OpenFile> file, Credentials opener) {
  auto* handle = new FileHandle{std::move(file), std::move(opener), {}};
  fi->fh = reinterpret_cast<uintptr_t>(handle);
}

FileHandle& handle_of(const fuse_file_info* fi) {
  PVFS_CHECK(fi != nullptr && fi->fh != 0);
  return *reinterpret_cast<FileHandle*>(static_cast<uintptr_t>(fi->fh));
}

std::unique_ptr<FileHandle> take_handle(fuse_file_info* fi) {
  std::unique_ptr<FileHandle> handle(&handle_of(fi));
  fi->fh = 0;
  return handle;
}

struct stat to_stat(const Attr& attr) {
  struct stat st {};
  st.st_ino = attr.ino.value;
  st.st_mode = attr.mode;
  st.st_nlink = attr.nlink;
  st.st_uid = attr.uid;
  st.st_gid = attr.gid;
  st.st_rdev = attr.rdev;
  st.st_size = static_cast<off_t>(attr.size);
  st.st_blksize = attr.layout.stripe_size > 0 && S_ISREG(attr.mode)
                      ? static_cast<blksize_t>(attr.layout.stripe_size)
                      : 4096;
  st.st_blocks = static_cast<blkcnt_t>(attr.blocks.value_or((attr.size + 511) / 512));
  st.st_atim = {attr.atime.sec, attr.atime.nsec};
  st.st_mtim = {attr.mtime.sec, attr.mtime.nsec};
  st.st_ctim = {attr.ctime.sec, attr.ctime.nsec};
  return st;
}

void reply_error(fuse_req_t req, const char* op, const Status& status) {
  int err = errc_to_errno(status.code());
  if (err == 0) err = EIO;  // an ok Status here is a bug upstream; never reply success by accident
  spdlog::debug("{}: {}", op, status.to_string());
  fuse_reply_err(req, err);
}

asio::awaitable<void> finish_status(OwedReply owed, const char* op, asio::awaitable<Status> work, OpTimer timer) {
  const fuse_req_t req = owed.req();
  Status status = co_await std::move(work);
  timer.done(!status.ok());
  if (!status.ok()) {
    reply_error(req, op, status);
    owed.paid();
    co_return;
  }
  fuse_reply_err(req, 0);
  owed.paid();
}

asio::awaitable<void> finish_replying(OwedReply owed, asio::awaitable<void> work, OpTimer timer) {
  co_await std::move(work);
  owed.paid();
  timer.done(false);
}

void Bridge::on_exception(const char* op, std::exception_ptr e) {
  if (!e) return;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    spdlog::error("{}: unexpected exception: {}", op, ex.what());
  } catch (...) {
    spdlog::error("{}: unexpected exception", op);
  }
}

Bridge::Bridge(Client& client, JobIdCache& jobs, const FuseMountParams& params)
    : client_(client), jobs_(jobs), params_(params),
      xattr_absence_(std::chrono::duration_cast<XattrAbsence::Clock::duration>(
          std::chrono::duration<double>(params.attr_timeout_s))),
      next_request_id_((std::random_device{}() & uint64_t{0xffffff}) << 40) {}

asio::awaitable<void> Bridge::forget_cached_pages(fuse_ino_t ino) {
  if (!session_) co_return;
  auto done = std::make_shared<asio::steady_timer>(client_.io(), asio::steady_timer::time_point::max());
  asio::io_context& io = client_.io();
  invalidator_.post_pages(ino, [done, &io] { asio::post(io, [done] { done->cancel(); }); });
  asio::error_code ec;
  co_await done->async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

void Bridge::set_session(fuse_session* session) {
  session_ = session;
  invalidator_.start(session);
  client_.on_entry_replaced([this](InodeId parent, const std::string& name) {
    invalidator_.post(parent.value, name);
  });
}

void Bridge::remember_dir(const Attr& attr, fuse_ino_t parent, std::string_view name) {
  if (!S_ISDIR(attr.mode)) return;
  if (dir_names_.size() >= kMaxDirNames) dir_names_.clear();
  dir_names_.insert_or_assign(attr.ino.value, std::make_pair(parent, std::string(name)));
}

asio::awaitable<void> Bridge::forget_stale_dir(fuse_ino_t dir) {
  auto it = dir_names_.find(dir);
  if (it == dir_names_.end() || !session_) co_return;
  const auto [parent, name] = std::move(it->second);
  dir_names_.erase(it);
  auto done = std::make_shared<asio::steady_timer>(client_.io(), asio::steady_timer::time_point::max());
  asio::io_context& io = client_.io();
  invalidator_.post(parent, name, [done, &io] { asio::post(io, [done] { done->cancel(); }); });
  asio::error_code ec;
  co_await done->async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

Credentials Bridge::credentials(fuse_req_t req) {
  const fuse_ctx* ctx = fuse_req_ctx(req);
  Credentials who;
  who.caller.uid = ctx->uid;
  who.caller.gid = ctx->gid;
  who.pid = static_cast<uint32_t>(ctx->pid);
  who.request_id = ++next_request_id_;
  const auto now = CallerCache::Clock::now();
  if (const CallerInfo* known = callers_.find(who.pid, ctx->uid, ctx->gid, now)) {
    who.caller.groups = known->groups;
    who.job_id = known->job_id;
    who.iostep_bytes = known->iostep_bytes;
    who.qos_runtime_ms = known->qos_runtime_ms;
    return who;
  }
  // The kernel gives the thread id; the job id belongs to its process, so
  // a new thread of a known process reads no environment.
  uint32_t process = who.pid;
  if (auto status = read_thread_status("/proc", who.pid)) {
    process = status->tgid;
    who.caller.groups = std::move(status->groups);
  }
  JobInfo job = jobs_.job_info(process, who.caller.uid);
  who.job_id = std::move(job.id);
  who.iostep_bytes = job.iostep_bytes;
  who.qos_runtime_ms = job.qos_runtime_ms;
  // pid 0 is the kernel itself (writeback): nothing to remember.
  if (who.pid != 0)
    callers_.store(who.pid, ctx->uid, ctx->gid, {who.caller.groups, who.job_id, who.iostep_bytes, who.qos_runtime_ms}, now);
  return who;
}

Credentials Bridge::credentials(fuse_req_t req, const FileHandle& handle) {
  Credentials who = handle.opener;
  if (pid_t pid = fuse_req_ctx(req)->pid; pid != 0) who.pid = static_cast<uint32_t>(pid);
  who.request_id = ++next_request_id_;
  return who;
}

void Bridge::learn(const Attr& attr) {
  if (attr.no_security_xattrs) xattr_absence_.note_none(attr.ino.value, XattrAbsence::Clock::now());
  if (S_ISREG(attr.mode) && (attr.mode & (S_ISUID | S_ISGID)) != 0)
    setid_files_[attr.ino.value] = {attr.mode, attr.gid};
  else if (!setid_files_.empty())
    setid_files_.erase(attr.ino.value);
}

fuse_entry_param Bridge::entry(const Attr& attr) {
  learn(attr);
  fuse_entry_param e{};
  e.ino = attr.ino.value;
  e.attr = to_stat(attr);
  e.attr_timeout = params_.attr_timeout_s;
  e.entry_timeout = params_.entry_timeout_s;
  return e;
}

// ---- session -------------------------------------------------------------

namespace {

void on_init(void* userdata, fuse_conn_info* conn) {
  auto& b = *static_cast<Bridge*>(userdata);
  auto want = [conn](unsigned cap, bool on) {
    if (on && (conn->capable & cap)) {
      conn->want |= cap;
    } else {
      conn->want &= ~cap;
    }
  };
  want(FUSE_CAP_ASYNC_READ, true);
  want(FUSE_CAP_ASYNC_DIO, true);
  want(FUSE_CAP_ATOMIC_O_TRUNC, true);  // client.open() applies O_TRUNC
  // Asked for, but libfuse before 3.16.2 never tells the kernel (libfuse
  // PR #861), so lookups and readdirs in one directory stay serialized there.
  want(FUSE_CAP_PARALLEL_DIROPS, true);
  want(FUSE_CAP_READDIRPLUS, true);
  want(FUSE_CAP_READDIRPLUS_AUTO, true);
  want(FUSE_CAP_AUTO_INVAL_DATA, true);  // drop cached pages when size or mtime changed elsewhere
  want(FUSE_CAP_WRITEBACK_CACHE, b.options().writeback_cache);
  // locks=cluster: POSIX, OFD and flock locks go to the metadata servers
  // (fuse_bridge_lock.cc); locks=local: the kernel keeps them on this node.
  want(FUSE_CAP_POSIX_LOCKS, b.options().cluster_locks);
  want(FUSE_CAP_FLOCK_LOCKS, b.options().cluster_locks);
  // The kernel clears setuid/setgid bits on write and chown itself.
  want(FUSE_CAP_HANDLE_KILLPRIV, false);
  want(FUSE_CAP_SPLICE_READ, false);
  want(FUSE_CAP_SPLICE_WRITE, false);
  want(FUSE_CAP_SPLICE_MOVE, false);
  want(FUSE_CAP_POSIX_ACL, false);
  want(FUSE_CAP_DONT_MASK, false);  // the kernel applies the umask to new modes
  want(FUSE_CAP_EXPORT_SUPPORT, false);

  conn->max_write = kMaxTransferBytes;
  // The kernel keeps the smaller of this and the mount's read_ahead_kb,
  // which pvfsmount raised to kReadAheadBytes before INIT (an
  // administrator may lower it later).
  conn->max_readahead = kReadAheadBytes;
  // Async reads, read-ahead and writeback in flight at once (-o
  // max_background). libfuse's default (12) is too few to keep several
  // storage servers busy; 64 left each server's elevator about two writes
  // per object to order with 32 writers (docs/obrr.md). The kernel starts
  // throttling writers at the congestion threshold, three quarters of it.
  conn->max_background = b.options().max_background;
  conn->congestion_threshold = std::max(1u, b.options().max_background * 3 / 4);
  conn->time_gran = 1;
  spdlog::debug("FUSE init: kernel offers {:#x}, pvfs wants {:#x}", conn->capable, conn->want);
}

}  // namespace

}  // namespace fuse

struct FuseMount::State {
  std::unique_ptr<fuse::Bridge> bridge;
  fuse_session* session = nullptr;
  bool mounted = false;
};

FuseMount::FuseMount(std::unique_ptr<State> state) : state_(std::move(state)) {}

FuseMount::~FuseMount() {
  if (!state_ || !state_->session) return;
  state_->bridge->stop_notifications();
  if (state_->mounted) fuse_session_unmount(state_->session);
  fuse_session_destroy(state_->session);
}

Result<std::unique_ptr<FuseMount>> FuseMount::mount(Client& client, JobIdCache& jobs,
                                                    const FuseMountParams& params) {
  auto state = std::make_unique<State>();
  state->bridge = std::make_unique<fuse::Bridge>(client, jobs, params);

  fuse_lowlevel_ops ops{};
  ops.init = fuse::on_init;
  fuse::add_inode_ops(ops);
  fuse::add_file_ops(ops);
  fuse::add_dir_ops(ops);
  if (params.options.cluster_locks) fuse::add_lock_ops(ops);

  const std::string option_list = params.options.fuse_option_list(params.default_fsname);
  std::vector<std::string> words = {"pvfsmount", "-o", option_list};
  if (params.debug) words.push_back("-d");
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
  state->session = fuse_session_new(&args, &ops, sizeof ops, state->bridge.get());
  fuse_opt_free_args(&args);
  if (state->session) state->bridge->set_session(state->session);
  // From here on the destructor cleans up whatever has been set up.
  auto mount = std::make_unique<FuseMount>(std::move(state));
  State& s = *mount->state_;
  if (!s.session)
    return Status(Errc::invalid_argument, "libfuse rejected the mount options: " + option_list);

  // A daemon that went away must give an error on its socket, not kill us.
  std::signal(SIGPIPE, SIG_IGN);

  if (fuse_session_mount(s.session, params.mountpoint.c_str()) != 0)
    return Status(Errc::io, "cannot mount on " + params.mountpoint.string());
  s.mounted = true;
  return mount;
}

Status FuseMount::serve() {
  // The loop runs on the client's io thread (fs/fuse_loop.h); this thread
  // only waits for it to end.
  // Writes behind (pvfsmount(8) write_behind) were acknowledged: a mount
  // stopped by a signal while files are open still sends them.
  auto serve_then_finish = [](Client& client, fuse_session* session) -> asio::awaitable<Status> {
    Status served = co_await fuse::serve_requests(session);
    if (client.has_writes_behind()) {
      spdlog::info("sending the writes still behind before stopping");
      const uint64_t bytes = co_await client.finish_writes_behind();
      spdlog::info("sent {} bytes of writes behind", bytes);
    }
    co_return served;
  };
  auto done = asio::co_spawn(state_->bridge->client().io(),
                             serve_then_finish(state_->bridge->client(), state_->session), asio::use_future);
  try {
    return done.get();
  } catch (const std::exception& e) {
    return Status(Errc::io, std::string("serving FUSE requests: ") + e.what());
  }
}

// ---- inode callbacks -------------------------------------------------------

namespace fuse {
namespace {

constexpr std::string_view kSelinuxXattr = "security.selinux";

// A lookup in a directory the MDS no longer has (stale) also makes the
// kernel forget the directory's own entry (Bridge::forget_stale_dir).
asio::awaitable<Result<Client::Looked>> lookup(Bridge& b, Credentials who, fuse_ino_t parent,
                                               std::string name) {
  auto found = co_await b.client().lookup_entry(who, InodeId(parent), std::move(name));
  if (found.code() == Errc::stale) co_await b.forget_stale_dir(parent);
  co_return found;
}

void on_lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  Bridge& b = bridge(req);
  b.spawn(req, "lookup", lookup(b, b.credentials(req), parent, std::string(name)),
          [&b, parent, name = std::string(name)](fuse_req_t r, const Client::Looked& found) {
            b.remember_dir(found.attr, parent, name);
            // From statahead the attributes are already `age` old: the
            // kernel keeps them only for what is left of the timeouts.
            const double age_s = std::chrono::duration<double>(found.age).count();
            fuse_entry_param e = b.entry(found.attr);
            e.attr_timeout = std::max(0.0, e.attr_timeout - age_s);
            e.entry_timeout = std::max(0.0, e.entry_timeout - age_s);
            fuse_reply_entry(r, &e);
          });
}

// The client keeps no per-inode state for lookups (only for open files), so
// lookup counts need no bookkeeping.
void on_forget(fuse_req_t req, fuse_ino_t, uint64_t) { fuse_reply_none(req); }

void on_forget_multi(fuse_req_t req, size_t, fuse_forget_data*) { fuse_reply_none(req); }

void reply_attr(Bridge& b, fuse_req_t req, const Attr& attr) {
  b.learn(attr);
  struct stat st = to_stat(attr);
  fuse_reply_attr(req, &st, b.attr_timeout_s());
}

void on_getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  Bridge& b = bridge(req);
  b.spawn(req, "getattr", call(b.client(), &Client::getattr, b.credentials(req), InodeId(ino)),
          [&b](fuse_req_t r, const Attr& attr) { reply_attr(b, r, attr); });
}

Timespec to_timespec(const struct timespec& ts) {
  return Timespec{static_cast<int64_t>(ts.tv_sec), static_cast<uint32_t>(ts.tv_nsec)};
}

SetAttr to_setattr(const struct stat& attr, int to_set) {
  SetAttr change;
  if (to_set & FUSE_SET_ATTR_MODE) {
    change.mask |= kSetMode;
    change.mode = attr.st_mode & 07777;
  }
  if (to_set & FUSE_SET_ATTR_UID) {
    change.mask |= kSetUid;
    change.uid = attr.st_uid;
  }
  if (to_set & FUSE_SET_ATTR_GID) {
    change.mask |= kSetGid;
    change.gid = attr.st_gid;
  }
  if (to_set & FUSE_SET_ATTR_SIZE) {
    change.mask |= kSetSize;
    change.size = static_cast<uint64_t>(attr.st_size);
  }
  // The kernel sets ATIME together with ATIME_NOW; "now" is the server's clock.
  if (to_set & FUSE_SET_ATTR_ATIME_NOW) {
    change.mask |= kSetAtimeNow;
  } else if (to_set & FUSE_SET_ATTR_ATIME) {
    change.mask |= kSetAtime;
    change.atime = to_timespec(attr.st_atim);
  }
  if (to_set & FUSE_SET_ATTR_MTIME_NOW) {
    change.mask |= kSetMtimeNow;
  } else if (to_set & FUSE_SET_ATTR_MTIME) {
    change.mask |= kSetMtime;
    change.mtime = to_timespec(attr.st_mtim);
  }
  return change;
}

// With writeback_cache the kernel keeps files' mtime itself and sends it as
// an explicit time: after a write (on the writer's open file, at close at
// the latest), and for a truncate or a touch to "now" by anyone allowed to
// (it never sends "now" then). Only the owner may set an explicit time, so
// for anyone else the MDS refused it: close, truncate and touch of a file
// they may write failed with EPERM. The kernel has checked the caller
// already (default_permissions: an explicit time of the user's own needs
// the owner), so such an mtime stands for "now": sent as that when the
// MDS refuses it, the MDS's clock is recorded, which a writer may set.
// Only a time of the last minutes, as the kernel's are: root's explicit
// time under root squash (the MDS refuses it too) must fail, not become
// "now" (tar and cp -p restore old times).
bool mtime_may_mean_now(const Bridge& b, int to_set, const struct stat& attr) {
  if (!b.options().writeback_cache || (to_set & FUSE_SET_ATTR_MTIME) == 0 || (to_set & FUSE_SET_ATTR_MTIME_NOW) != 0)
    return false;
  constexpr double kWritebackAgeS = 600;
  return std::abs(std::difftime(std::time(nullptr), attr.st_mtim.tv_sec)) < kWritebackAgeS;
}

// A truncation first removes the file's capabilities (`drop`; set-id bits
// are the MDS's to clear, mds/permissions.h). `mtime_now_if_refused`: see
// mtime_may_mean_now.
asio::awaitable<Result<Attr>> setattr(Bridge& b, Credentials who, fuse_ino_t ino, SetAttr change, bool drop,
                                      bool mtime_now_if_refused) {
  if (drop) {
    if (Status st = co_await drop_privileges(b, who, ino, false); !st.ok()) co_return st;
  }
  auto result = co_await b.client().setattr(who, InodeId(ino), change);
  if (result || !mtime_now_if_refused || result.status().code() != Errc::not_permitted) co_return result;
  change.mask = (change.mask & ~kSetMtime) | kSetMtimeNow;
  co_return co_await b.client().setattr(who, InodeId(ino), change);
}

// A size change through an open file (ftruncate) is the same call: the
// client tracks sizes per inode, not per handle.
void on_setattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info*) {
  Bridge& b = bridge(req);
  if ((to_set & FUSE_SET_ATTR_SIZE) && attr->st_size < 0) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  Credentials who = b.credentials(req);
  const bool drop = (to_set & FUSE_SET_ATTR_SIZE) && privileges_to_drop(b, who, ino, false);
  b.spawn(req, "setattr",
          setattr(b, std::move(who), ino, to_setattr(*attr, to_set), drop, mtime_may_mean_now(b, to_set, *attr)),
          [&b](fuse_req_t r, const Attr& a) { reply_attr(b, r, a); });
}

void on_readlink(fuse_req_t req, fuse_ino_t ino) {
  Bridge& b = bridge(req);
  b.spawn(req, "readlink", call(b.client(), &Client::readlink, b.credentials(req), InodeId(ino)),
          [](fuse_req_t r, const std::string& target) { fuse_reply_readlink(r, target.c_str()); });
}

void on_access(fuse_req_t req, fuse_ino_t ino, int mask) {
  Bridge& b = bridge(req);
  b.spawn(req, "access",
          call(b.client(), &Client::access, b.credentials(req), InodeId(ino),
               static_cast<uint32_t>(mask)));
}

void on_statfs(fuse_req_t req, fuse_ino_t) {
  Bridge& b = bridge(req);
  b.spawn(req, "statfs", call(b.client(), &Client::statfs, b.credentials(req)),
          [](fuse_req_t r, const StatFs& fs) {
            struct statvfs st {};
            const uint64_t block = fs.block_size ? fs.block_size : 4096;
            st.f_bsize = block;
            st.f_frsize = block;
            st.f_blocks = fs.total_bytes / block;
            st.f_bfree = fs.free_bytes / block;
            st.f_bavail = fs.free_bytes / block;
            st.f_files = fs.total_inodes;
            st.f_ffree = fs.free_inodes;
            st.f_favail = fs.free_inodes;
            st.f_namemax = fs.name_max;
            fuse_reply_statfs(r, &st);
          });
}

// getxattr/listxattr protocol: size 0 asks for the length, a buffer too
// small for the value is ERANGE.
void reply_xattr_value(fuse_req_t req, size_t size, const std::string& value) {
  if (size == 0) {
    fuse_reply_xattr(req, value.size());
  } else if (value.size() > size) {
    fuse_reply_err(req, ERANGE);
  } else {
    fuse_reply_buf(req, value.data(), value.size());
  }
}

// An xattr change forgets the inode's remembered absences before it is sent
// and again when it is done, so no answer older than the change is kept.
asio::awaitable<Status> change_xattr(Bridge& b, asio::awaitable<Status> change, fuse_ino_t ino) {
  b.xattr_absence().forget(ino, XattrAbsence::Clock::now());
  Status status = co_await std::move(change);
  b.xattr_absence().forget(ino, XattrAbsence::Clock::now());
  co_return status;
}

// Without -o security_label the mount keeps no SELinux label, and says so
// (EOPNOTSUPP): `ls -l` asks for security.selinux once per entry until a
// file system tells it labels are unsupported, then never again on it.
bool unsupported_label(const Bridge& b, std::string_view name) {
  return !b.options().security_label && name == kSelinuxXattr;
}

void on_setxattr(fuse_req_t req, fuse_ino_t ino, const char* name, const char* value, size_t size,
                 int flags) {
  Bridge& b = bridge(req);
  if (unsupported_label(b, name)) {
    fuse_reply_err(req, EOPNOTSUPP);
    return;
  }
  if (flags & ~(XATTR_CREATE | XATTR_REPLACE)) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  b.spawn(req, "setxattr",
          change_xattr(b,
                       call(b.client(), &Client::setxattr, b.credentials(req), InodeId(ino),
                            std::string(name), std::string(value, size),
                            static_cast<uint32_t>(flags)),
                       ino));
}

asio::awaitable<void> getxattr_and_reply(Bridge& b, fuse_req_t req, Credentials who,
                                         fuse_ino_t ino, std::string name, size_t size) {
  const uint64_t asked_at = b.xattr_absence().generation();
  Result<std::string> value = co_await b.client().getxattr(who, InodeId(ino), name);
  if (!value.ok()) {
    if (value.status().code() == Errc::no_data)
      b.xattr_absence().note_absent(ino, name, XattrAbsence::Clock::now(), asked_at);
    reply_error(req, "getxattr", value.status());
    co_return;
  }
  reply_xattr_value(req, size, *value);
}

// The kernel asks for security.capability before every write; ls -l asks
// for the ACL and the security label of every entry. pvfs keeps no system.*
// xattrs (no ACLs: the MDS refuses them all) and, by default, no SELinux
// label, so those need no request.
void on_getxattr(fuse_req_t req, fuse_ino_t ino, const char* name, size_t size) {
  Bridge& b = bridge(req);
  if (std::string_view(name).starts_with("system.") || unsupported_label(b, name)) {
    fuse_reply_err(req, EOPNOTSUPP);
    return;
  }
  if (b.xattr_absence().absent(ino, name, XattrAbsence::Clock::now())) {
    ++b.client().mount_stats().cache_hits;
    fuse_reply_err(req, ENODATA);
    return;
  }
  b.spawn_replying(req, "getxattr",
                   getxattr_and_reply(b, req, b.credentials(req), ino, std::string(name), size));
}

void on_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size) {
  Bridge& b = bridge(req);
  b.spawn(req, "listxattr", call(b.client(), &Client::listxattr, b.credentials(req), InodeId(ino)),
          [size, &b](fuse_req_t r, const std::vector<std::string>& names) {
            std::string list;
            for (const auto& n : names) {
              if (unsupported_label(b, n)) continue;  // set by a mount with security_label
              list += n;
              list += '\0';
            }
            reply_xattr_value(r, size, list);
          });
}

void on_removexattr(fuse_req_t req, fuse_ino_t ino, const char* name) {
  Bridge& b = bridge(req);
  if (unsupported_label(b, name)) {
    fuse_reply_err(req, EOPNOTSUPP);
    return;
  }
  b.spawn(req, "removexattr",
          change_xattr(b,
                       call(b.client(), &Client::removexattr, b.credentials(req), InodeId(ino),
                            std::string(name)),
                       ino));
}

}  // namespace

void add_inode_ops(fuse_lowlevel_ops& ops) {
  ops.lookup = on_lookup;
  ops.forget = on_forget;
  ops.forget_multi = on_forget_multi;
  ops.getattr = on_getattr;
  ops.setattr = on_setattr;
  ops.readlink = on_readlink;
  ops.access = on_access;
  ops.statfs = on_statfs;
  ops.setxattr = on_setxattr;
  ops.getxattr = on_getxattr;
  ops.listxattr = on_listxattr;
  ops.removexattr = on_removexattr;
}

}  // namespace fuse
}  // namespace pvfs
