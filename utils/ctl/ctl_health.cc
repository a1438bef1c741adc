// pvfs-ctl health (alias status): the cluster's health in one word and one
// line per reason, as `ceph -s` gives it. Gathering is
// utils/common/health_probe.h, the judgement policy/health/health.h; this
// file holds the options, the JSON form and the exit status.
#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "policy/health/health.h"
#include "shared/text_format.h"
#include "utils/common/health_probe.h"
#include "utils/ctl/command.h"
#include "utils/ctl/ctl_cluster.h"

namespace pvfs::ctl {

namespace {

// What could not be judged at all (no config, no key): beside 0/1/2 for
// OK/WARN/ERR, as a monitoring plugin's UNKNOWN.
constexpr int kUnknown = 3;

std::string render_json(const health::Verdict& v) {
  std::string out = fmt::format("{{\"status\": {}, \"checks\": [", json_string(health::level_name(v.level)));
  for (size_t i = 0; i < v.reasons.size(); ++i) {
    const auto& r = v.reasons[i];
    out += fmt::format("{}\n  {{\"severity\": {}, \"check\": {}, \"summary\": {}}}", i ? "," : "",
                       json_string(health::level_name(r.level)), json_string(r.check), json_string(r.text));
  }
  return out + (v.reasons.empty() ? "]}\n" : "\n]}\n");
}

int health_command(const DaemonOptions& options, const health::Thresholds& limits, bool json) {
  auto cluster = open_cluster(options, "health");
  if (!cluster) return kUnknown;
  const health::Verdict verdict = health::judge(gather_health(cluster->config, cluster->key, cluster->timeout), limits);
  std::fputs((json ? render_json(verdict) : health::render(verdict)).c_str(), stdout);
  return static_cast<int>(verdict.level);
}

}  // namespace

void add_health(Commands& commands) {
  struct Options {
    health::Thresholds limits;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  auto* command = commands.add(
      "health",
      "HEALTH_OK, HEALTH_WARN or HEALTH_ERR and one line per reason: daemons down, full servers, "
      "slow requests, delete backlog, fenced members, unserved file sets, clock skew "
      "(exit 0, 1, 2; 3 when the config cannot be read)",
      [o](const DaemonOptions& d) { return health_command(d, o->limits, o->json); });
  command->alias("status");
  commands.add_daemon_options(command);
  command->add_flag("--json", o->json, "one JSON object: status and a list of checks");
  command->add_option("--full-warn", o->limits.full_warn_percent, "percent full at which a server warns")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0));
  command->add_option("--full-err", o->limits.full_err_percent, "percent full at which a server is an error")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 100.0));
  command->add_option("--slow-ms", o->limits.slow_request_ms, "a request in progress this long is slow")
      ->capture_default_str();
  command->add_option("--backlog", o->limits.delete_backlog_files,
                      "unlinked files awaiting deletion from which the backlog warns")
      ->capture_default_str();
  command->add_option("--skew-ms", o->limits.clock_skew_ms, "clock skew between daemons that warns")
      ->capture_default_str();
}

}  // namespace pvfs::ctl
