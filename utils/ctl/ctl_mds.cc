#include "utils/ctl/ctl_mds.h"

#include <cstdio>
#include <memory>

#include "utils/ctl/command.h"
#include "utils/ctl/ctl_cluster.h"
#include "utils/common/mds_status.h"
#include "utils/ctl/mds_view.h"

namespace pvfs::ctl {

int mds(const DaemonOptions& options, bool json, bool verbose) {
  auto cluster = open_cluster(options, "mds");
  if (!cluster) return 1;
  std::vector<DaemonTarget> targets;
  for (const auto& t : daemon_targets(cluster->config))
    if (t.kind == DaemonKind::mds) targets.push_back(t);
  const auto views = ask_all<MdsClusterView>(targets, [&](const DaemonTarget& t) {
    return mds_cluster_status(t.address, cluster->key, cluster->timeout);
  });
  std::vector<MdsAnswer> answers;
  int status = 0;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (!views[i]) {
      error("mds: {} ({}): {}", targets[i].name, targets[i].address.to_string(), views[i].status().to_string());
      status = 1;
    }
    answers.push_back({targets[i], views[i]});
  }
  const MdsReport report = build_mds_report(answers);
  if (!report.view_of && !json) error("mds: no metadata server answered");
  std::fputs((json ? render_mds_json(report) : render_mds(report, verbose)).c_str(), stdout);
  return status;
}

void add_mds(Commands& commands) {
  struct Options {
    bool json = false, verbose = false;
  };
  auto o = std::make_shared<Options>();
  auto* command = commands.add(
      "mds",
      "the metadata server cluster: the ANU map (share and regions per member), each "
      "member's file sets, slowdown and last interval's latency, the delegate's tuning "
      "steps, file set moves (exit 1 naming members that do not answer)",
      [o](const DaemonOptions& d) { return mds(d, o->json, o->verbose); });
  commands.add_daemon_options(command);
  auto* json = command->add_flag("--json", o->json, "one JSON object with the raw numbers, all tuning steps and moves");
  command->add_flag("-v,--verbose", o->verbose, "list each member's file set ids")->excludes(json);
}

}  // namespace pvfs::ctl
