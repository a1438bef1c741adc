// Changing a daemon's log level while it runs (the setLogLevel request of
// both services, sent by `pvfs-ctl loglevel`). Thread-safe (spdlog's level
// is atomic).
#pragma once

#include <string_view>

#include "shared/status.h"

namespace pvfs {

// The level names, lowest first, as a request and the errors spell them.
inline constexpr std::string_view kLogLevelNames = "trace, debug, info, warn, error, off";

// Sets the default logger's level to `name` ("trace", "debug", "info",
// "warn", "error" or "off") and logs the change at warn level (logged
// before the change when the new level would hide it). Errors:
// invalid_argument with a one-line message listing the valid names.
Status set_log_level(std::string_view name);

}  // namespace pvfs
