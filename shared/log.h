// Logging: spdlog, set up once per process by init_logging(). Daemons log to
// stderr (which pvfs-cluster points at a file); the level comes from -v/-d.
// Code logs with spdlog::info/warn/error directly; log an error once, where
// it is handled, with what the operator needs to act.
#pragma once

#include <string_view>

#include <spdlog/spdlog.h>

namespace pvfs {

// name: the process ("pvfs-server[2]"). verbose: debug level. Thread-safe after return.
void init_logging(std::string_view name, bool verbose);

}  // namespace pvfs
