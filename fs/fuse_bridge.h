// The FUSE bridge: serves a mounted pvfs file system by turning libfuse
// low-level requests into libpvfs-client calls and their results into
// replies. It converts and replies only; what a request means for pvfs
// (sizes, layouts, O_TRUNC, virtual xattrs) is the client's job. The only
// place that includes fuse_lowlevel.h or maps Errc to errno.
// Threads: the client's io thread reads requests, runs the callbacks, the
// work and the replies (fs/fuse_loop.h).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "fs/client.h"
#include "fs/job_id.h"
#include "fs/mount_options.h"
#include "shared/status.h"

namespace pvfs {

// The kernel's read-ahead on a mount: four 1 MiB reads in flight for a
// sequential reader, one per server of a 4-wide stripe. pvfsmount sets the
// mount's read_ahead_kb to it; INIT's max_readahead must not be smaller,
// since the kernel keeps the smaller of the two.
inline constexpr uint32_t kReadAheadBytes = 4u << 20;

struct FuseMountParams {
  std::filesystem::path mountpoint;
  MountOptions options;
  double attr_timeout_s = 1.0;   // resolved: -o attr_timeout, else the config's
  double entry_timeout_s = 1.0;  // resolved: -o entry_timeout, else the config's
  std::string default_fsname;    // used when options.fsname is empty
  bool debug = false;            // libfuse prints every request to stderr
};

// One mounted pvfs file system and its libfuse session.
//
// Requests are read from /dev/fuse on the client's io thread. Every callback
// takes the caller's identity (uid, gid, pid, supplementary groups, job id),
// co_spawns the work on the same thread and returns; the coroutine's end
// sends exactly one reply. Write data stays in the buffer the request was
// read into until it has been sent. Open files are heap-allocated handles whose address is the
// kernel's file handle; they live from open/create until release.
//
// Locks: with locks=cluster (the default) getlk, setlk and flock go to the
// metadata servers' lock managers (fuse_bridge_lock.cc), so POSIX, OFD and
// flock locks hold across client nodes; with locks=local the bridge
// implements none and the kernel keeps them on this node only.
class FuseMount {
 public:
  // Creates the libfuse session (parsing the mount options into it) and mounts at
  // params.mountpoint. `client` (already started) and `jobs` must outlive the
  // returned object, and client.io() must be running on its own thread.
  // Errors: invalid_argument (libfuse rejected the options), io (the mount
  // failed; libfuse has printed the reason on stderr).
  static Result<std::unique_ptr<FuseMount>> mount(Client& client, JobIdCache& jobs,
                                                  const FuseMountParams& params);

  // Serves requests on client.io()'s thread (this thread only waits) until
  // the file system is unmounted or SIGINT, SIGTERM or SIGHUP ends it. Returns ok for both;
  // an error only when reading from the kernel failed.
  Status serve();

  // Unmounts (if still mounted) and destroys the session. Call after the
  // io thread has stopped, so that no completion replies on a dead session.
  ~FuseMount();

  FuseMount(const FuseMount&) = delete;
  FuseMount& operator=(const FuseMount&) = delete;

  // The session's parts (defined in fuse_bridge.cc). Construct through mount().
  struct State;
  explicit FuseMount(std::unique_ptr<State> state);

 private:
  std::unique_ptr<State> state_;
};

}  // namespace pvfs
