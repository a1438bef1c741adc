// Logging: spdlog, set up once per process by init_logging(). Daemons log to
// stderr: a file under pvfs-cluster, the journal under systemd (then lines
// carry the syslog priority and no timestamp of their own). The level comes
// from -v (debug) and changes at run time with `pvfs-ctl loglevel`.
// Code logs with spdlog::info/warn/error directly; log an error once, where
// it is handled, with what the operator needs to act. Lines about one
// request name its request id (shared/rpc/request_log.h).
#pragma once

#include <string_view>

#include <spdlog/spdlog.h>

namespace pvfs {

// name: the process ("pvfs-server[2]"). verbose: debug level. Thread-safe after return.
void init_logging(std::string_view name, bool verbose);

}  // namespace pvfs
