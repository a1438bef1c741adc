// pvfs-ctl qos: per-job QoS goals on the metadata delegate's coordinator
// (set, list, clear, status, policy) and the jobs' profiling runs and
// models (profile, train, show). The views are utils/ctl/qos_view.h.
#include <chrono>
#include <cstdio>
#include <memory>

#include "utils/ctl/command.h"
#include "utils/ctl/ctl_cluster.h"
#include "utils/ctl/qos_view.h"

namespace pvfs::ctl {

namespace {

struct QosOptions {
  std::vector<std::string> words;
  std::string runtime;
  std::string start;
  uint64_t bytes = 0;
  bool json = false;
  uint32_t share = 0;
  bool end = false;
  std::string io_time;
};

int usage(const char* why) {
  std::fprintf(stderr, "pvfs-ctl: qos: %s (see pvfs-ctl qos --help)\n", why);
  return 2;
}

// profile, train, show.
int run_model(const DaemonOptions& d, const QosOptions& o, const std::string& verb, size_t args) {
  QosModelAction a;
  if (args != 1) return usage(fmt::format("say qos {} JOB", verb).c_str());
  a.job = o.words[1];
  if (verb == "profile") {
    if (o.share > 100) return usage("--share is a percentage, 1..100");
    if (o.end) {
      a.kind = QosModelAction::Kind::profile_end;
      if (o.share > 0) return usage("--share goes with the start of a profile, not --end");
      if (!o.io_time.empty()) {
        auto io = parse_qos_duration(o.io_time);
        if (!io) {
          error("qos profile: --io-time: {}", io.status().detail());
          return 2;
        }
        a.io_time_ns = static_cast<uint64_t>(std::chrono::nanoseconds(*io).count());
      }
    } else {
      if (!o.io_time.empty()) return usage("--io-time goes with --end");
      a.kind = QosModelAction::Kind::profile;
      a.share_pct = o.share;
    }
  } else if (verb == "train") {
    a.kind = QosModelAction::Kind::train;
    if (!o.runtime.empty()) {
      auto runtime = parse_qos_duration(o.runtime);
      if (!runtime) {
        error("qos train: --runtime: {}", runtime.status().detail());
        return 2;
      }
      a.runtime_ms = static_cast<uint64_t>(runtime->count());
    }
  } else {
    a.kind = QosModelAction::Kind::show;
  }
  auto cluster = open_cluster(d, "qos");
  if (!cluster) return 1;
  // Ending a profile waits for the servers' last records (two periods).
  const auto timeout = a.kind == QosModelAction::Kind::profile_end ? cluster->timeout + std::chrono::milliseconds(3 * cluster->config.qos_period_ms)
                                                                    : cluster->timeout;
  auto view = qos_model_call(cluster->config, cluster->key, timeout, a);
  if (!view) {
    error("qos {}: {}", verb, view.status().to_string());
    return 1;
  }
  std::fputs((o.json ? render_qos_model_json(*view) : render_qos_model(*view)).c_str(), stdout);
  return 0;
}

int run_qos(const DaemonOptions& d, const QosOptions& o) {
  QosAction a;
  const std::string verb = o.words.empty() ? "status" : o.words[0];
  const size_t args = o.words.empty() ? 0 : o.words.size() - 1;
  if (verb == "profile" || verb == "train" || verb == "show") return run_model(d, o, verb, args);
  if (o.end || o.share > 0 || !o.io_time.empty()) return usage("--end, --share and --io-time go with qos profile");
  if (verb == "status" || verb == "list") {
    if (args != 0) return usage("status and list take no job");
  } else if (verb == "set") {
    if (args != 1) return usage("say qos set JOB --runtime DURATION");
    if (o.runtime.empty()) return usage("qos set needs --runtime DURATION (e.g. 10m)");
    a.kind = QosAction::Kind::set;
    a.job = o.words[1];
    auto runtime = parse_qos_duration(o.runtime);
    if (!runtime) {
      error("qos set: --runtime: {}", runtime.status().detail());
      return 2;
    }
    a.runtime_ms = static_cast<uint64_t>(runtime->count());
    if (!o.start.empty()) {
      const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
      auto start = parse_qos_start(o.start, now);
      if (!start) {
        error("qos set: --start: {}", start.status().detail());
        return 2;
      }
      a.start_unix_ms = *start;
    }
    a.bytes = o.bytes;
  } else if (verb == "clear") {
    if (args != 1) return usage("say qos clear JOB");
    a.kind = QosAction::Kind::clear;
    a.job = o.words[1];
  } else if (verb == "policy") {
    if (args != 1) return usage("say qos policy off|average|ushape");
    a.kind = QosAction::Kind::policy;
    a.policy = o.words[1];
  } else {
    return usage("the actions are set, list, clear, status, policy, profile, train and show");
  }
  auto cluster = open_cluster(d, "qos");
  if (!cluster) return 1;
  auto view = qos_call(cluster->config, cluster->key, cluster->timeout, a);
  if (!view) {
    error("qos {}: {}", verb, view.status().to_string());
    return 1;
  }
  std::string out;
  if (o.json) out = render_qos_json(*view);
  else if (verb == "list" || verb == "set" || verb == "clear") out = render_qos_list(*view);
  else out = render_qos_status(*view);
  if (verb == "set" && !o.json && view->replicas > 0)
    out += fmt::format("goal of job {} kept by {} metadata server(s)\n", a.job, view->replicas);
  std::fputs(out.c_str(), stdout);
  return 0;
}

}  // namespace

void add_qos(Commands& commands) {
  auto o = std::make_shared<QosOptions>();
  auto* command = commands.add(
      "qos",
      "per-job QoS goals in execution time (U-Shape): 'set JOB --runtime 10m [--start TIME] [--bytes N]', "
      "'list', 'clear JOB', 'status' (goal, elapsed, projected finish, bound, throughput, window, loss per job; "
      "BEHIND, or met/MISSED once its bytes are served), "
      "'policy off|average|ushape'; models: 'profile JOB [--share P]' ... 'profile JOB --end [--io-time D]', "
      "'train JOB [--runtime D]', 'show JOB'",
      [o](const DaemonOptions& d) { return run_qos(d, *o); });
  commands.add_daemon_options(command);
  command->add_option("action", o->words,
                      "set JOB, list, clear JOB, status (default), policy NAME, profile JOB, train JOB, show JOB")
      ->expected(0, 2);
  command->add_option("-r,--runtime", o->runtime,
                      "set: the job's required execution time, e.g. 90s, 10m, 1h30m; train: the time to train "
                      "for [the job's goal, or its profiled time]");
  command->add_option("--share", o->share, "profile: the job's share of every period while profiled, 1..100 [100]");
  command->add_flag("--end", o->end, "profile: end the job's profiling run (T_profile is from start to end)");
  command->add_option("--io-time", o->io_time,
                      "profile --end: the job's own measured I/O time [the clients' timing of its requests]");
  command->add_option("-s,--start", o->start,
                      "set: when the job's clock starts: now, +DURATION, seconds since 1970 or "
                      "YYYY-MM-DDTHH:MM:SS (UTC) [at the job's first I/O]");
  command->add_option("-b,--bytes", o->bytes, "set: the job's total I/O, for the average bound, e.g. 64G")
      ->transform(size_transform());
  command->add_flag("--json", o->json, "one JSON object with the raw numbers instead of the tables");
}

}  // namespace pvfs::ctl
