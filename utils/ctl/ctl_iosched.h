// pvfs-ctl iosched and pvfs-ctl iostep (see pvfs-ctl(1)): the delegate's
// I/O-step scheduler (utils/iosched_view.h), and explicit steps opened and
// ended on a mounted pvfs through the virtual xattr user.pvfs.iostep, so
// the mount's client holds the token and renews its lease. Blocking; not
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "utils/ctl/ctl_commands.h"

namespace pvfs::ctl {

// Prints the scheduler's active steps, queue and per-job totals (a table,
// or with `json` one JSON object); with a `policy`, switches to it first.
// Exit 1 when no member hosts the scheduler or the policy is refused.
int iosched(const DaemonOptions& options, bool json, const std::string& policy);

struct IostepOptions {
  std::string verb;                // "begin", "end" or "status"
  std::string job;                 // empty: the caller's (PVFS_JOBID, ...), as the mount sees it
  std::optional<uint64_t> bytes;   // begin: declared size
  std::string servers;             // begin: "1,3"; empty: from the paths' layouts
  std::vector<std::string> paths;  // on the mount; the first carries the xattr
};

// Opens, ends or shows the job's step on the client that mounts paths[0].
// begin without --servers takes the servers of the paths' layouts (all
// servers when a path's layout names none). Exit 1 with the mount's error
// (not_found: an end of a job with no step there; invalid_argument).
int iostep(const IostepOptions& options);

}  // namespace pvfs::ctl
