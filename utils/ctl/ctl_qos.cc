// pvfs-ctl qos: per-job QoS goals on the metadata delegate's coordinator
// (set, list, clear, status, policy). The views are utils/ctl/qos_view.h.
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
};

int usage(const char* why) {
  std::fprintf(stderr, "pvfs-ctl: qos: %s (see pvfs-ctl qos --help)\n", why);
  return 2;
}

int run_qos(const DaemonOptions& d, const QosOptions& o) {
  QosAction a;
  const std::string verb = o.words.empty() ? "status" : o.words[0];
  const size_t args = o.words.empty() ? 0 : o.words.size() - 1;
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
    return usage("the actions are set, list, clear, status and policy");
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
      "'list', 'clear JOB', 'status' (goal, elapsed, projected finish, bound, throughput, window, loss per job), "
      "'policy off|average|ushape'",
      [o](const DaemonOptions& d) { return run_qos(d, *o); });
  commands.add_daemon_options(command);
  command->add_option("action", o->words, "set JOB, list, clear JOB, status (default), policy NAME")->expected(0, 2);
  command->add_option("-r,--runtime", o->runtime, "set: the job's required execution time, e.g. 90s, 10m, 1h30m");
  command->add_option("-s,--start", o->start,
                      "set: when the job's clock starts: now, +DURATION, seconds since 1970 or "
                      "YYYY-MM-DDTHH:MM:SS (UTC) [at the job's first I/O]");
  command->add_option("-b,--bytes", o->bytes, "set: the job's total I/O, for the average bound, e.g. 64G")
      ->transform(size_transform());
  command->add_flag("--json", o->json, "one JSON object with the raw numbers instead of the tables");
}

}  // namespace pvfs::ctl
