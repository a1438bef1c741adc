// The -o option list of pvfsmount, parsed into plain values: the pvfs
// options, and the generic mount(8) flags that are passed on to the kernel
// mount or accepted and ignored. Pure: no I/O, no libfuse; every option and
// its default is documented in man/pvfsmount.8. Thread-safe (plain values).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/dispatch/dispatcher.h"
#include "shared/status.h"

namespace pvfs {

struct MountOptions {
  static constexpr unsigned kDefaultMaxThreads = 64;
  static constexpr unsigned kMaxMaxThreads = 10000;
  static constexpr unsigned kDefaultMaxBackground = 128;
  static constexpr unsigned kMaxMaxBackground = 65535;  // the kernel's field is 16 bits

  // attr_timeout= / entry_timeout=: kernel cache lifetimes; unset = the
  // config's [client] values.
  std::optional<double> attr_timeout_s;
  std::optional<double> entry_timeout_s;
  bool writeback_cache = false;      // writeback_cache / no_writeback_cache
  bool direct_io = false;            // direct_io: bypass the page cache for every file
  bool allow_other = false;          // allow_other: users other than the mounter may enter
  bool default_permissions = true;   // default_permissions / no_default_permissions
  bool read_only = false;            // ro / rw
  // security_label / no_security_label: keep SELinux labels
  // (security.selinux) on the metadata servers. Off, the mount says the
  // file system has none (EOPNOTSUPP), as NFS without labeled NFS does, and
  // `ls -l` stops asking for one per entry.
  bool security_label = false;
  std::string jobid_var;             // jobid_var=NAME: extra environment variable naming the job
  // dispatch=POLICY: how writes are placed (policy/dispatch/dispatcher.h)
  sched::Policy dispatch = sched::Policy::preassign;
  // locks=cluster|local: fcntl, OFD and flock locks held by the metadata
  // servers, coherent across client nodes (cluster), or kept by this
  // node's kernel only (local, as before issue 19).
  bool cluster_locks = true;
  std::string secret_file;           // secret=FILE: needed when CONFIG is host:port
  std::string log_file;              // log=FILE: in the background, log here (appended) instead of syslog
  unsigned max_threads = kDefaultMaxThreads;  // max_threads=N: accepted, ignored (fs/fuse_loop.h)
  // max_background=N: reads, read-ahead and writeback the kernel keeps in
  // flight at once on this mount (FUSE's max_background; each may hold a
  // transfer-sized buffer in pvfsmount). More lets the storage servers'
  // elevators see deeper queues per object.
  unsigned max_background = kDefaultMaxBackground;
  std::string fsname;                // fsname=NAME; empty = "pvfs:" + MDS address
  std::optional<uint32_t> rpc_timeout_ms;     // timeout=MS: overrides [timeouts] rpc_timeout_ms
  // write_behind=SIZE: bytes of each file's writes acknowledged before the
  // storage servers have them (Client::write_behind); 0 = none. Unset =
  // the config's [client] write_behind_bytes (0 unless an admin chose
  // otherwise: a pvfsmount killed would lose them).
  static constexpr uint64_t kMaxWriteBehind = uint64_t{1} << 30;
  std::optional<uint64_t> write_behind;
  // Generic flags for the kernel mount, in the order given (nosuid, nodev,
  // noexec, sync, noatime, ...). ro/rw are in read_only instead.
  std::vector<std::string> kernel_flags;

  // The option list for libfuse's session ("-o" value): subtype=pvfs,
  // fsname, ro, allow_other, default_permissions and the kernel flags.
  // Commas and backslashes inside fsname are escaped as libfuse expects.
  // `default_fsname` is used when fsname is empty.
  std::string fuse_option_list(std::string_view default_fsname) const;
};

// Parses a comma-separated option list such as "ro,attr_timeout=2,_netdev".
// Options apply left to right (a later "rw" undoes an earlier "ro"); empty
// items are skipped. Errors (invalid_argument, a one-line detail naming the
// option): an unknown option, a missing or malformed value, a value on a
// flag, a negative timeout, max_threads outside 1..kMaxMaxThreads,
// max_background outside 1..kMaxMaxBackground, write_behind over
// kMaxWriteBehind.
Result<MountOptions> parse_mount_options(std::string_view list);

}  // namespace pvfs
