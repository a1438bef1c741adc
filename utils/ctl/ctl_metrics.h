// pvfs-ctl stats, top and loglevel (see pvfs-ctl(1)): they ask the daemons
// of a config for their metric families or set their log levels over the
// real protocol (utils/common/metrics_probe.h) and print what utils/ctl/metrics_view.h
// renders. Each prints results on stdout and every error as one line
// "pvfs-ctl: ..." on stderr, and returns the process exit status (0 or 1).
// Blocking; not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "utils/ctl/ctl_commands.h"

namespace pvfs::ctl {

enum class StatsFormat { text, json, prometheus };

// The counters of the daemons `names` (select_daemons; empty: all in the
// config), asked in parallel, as tables, JSON or one Prometheus exposition
// (samples labelled daemon="..."). Exit 1 when a name matches no daemon
// (nothing is asked), or naming each daemon that did not answer (the output
// then holds the others).
int stats(const DaemonOptions& options, const std::vector<std::string>& names, StatsFormat format);

// Polls every daemon of the config each `interval_s` seconds and prints
// the rates of the last interval (render_top): on a terminal it clears the
// screen and redraws, fitted to its width; otherwise each frame is plain
// text followed by a blank line. Stops after `iterations` frames (0: until
// SIGINT or SIGTERM, which end it cleanly with exit 0). A daemon that does
// not answer shows as down. Exit 1 only when the config cannot be read.
int top(const DaemonOptions& options, double interval_s, uint32_t iterations);

// Sets the log level of the daemon `name` ("mds0", "server2", a bare
// server number, or "all") to `level` (trace, debug, info, warn, error,
// off) and prints one line per daemon changed. Exit 1 for an unknown level
// or name (nothing is asked), or naming each daemon that did not answer or
// refused.
int loglevel(const DaemonOptions& options, const std::string& name, const std::string& level);

}  // namespace pvfs::ctl
