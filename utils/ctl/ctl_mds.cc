#include "utils/ctl/ctl_mds.h"

#include <cstdio>

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

}  // namespace pvfs::ctl
