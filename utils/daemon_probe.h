// Asks a pvfs daemon for its status over the real protocol: used by
// pvfs-cluster status/up and pvfs-ctl. Synchronous (runs its own
// io_context); not for use inside another io_context's thread.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "shared/config.h"
#include "shared/secret.h"
#include "shared/status.h"

namespace pvfs {

struct JobStat {
  std::string job_id;
  uint64_t ops = 0, bytes_read = 0, bytes_written = 0;
};

struct DaemonReport {
  std::string kind;  // "mds" or "server"
  uint32_t id = 0;
  std::string version;
  uint64_t uptime_ms = 0;
  uint64_t requests = 0;
  std::vector<JobStat> jobs;
};

enum class DaemonKind { mds, server };

// Connects, authenticates and asks for status within `timeout`.
Result<DaemonReport> probe_daemon(DaemonKind kind, const Endpoint& at, const Secret& key,
                                  std::chrono::milliseconds timeout);

struct ServerView {
  uint32_t id = 0;
  std::string address;
  uint64_t capacity_bytes = 0, free_bytes = 0;
  bool alive = false;
};

// The storage servers the MDS at `mds` knows.
Result<std::vector<ServerView>> list_servers(const Endpoint& mds, const Secret& key,
                                             std::chrono::milliseconds timeout);

}  // namespace pvfs
