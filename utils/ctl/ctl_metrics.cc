#include "utils/ctl/ctl_metrics.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "shared/log_level.h"
#include "shared/metrics/prometheus.h"
#include "shared/secret.h"
#include "utils/ctl/command.h"
#include "utils/ctl/ctl_cluster.h"
#include "utils/common/metrics_probe.h"
#include "utils/ctl/metrics_view.h"

namespace pvfs::ctl {

namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr size_t kTopJobs = 10;

// Asks every target for its metrics at once; results parallel to `targets`.
std::vector<Result<metrics::Families>> fetch_all(const std::vector<DaemonTarget>& targets, const Cluster& cluster,
                                                 milliseconds timeout) {
  return ask_all<metrics::Families>(targets, [&](const DaemonTarget& t) {
    return fetch_metrics(t.kind, t.address, cluster.key, timeout);
  });
}

std::vector<DaemonSnapshot> snapshot_all(const std::vector<DaemonTarget>& targets, const Cluster& cluster,
                                         milliseconds timeout) {
  auto results = fetch_all(targets, cluster, timeout);
  std::vector<DaemonSnapshot> out;
  for (size_t i = 0; i < targets.size(); ++i) {
    DaemonSnapshot s{targets[i], std::nullopt};
    if (results[i]) s.families = std::move(*results[i]);
    out.push_back(std::move(s));
  }
  return out;
}

std::atomic<bool> g_stop{false};

void on_stop_signal(int) { g_stop = true; }

// Columns of the terminal on stdout, 0 when it is not a terminal.
size_t terminal_width() {
  if (!::isatty(STDOUT_FILENO)) return 0;
  struct winsize ws {};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

}  // namespace

int stats(const DaemonOptions& options, const std::vector<std::string>& names, StatsFormat format) {
  auto cluster = open_cluster(options, "stats");
  if (!cluster) return 1;
  auto targets = select_daemons(daemon_targets(cluster->config), names);
  if (!targets) {
    error("stats: {}", targets.status().detail());
    return 1;
  }
  const auto results = fetch_all(*targets, *cluster, cluster->timeout);
  int status = 0;
  std::vector<DaemonSnapshot> answered;
  for (size_t i = 0; i < targets->size(); ++i) {
    const DaemonTarget& t = (*targets)[i];
    if (!results[i]) {
      error("stats: {} ({}): {}", t.name, t.address.to_string(), results[i].status().to_string());
      status = 1;
      continue;
    }
    answered.push_back({t, *results[i]});
  }
  switch (format) {
    case StatsFormat::json: std::fputs(render_stats_json(answered).c_str(), stdout); break;
    case StatsFormat::prometheus:
      std::fputs(metrics::render_prometheus(merge_with_daemon_label(answered)).c_str(), stdout);
      break;
    case StatsFormat::text:
      for (size_t i = 0; i < answered.size(); ++i)
        std::fputs(fmt::format("{}{}", i ? "\n" : "", render_stats(answered[i].target, *answered[i].families)).c_str(),
                   stdout);
      break;
  }
  return status;
}

int top(const DaemonOptions& options, double interval_s, uint32_t iterations) {
  auto cluster = open_cluster(options, "top");
  if (!cluster) return 1;
  const auto targets = daemon_targets(cluster->config);
  const auto interval = std::chrono::duration_cast<milliseconds>(std::chrono::duration<double>(interval_s));
  // A daemon that hangs must not stall the view: it gets at most one interval.
  const milliseconds timeout = std::min(cluster->timeout, std::max(interval, milliseconds(200)));
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);

  auto before = snapshot_all(targets, *cluster, timeout);
  auto before_at = Clock::now();
  const std::string title_base =
      fmt::format("pvfs top: {} storage server(s), {} metadata server(s), every {:g} s",
                  cluster->config.servers.size(), cluster->config.mds.size(), interval_s);
  for (uint32_t frame_no = 0; !g_stop && (iterations == 0 || frame_no < iterations); ++frame_no) {
    const auto wake = before_at + interval;
    while (!g_stop && Clock::now() < wake)
      std::this_thread::sleep_for(std::min<Clock::duration>(milliseconds(50), wake - Clock::now()));
    if (g_stop) break;
    auto now = snapshot_all(targets, *cluster, timeout);
    const auto now_at = Clock::now();
    const double elapsed = std::chrono::duration<double>(now_at - before_at).count();
    const TopFrame frame = compute_top(before, now, elapsed, kTopJobs);
    const size_t width = terminal_width();
    const std::string text = render_top(frame, title_base, width);
    if (width) std::fputs(("\033[H\033[2J" + text).c_str(), stdout);
    else std::fputs((frame_no ? "\n" + text : text).c_str(), stdout);
    std::fflush(stdout);
    before = std::move(now);
    before_at = now_at;
  }
  return 0;
}

int loglevel(const DaemonOptions& options, const std::string& name, const std::string& level) {
  static constexpr const char* kLevels[] = {"trace", "debug", "info", "warn", "error", "off"};
  if (std::none_of(std::begin(kLevels), std::end(kLevels), [&](const char* l) { return level == l; })) {
    error("loglevel: unknown log level '{}': use one of {}", level, kLogLevelNames);
    return 1;
  }
  auto cluster = open_cluster(options, "loglevel");
  if (!cluster) return 1;
  auto targets = select_daemons(daemon_targets(cluster->config), {name});
  if (!targets) {
    error("loglevel: {}", targets.status().detail());
    return 1;
  }
  std::vector<Status> results(targets->size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < targets->size(); ++i)
    threads.emplace_back([&, i] {
      const DaemonTarget& t = (*targets)[i];
      results[i] = send_log_level(t.kind, t.address, cluster->key, cluster->timeout, level);
    });
  for (auto& t : threads) t.join();
  int status = 0;
  for (size_t i = 0; i < targets->size(); ++i) {
    const DaemonTarget& t = (*targets)[i];
    if (results[i].ok()) {
      std::fputs(fmt::format("{}: log level {}\n", t.name, level).c_str(), stdout);
    } else {
      error("loglevel: {} ({}): {}", t.name, t.address.to_string(), results[i].to_string());
      status = 1;
    }
  }
  return status;
}

void add_stats(Commands& commands) {
  struct Options {
    std::vector<std::string> names;
    bool json = false, prometheus = false;
  };
  auto o = std::make_shared<Options>();
  auto* command = commands.add(
      "stats",
      "per-daemon counters: requests and bytes by type with p50/p99 latency, queue depths, "
      "scheduling counters, jobs (exit 1 naming daemons that do not answer)",
      [o](const DaemonOptions& d) {
        return stats(d, o->names,
                     o->json         ? StatsFormat::json
                     : o->prometheus ? StatsFormat::prometheus
                                     : StatsFormat::text);
      });
  commands.add_daemon_options(command);
  command->add_option("daemon", o->names, "mds0, server2, a storage server number, or all [all]");
  auto* json = command->add_flag("--json", o->json, "a JSON array: one object of raw samples per daemon");
  command->add_flag("--prometheus", o->prometheus, "the Prometheus text format, each sample labelled daemon=\"...\"")
      ->excludes(json);
}

void add_top(Commands& commands) {
  struct Options {
    double interval = 1.0;
    uint32_t iterations = 0;
  };
  auto o = std::make_shared<Options>();
  auto* command = commands.add(
      "top",
      "live view, redrawn every interval: servers (load, queue, MiB/s in/out, redirects "
      "held), metadata servers (ops/s, latency, file sets, inodes), busiest jobs",
      [o](const DaemonOptions& d) { return top(d, o->interval, o->iterations); });
  commands.add_daemon_options(command);
  // As top(1): -d the delay, -n the number of frames. --interval and -i
  // are the spellings of before, deprecated (-n used to be the interval).
  command->add_option("-d,--delay,--interval", o->interval, "seconds between frames (--interval: deprecated)")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 3600.0));
  command->add_option("-n,--iterations,-i", o->iterations, "stop after this many frames, 0: until Ctrl-C (-i: deprecated)")
      ->capture_default_str();
}

void add_loglevel(Commands& commands) {
  struct Options {
    std::string daemon, level;
  };
  auto o = std::make_shared<Options>();
  auto* command = commands.add(
      "loglevel", "change a daemon's log level while it runs (trace, debug, info, warn, error, off)",
      [o](const DaemonOptions& d) { return loglevel(d, o->daemon, o->level); });
  commands.add_daemon_options(command);
  command->add_option("daemon", o->daemon, "mds0, server2, a storage server number, or all")->required();
  command->add_option("level", o->level, "trace, debug, info, warn, error or off")->required();
}

}  // namespace pvfs::ctl
