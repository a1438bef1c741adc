// libpvfs-client: everything a program needs to use a pvfs cluster —
// metadata calls to the MDS, striped reads and writes to storage servers,
// and the per-inode state that keeps file sizes right for close-to-open
// consistency. Used by the FUSE bridge (fs/fuse_bridge.cc) and by tools.
// Knows nothing of FUSE or errno (errors are Status values).
// Thread-safety: every method is a coroutine that must run on the io_context
// given to create(), which the owner runs on exactly one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <asio.hpp>

#include "fs/mount_stats.h"
#include "fs/write_window.h"
#include "policy/dispatch/dispatcher.h"
#include "shared/attr.h"
#include "shared/buffer.h"
#include "config/config.h"
#include "shared/secret.h"
#include "shared/status.h"

namespace pvfs::rpc {
class Peer;
class OutMessage;
class InMessage;
}  // namespace pvfs::rpc

namespace pvfs {

// The identity a request is made under.
struct Credentials {
  Caller caller;
  uint32_t pid = 0;
  std::string job_id;  // sent with every request; daemons count per job
  uint64_t iostep_bytes = 0;  // the caller's PVFS_IOSTEP_BYTES: its transparent I/O steps' size (0: none)
  uint64_t qos_runtime_ms = 0;  // the caller's PVFS_QOS_RUNTIME: its job's goal at its first I/O (0: none)
  uint64_t request_id = 0;  // names this operation in every daemon's log (0: none)
};

struct StatFs {
  uint64_t total_bytes = 0, free_bytes = 0;
  uint64_t total_inodes = 0, free_inodes = 0;
  uint32_t block_size = 4096, name_max = 255;
};

// A page of a listing. `attr_age`: how long ago the MDS read the entries'
// attributes (the client lists ahead of the kernel, fs/listing_ahead.h), to
// be taken off the time the kernel may cache them.
struct ReaddirPage : DirPage {
  std::chrono::steady_clock::duration attr_age{};
};

// The bytes of a read as the storage servers' replies brought them: one
// buffer per piece of the stripe, in file order, each exactly its piece's
// length (holes as zeros), so they can go to the kernel without a copy.
struct ReadData {
  std::vector<Buffer> buffers;
  size_t size() const {
    size_t n = 0;
    for (const auto& b : buffers) n += b.size();
    return n;
  }
};

using StorageServer = ServerInfo;  // shared/attr.h

struct WriterAnnouncement;  // fs/client_impl.h

// What the client knows about one inode that has open handles here.
struct InodeState {
  InodeId ino;
  Layout layout;
  uint64_t size = 0;        // max(size seen from the MDS, end of writes made here)
  // The MDS's size when this view of the file began (open, a refresh, the
  // last publish or truncation here): a publish sends it, so the MDS can
  // tell that another client truncated the file meanwhile.
  uint64_t base = 0;
  // When the MDS last said the file exists, for a read that found a hole
  // (Client::read_buffers).
  std::chrono::steady_clock::time_point confirmed_at{};
  bool size_dirty = false;  // writes made here not yet published to the MDS
  bool blocks_dirty = false;  // fallocate here changed the allocation: publish a fresh count
  uint64_t writes = 0;      // bumped by every write; a flush only clears what it saw
  int open_count = 0;
  bool unlinked = false;    // last link removed while open: data kept until last close
  bool hold_lost = false;   // ... but the MDS let it go (this client was cut off for a lease)
  // (object index, server) pairs that hold fragments written here since the
  // last fsync: fsync must reach them too.
  std::set<std::pair<uint32_t, uint32_t>> fragment_servers;
  // Objects known to exist: written here, reserved by fallocate, or made
  // empty for a hole a write past the end left (client_space.cc).
  std::set<uint32_t> objects_made;
  // Set from the first write until the last close: this client has told the
  // MDS that it writes the file (or is telling it), so that the MDS sets the
  // size from the storage servers if the client dies before publishing it.
  // No write is acknowledged before the MDS has answered it.
  std::shared_ptr<WriterAnnouncement> writer;
  int writes_in_flight = 0;  // started, not finished: a close keeps `writer` meanwhile
  // Writes acknowledged to the caller before the servers had them
  // (Client::write_behind), and the first of them that failed.
  WriteWindow behind;
};

// What the write dispatcher did since the client started.
struct DispatchStats {
  uint64_t rounds = 0;        // probe rounds
  uint64_t stale_rounds = 0;  // of them, rounds that probed as no fresh load was known (preassign)
  uint64_t probes = 0;        // probe requests sent
  uint64_t probe_ns = 0;      // summed duration of probe rounds
  uint64_t pieces_home = 0;   // pieces written to their home server
  uint64_t pieces_redirected = 0;
  uint64_t fallbacks = 0;     // redirects that failed and went home
  uint64_t pieces_spilled = 0;  // pieces whose home was full, written elsewhere and redirected
};

// One open file description.
struct OpenFile {
  std::shared_ptr<InodeState> inode;
  int flags = 0;  // open(2) flags
};

// The virtual extended attribute that shows and sets a layout.
inline constexpr const char* kLayoutXattr = "user.pvfs.layout";
// A read-only virtual extended attribute of the mount's root directory:
// this client's write dispatch counters (DispatchStats) as one line of
// key=value pairs. Not listed by listxattr.
inline constexpr const char* kDispatchStatsXattr = "user.pvfs.dispatch_stats";
// A read-only virtual extended attribute of the mount's root directory:
// what this mount did since it started (MountStats, fs/mount_stats.h:
// operations by kind with latencies, bytes, retries, redirects, cache hits,
// and the dispatch counters), for pvfs-ctl client. Not listed by listxattr.
inline constexpr const char* kClientStatsXattr = "user.pvfs.client_stats";
// A virtual extended attribute of every inode: the id of the file set it is
// in ("0" for the first). Setting it to "create" on an empty directory
// (root only) makes that directory the root of a new file set, with a new
// inode number (pvfs-ctl fileset create). Not listed by listxattr.
inline constexpr const char* kFileSetXattr = "user.pvfs.fileset";
// A virtual extended attribute of every inode for jobs' I/O steps
// (pvfs-ctl iostep, libpvfs-iostep): setting it to "begin [job=J]
// [bytes=N] [servers=a,b]" or "end [job=J]" opens or ends the job's step on
// this client (the job defaults to the caller's); reading it gives the
// caller's job's state, reading kIoStepXattr + ".JOB" that of job JOB:
// "none", "pending" or "granted". Not listed by listxattr.
inline constexpr const char* kIoStepXattr = "user.pvfs.iostep";

class Client {
 public:
  // A client for the cluster in `config`, on `io` (single-threaded, run by
  // the caller). Does no I/O yet. Errors: the secret file cannot be read.
  static Result<std::unique_ptr<Client>> create(asio::io_context& io, const Config& config);
  ~Client();

  // Contacts the metadata servers (the first in config order that answers
  // gives the map of file sets to members) and learns the storage servers.
  // Errors (when no member can be reached): unavailable, timeout,
  // access_denied (wrong secret).
  asio::awaitable<Status> start();

  // --- namespace -------------------------------------------------------
  // Attributes returned for files open here carry the locally known size.
  asio::awaitable<Result<Attr>> lookup(const Credentials& who, InodeId parent, std::string name);
  // lookup(), and how long ago the MDS read the attributes (not 0 when they
  // come from statahead, fs/statahead.h): the kernel may cache them for its
  // timeouts less that.
  struct Looked {
    Attr attr;
    std::chrono::steady_clock::duration age{};
  };
  asio::awaitable<Result<Looked>> lookup_entry(const Credentials& who, InodeId parent,
                                               std::string name);
  asio::awaitable<Result<Attr>> getattr(const Credentials& who, InodeId ino);
  // Asks the MDS whether directory `ino` still exists, on every opendir
  // (close-to-open for directories, as NFS revalidates them on open):
  // stale when another client removed or replaced it while the kernel had
  // its name cached, so that the kernel looks the name up again rather
  // than list a directory that is gone. It asks by fetching the listing's
  // first entries with their attributes, which the kernel's first
  // READDIRPLUS (always plus, at offset 0) then takes from ListingAhead:
  // no request more than before.
  asio::awaitable<Status> opendir(const Credentials& who, InodeId ino);
  // kSetSize also truncates the file's objects (before the MDS records it).
  asio::awaitable<Result<Attr>> setattr(const Credentials& who, InodeId ino, SetAttr change);
  // Regular files, FIFOs, sockets and devices. A regular file gets its
  // layout now, but its objects come into being on first write.
  asio::awaitable<Result<Attr>> mknod(const Credentials& who, InodeId parent, std::string name,
                                      uint32_t mode, uint32_t rdev);
  asio::awaitable<Result<Attr>> mkdir(const Credentials& who, InodeId parent, std::string name,
                                      uint32_t mode);
  // Removes a name. If that was the last link of a file open here, its data
  // stays until the last release().
  asio::awaitable<Status> unlink(const Credentials& who, InodeId parent, std::string name);
  asio::awaitable<Status> rmdir(const Credentials& who, InodeId parent, std::string name);
  asio::awaitable<Result<Attr>> symlink(const Credentials& who, InodeId parent, std::string name,
                                        std::string target);
  asio::awaitable<Result<std::string>> readlink(const Credentials& who, InodeId ino);
  // flags: kRenameNoReplace, kRenameExchange.
  asio::awaitable<Status> rename(const Credentials& who, InodeId parent, std::string name,
                                 InodeId new_parent, std::string new_name, uint32_t flags);
  asio::awaitable<Result<Attr>> link(const Credentials& who, InodeId ino, InodeId new_parent,
                                     std::string new_name);
  // Entries after `cookie` (0 = from the start), at most `max_entries`.
  // No "." or ".." entries; cookies of real entries are > 2.
  asio::awaitable<Result<ReaddirPage>> readdir(const Credentials& who, InodeId dir, uint64_t cookie,
                                               uint32_t max_entries, bool plus);
  asio::awaitable<Result<StatFs>> statfs(const Credentials& who);
  // mask: R_OK|W_OK|X_OK or F_OK.
  asio::awaitable<Status> access(const Credentials& who, InodeId ino, uint32_t mask);

  // Extended attributes; kLayoutXattr is virtual ("stripe_size=... stripe_count=...
  // servers=a,b,c"), settable on directories and on empty files, and not
  // listed by listxattr (so copying tools do not try to set it).
  // flags: 1 = XATTR_CREATE, 2 = XATTR_REPLACE.
  asio::awaitable<Status> setxattr(const Credentials& who, InodeId ino, std::string name,
                                   std::string value, uint32_t flags);
  asio::awaitable<Result<std::string>> getxattr(const Credentials& who, InodeId ino, std::string name);
  asio::awaitable<Result<std::vector<std::string>>> listxattr(const Credentials& who, InodeId ino);
  asio::awaitable<Status> removexattr(const Credentials& who, InodeId ino, std::string name);

  // --- files -----------------------------------------------------------
  // Checks permission for `flags`' access mode and applies O_TRUNC.
  asio::awaitable<Result<std::shared_ptr<OpenFile>>> open(const Credentials& who, InodeId ino,
                                                          int flags);
  // Creates a regular file (O_EXCL: fail if it exists) and opens it.
  asio::awaitable<Result<std::pair<Attr, std::shared_ptr<OpenFile>>>> create(
      const Credentials& who, InodeId parent, std::string name, uint32_t mode, int flags);
  // Writes all of `data` at `offset` (file offset). Returns data.size() on
  // success. Durable before return when the file was opened O_SYNC/O_DSYNC.
  // A file opened O_APPEND ignores `offset`: the MDS says where the end is
  // (appendAt), so appends from several nodes never land on each other.
  asio::awaitable<Result<size_t>> write(const Credentials& who, OpenFile& file, uint64_t offset,
                                        std::span<const std::byte> data);
  // As write(), but returns as soon as the write has started, while the
  // servers still have it: write-behind (pvfsmount(8), write_behind=). The
  // bytes `data` points into must live as long as `keep`, which is held
  // until the servers have answered. Waits first while the file has its
  // limit of bytes in flight (set_write_behind) or an earlier write of the
  // same bytes is in flight. A failure of such a write is returned by the
  // file's next write (and every one after it) until fsync or close
  // reports it; reads, getattr, setattr, fsync, close, fallocate, lseek
  // and lock calls on the file first wait for its writes in flight, so
  // this node never sees them missing. Where write-behind is off, or the
  // file was opened O_SYNC, O_DSYNC or O_APPEND, the same as write().
  asio::awaitable<Result<size_t>> write_behind(const Credentials& who, std::shared_ptr<OpenFile> file,
                                               uint64_t offset, std::span<const std::byte> data,
                                               std::shared_ptr<const void> keep);
  // Reads up to out.size() bytes; short only at end of file; holes read as zeros.
  asio::awaitable<Result<size_t>> read(const Credentials& who, OpenFile& file, uint64_t offset,
                                       std::span<std::byte> out);
  // The same read, handing over the replies' buffers instead of copying them.
  asio::awaitable<Result<ReadData>> read_buffers(const Credentials& who, OpenFile& file,
                                                 uint64_t offset, size_t length);
  // Publishes the size and mtime of writes made through this client
  // (close-to-open), with the blocks the storage servers now hold for the
  // file (Attr::blocks): called at every close(2). When `file` is the only open
  // description of its inode here, also tells the MDS that this client
  // stops writing it (a later write announces itself again).
  asio::awaitable<Status> flush(const Credentials& who, OpenFile& file);
  // Returns once the file's data is on the storage servers' disks and its
  // metadata (size, name, parent directory: its whole file set) is on the
  // MDS's disk: publishes the size, then fsyncs every object (and fragment)
  // and has the MDS sync the file set, in parallel. For fsync and fdatasync.
  asio::awaitable<Status> fsync(const Credentials& who, OpenFile& file);
  // fallocate(2) modes the client supports.
  enum class Falloc {
    allocate,   // mode 0: reserve space for the range and grow the file to its end
    keep_size,  // FALLOC_FL_KEEP_SIZE: reserve space, the size stays
    punch,      // FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE: free the range, it reads as zeros
  };
  // fallocate of [offset, offset+length) on every object the range covers,
  // on their home servers at once (client_space.cc). Errors: no_space when
  // a server cannot reserve its part (the size then stays), not_supported
  // when a server's file system cannot; too_big past the largest offset.
  // fsync(2) of a directory: returns once every metadata change the MDS has
  // made to the file set of `dir` is on its disk.
  asio::awaitable<Status> fsync_dir(const Credentials& who, InodeId dir);
  asio::awaitable<Status> fallocate(const Credentials& who, OpenFile& file, uint64_t offset,
                                    uint64_t length, Falloc mode);
  // lseek SEEK_DATA (`hole` false) or SEEK_HOLE from `offset`, asking every
  // object's home server (client_space.cc). Redirected bytes are data; the
  // end of the file is a hole. nullopt: `offset` is at or past the end, or
  // (SEEK_DATA) no data follows it: ENXIO.
  asio::awaitable<Result<std::optional<uint64_t>>> seek(const Credentials& who, OpenFile& file,
                                                        uint64_t offset, bool hole);
  // 512-byte blocks the objects of open file `state` occupy on the storage
  // servers (their own and redirected ranges), for st_blocks: asks the
  // objects that can hold bytes (below the size, or known to exist here).
  // Errors: as a storage request, timeout after `timeout`.
  asio::awaitable<Result<uint64_t>> allocated_blocks(const Credentials& who,
                                                     std::shared_ptr<InodeState> state,
                                                     std::chrono::milliseconds timeout);
  // Closes one open file description; the last one for an unlinked file frees its data.
  asio::awaitable<Status> release(const Credentials& who, std::shared_ptr<OpenFile> file);

  // --- file locks across clients (client_locks.cc; pvfsmount(8), LOCKS) ---
  // One fcntl (POSIX or OFD) or flock lock, as the kernel asks for it.
  struct FileLock {
    bool flock = false;      // flock(2)'s namespace (whole file); false: POSIX and OFD
    bool exclusive = false;  // F_WRLCK / LOCK_EX
    uint64_t first = 0;
    uint64_t last = UINT64_MAX;  // inclusive; UINT64_MAX: to the end of the file
    uint64_t owner = 0;          // the kernel's lock owner
    uint32_t pid = 0;            // the process asking (F_GETLK reports the holder's)
  };
  enum class LockOutcome { granted, conflict, deadlock, interrupted };
  // A waiting F_SETLKW: setting `interrupted` (a FUSE interrupt) makes
  // setlk() withdraw the waiter at the manager and return interrupted.
  struct LockWait {
    bool interrupted = false;
  };
  // F_GETLK: the first lock of another owner (on any client) that
  // conflicts with `want`, or nullopt. Errors: those of an MDS request.
  asio::awaitable<Result<std::optional<FileLock>>> getlk(const Credentials& who, InodeId ino, FileLock want);
  // F_SETLK (`wait` false: granted or conflict) or F_SETLKW (`wait` true:
  // granted, deadlock, or interrupted once `state->interrupted` is set;
  // the wait asks the manager again every ~200 ms, which also renews it).
  // Granted locks are renewed every third of the lease while this client
  // holds any in the file set. Errors: those of an MDS request.
  asio::awaitable<Result<LockOutcome>> setlk(const Credentials& who, InodeId ino, FileLock want, bool wait,
                                             std::shared_ptr<LockWait> state);
  // F_UNLCK of `range` (its namespace, owner, first and last).
  asio::awaitable<Status> unlock(const Credentials& who, InodeId ino, FileLock range);
  // Close: every lock and waiter of `owner` on `ino`, both namespaces.
  asio::awaitable<Status> release_locks(const Credentials& who, InodeId ino, uint64_t owner);

  // --- cluster ---------------------------------------------------------
  asio::awaitable<Result<std::vector<StorageServer>>> servers();

  // How writes are placed (pvfsmount -o dispatch=...); the config's
  // [scheduling] values are the defaults. Call before the first write.
  void set_dispatch_policy(sched::Policy policy);
  // Bytes each file may have in flight behind the caller's back
  // (write_behind); 0 turns write-behind off (the default). The mount as a
  // whole holds at most 16 times that.
  void set_write_behind(uint64_t bytes_per_file);
  // Waits until no write behind is in flight on any file (pvfsmount
  // stopping while files are still open), and says how many bytes there
  // were.
  asio::awaitable<uint64_t> finish_writes_behind();
  bool has_writes_behind() const;
  const sched::Options& dispatch_options() const;
  const DispatchStats& dispatch_stats() const;
  // This mount's counters (kClientStatsXattr); the FUSE bridge counts its
  // operations and bytes here. On the io thread only.
  MountStats& mount_stats();

  // Called on the io thread when an entry of a directory names another
  // inode than before (a directory became a file set's root), so a mount
  // can make the kernel forget what it cached of the old one.
  using EntryReplaced = std::function<void(InodeId parent, const std::string& name)>;
  void on_entry_replaced(EntryReplaced callback);

  const Config& config() const { return config_; }
  asio::io_context& io() { return io_; }

  Client(asio::io_context& io, const Config& config, const Secret& key);

  // Implementation state (fs/client_impl.h); opaque to users.
  struct Impl;

 private:
  // setxattr of kFileSetXattr: `how` must be "create".
  asio::awaitable<Status> make_fileset(const Credentials& who, InodeId dir, std::string_view how);
  // Publishes the size if writes made it dirty; `closing`: the caller is
  // closing the last description here, so the MDS also learns that this
  // client stops writing the file (unless writes are still in flight).
  // `count_blocks`: also count and publish the blocks the servers hold (one
  // stat per object that can hold bytes; a count that fails is left out).
  // First waits for the file's writes behind, and returns the first of
  // them that failed (after publishing what the others wrote).
  asio::awaitable<Status> publish(const Credentials& who, OpenFile& file, bool closing,
                                  bool count_blocks = true);
  asio::awaitable<Status> publish_size(const Credentials& who, OpenFile& file, bool closing,
                                       bool count_blocks);
  // write() once no write behind overlaps it. `announce` false: the MDS
  // already counts these bytes in the file's size (an append), so this
  // client need not say it writes the file.
  asio::awaitable<Result<size_t>> write_now(const Credentials& who, OpenFile& file, uint64_t offset,
                                            std::span<const std::byte> data, bool announce = true);
  // An O_APPEND write: asks the MDS where the end is, then writes there.
  asio::awaitable<Result<size_t>> write_append(const Credentials& who, OpenFile& file,
                                               std::span<const std::byte> data);
  asio::io_context& io_;
  Config config_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pvfs
