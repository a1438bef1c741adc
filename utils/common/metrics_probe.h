// Asks pvfs daemons for their metric families and sets their log levels,
// over the real protocol (the metrics and setLogLevel requests of both
// services): used by pvfs-ctl stats, top and loglevel. Synchronous (each
// call runs its own io_context); not for use inside another io_context's
// thread. Thread-safe: calls share nothing.
#pragma once

#include <chrono>
#include <string>

#include "config/config.h"
#include "shared/metrics/metrics.h"
#include "shared/secret.h"
#include "shared/status.h"
#include "utils/common/daemon_probe.h"

namespace pvfs {

// The metric families of the daemon of `kind` at `at`. Errors: those of the
// connection (unavailable, timeout, access_denied) or of the daemon.
Result<metrics::Families> fetch_metrics(DaemonKind kind, const Endpoint& at, const Secret& key,
                                        std::chrono::milliseconds timeout);

// Sets the log level of the daemon of `kind` at `at` ("trace" .. "off").
// Errors: those of the connection, or invalid_argument from the daemon
// naming the valid levels.
Status send_log_level(DaemonKind kind, const Endpoint& at, const Secret& key,
                      std::chrono::milliseconds timeout, const std::string& level);

}  // namespace pvfs
