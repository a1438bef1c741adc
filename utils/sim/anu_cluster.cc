#include "utils/sim/anu_cluster.h"

#include <algorithm>

#include "shared/status.h"

namespace pvfs::sim {
namespace {

std::vector<MdsId> sorted(std::vector<MdsId> ids) {
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace

AnuCluster::AnuCluster(std::vector<MdsId> members, mds::MembershipOptions options)
    : members_(sorted(std::move(members))),
      delegate_(members_, members_.front(), at(Nanos(0)), options),
      map_(std::move(placement::AnuMap::uniform(members_)).value()) {
  for (MdsId m : members_) meters_.emplace(m, mds::IntervalMeter(at(Nanos(0)), options.tune_interval));
}

void AnuCluster::arrived(MdsId member, Nanos arrival, FileSetId set) {
  meters_.at(member).arrived(at(arrival), set);
}

void AnuCluster::record(MdsId member, Nanos arrival, Nanos latency) {
  mds::IntervalMeter& meter = meters_.at(member);
  meter.record(latency);
  meter.finished(at(arrival), at(arrival + latency));
}

AnuCluster::Round AnuCluster::heartbeat(Nanos now) {
  Round round;
  const mds::SteadyTime t = at(now);
  // The delegate's heartbeat comes first in the round: it closes its own
  // interval and takes its turn; the answers to its heartbeat carry what
  // the others had closed before this round.
  if (auto report = meters_.at(delegate()).close(t)) {
    round.closed = true;
    delegate_.own_report(*report);
  }
  round.next = delegate_.step(map_, t);
  if (round.next) {
    round.next->map.set_issuer(delegate());
    map_ = round.next->map;
  }
  for (const auto& [member, meter] : meters_)
    if (member != delegate()) delegate_.heard(member, t, meter.last());
  // Then the others' heartbeats.
  for (auto& [member, meter] : meters_)
    if (member != delegate() && meter.close(t)) round.closed = true;
  return round;
}

}  // namespace pvfs::sim
