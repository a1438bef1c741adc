// The metadata servers of an ANU scenario, deciding as pvfs-mds does: each
// member meters its own intervals and the delegate takes its turn once per
// heartbeat, with the daemon's own objects (policy/membership:
// IntervalMeter, Membership::step), so the rules between tunings are the
// daemon's: one tuning per interval, none before the first interval is
// over, only reports that are new since the last tuning, and those of
// every member. Each member runs mds/cluster/mds_cluster.cc's heartbeat
// (close its own interval if due, the delegate's turn, a heartbeat to each
// other member whose answer carries that member's newest report), all at
// the same instants, the delegate's first: so the others' reports of an
// interval reach the delegate one heartbeat after they close, as they do
// when the daemons start together. Not modelled: network delay (an answer
// arrives at once) and failures (every member answers every heartbeat, so
// the delegate is always the lowest id). Not thread-safe: one simulation.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <vector>

#include "policy/membership/membership.h"
#include "policy/placement/anu_map.h"

namespace pvfs::sim {

class AnuCluster {
 public:
  using Nanos = std::chrono::nanoseconds;

  // `members` (at least one) start at virtual time zero on a uniform map of
  // them; `options.tune_interval` is every member's measuring interval too.
  AnuCluster(std::vector<MdsId> members, mds::MembershipOptions options);

  // A request of file set `set` for `member` arrived at `arrival`:
  // outstanding (its backlog) until record() of the same arrival.
  void arrived(MdsId member, Nanos arrival, FileSetId set);
  // A request `member` served, which arrived at `arrival`, finished
  // `latency` after it.
  void record(MdsId member, Nanos arrival, Nanos latency);

  struct Round {
    bool closed = false;                // the members closed an interval (they close together)
    std::optional<mds::NextMap> next;   // the map the delegate issued, if it did
  };
  // A heartbeat round at virtual time `now` (not before the previous one):
  // every member's heartbeat, the delegate's first. A map the delegate
  // issues is map() from then on.
  Round heartbeat(Nanos now);

  const placement::AnuMap& map() const { return map_; }
  MdsId delegate() const { return members_.front(); }
  // The newest closed interval of `member` (seq 0: none yet).
  const mds::IntervalReport& last(MdsId member) const { return meters_.at(member).last(); }

 private:
  static mds::SteadyTime at(Nanos t) { return mds::SteadyTime(std::chrono::duration_cast<mds::SteadyTime::duration>(t)); }
  std::vector<MdsId> members_;  // sorted
  std::map<MdsId, mds::IntervalMeter> meters_;
  mds::Membership delegate_;  // the delegate's view
  placement::AnuMap map_;
};

}  // namespace pvfs::sim
