#include "utils/common/mds_status.h"

#include "utils/common/call_once.h"
#include "utils/common/mds_status_wire.h"

namespace pvfs {

MdsClusterView cluster_view_from_wire(proto::mds::Reply::ClusterState::Reader state) {
  MdsClusterView v;
  v.self = state.getSelf();
  v.delegate = state.getDelegate();
  v.map = state.getMap();
  v.placement = state.getPlacement();
  v.serving = state.getServing();
  for (auto m : state.getMembers()) {
    MdsMemberView member;
    member.id = m.getId();
    member.address = m.getAddress();
    member.alive = m.getAlive();
    member.share = m.getShare();
    for (uint16_t set : m.getFileSets()) member.file_sets.push_back(set);
    const auto l = m.getLatency();
    member.interval = {l.getSeq(),     l.getLatencyMs(), l.getRequests(), l.getBacklog(),
                       l.getBacklogAgeMs(), l.getBusy(), l.getServiceMs()};
    member.slowdown = m.getSlowdown();
    v.members.push_back(std::move(member));
  }
  for (auto t : state.getHistory()) {
    MdsTuningStep step;
    step.at_unix_ms = t.getAtUnixMs();
    step.average_ms = t.getAverageMs();
    step.map_version = t.getMapVersion();
    for (auto s : t.getServers())
      step.servers.push_back({s.getServer(), s.getLatencyMs(), s.getDecision(), s.getOldShare(), s.getNewShare()});
    v.history.push_back(std::move(step));
  }
  for (auto m : state.getMoves())
    v.moves.push_back({m.getSet(), m.getFrom(), m.getTo(), m.getAtUnixMs(), m.getBytes(), m.getDurationMs(),
                       m.getOutcome()});
  return v;
}

Result<MdsClusterView> mds_cluster_status(const Endpoint& at, const Secret& key, Wait wait) {
  return call_once<MdsClusterView>(
      at, key, wait, [](rpc::OutMessage& out) { out.init_body<proto::mds::Request>().setClusterStatus(); },
      [](rpc::InMessage& reply) -> Result<MdsClusterView> {
        auto body = reply.body<proto::mds::Reply>();
        if (!body.isCluster()) return Status(Errc::io, "unexpected reply to clusterStatus");
        return cluster_view_from_wire(body.getCluster());
      });
}

}  // namespace pvfs
