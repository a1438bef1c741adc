// Who is in the MDS cluster and what the delegate does about it
// (../shared/papers/anu-placement.txt §4, §6): which members are alive by
// their heartbeats, which is the delegate (the live member with the lowest
// id), and the delegate's next map: failed members removed, recovered or
// new ones added, and once per tuning interval the tuner's rescaling from
// each member's latency report. Pure: time comes in as an argument, no I/O;
// the daemon (mds/cluster/mds_cluster.h) and the tests drive the same code.
// Not thread-safe: owned by the MDS's network thread.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "mds/placement/anu_map.h"
#include "mds/placement/anu_tuner.h"
#include "mds/placement/policy.h"

namespace pvfs::mds {

using SteadyTime = std::chrono::steady_clock::time_point;

// A member's mean request latency over one of its measuring intervals.
struct IntervalReport {
  uint64_t seq = 0;  // 0: none yet
  double latency_ms = 0;
  uint64_t requests = 0;
};

struct MembershipOptions {
  std::chrono::milliseconds dead_after{3000};
  std::chrono::milliseconds tune_interval{10000};
  placement::Policy policy = placement::Policy::anu;
  placement::TunerOptions tuner;
};

// Why the delegate made a new map.
enum class MapChange : uint8_t { removed, added, tuned };

struct NextMap {
  placement::AnuMap map;
  MapChange why;
  MdsId member;                                    // removed or added (tuned: the delegate)
  std::optional<placement::TuneResult> tuning;     // tuned only
};

class Membership {
 public:
  // `members`: every configured member, `self` among them; `start`: when
  // this process started. Every member counts as alive until `dead_after`
  // past `start` (they may still be starting), then only while heard from.
  Membership(std::vector<MdsId> members, MdsId self, SteadyTime start, MembershipOptions options);

  // A heartbeat (or any message) from `member` at `now`, carrying its last
  // complete interval.
  void heard(MdsId member, SteadyTime now, const IntervalReport& report);
  // This member's own last complete interval.
  void own_report(const IntervalReport& report) { reports_[self_] = report; }

  bool alive(MdsId member, SteadyTime now) const;
  std::vector<MdsId> alive_members(SteadyTime now) const;
  // The live member with the lowest id.
  MdsId delegate(SteadyTime now) const;
  bool is_delegate(SteadyTime now) const { return delegate(now) == self_; }
  // Whether this member may serve: it has heard from every other member
  // once (and so holds the newest map they have) or waited `dead_after`.
  bool ready(SteadyTime now) const;
  const IntervalReport* report(MdsId member) const;
  const std::vector<MdsId>& members() const { return members_; }
  MdsId self() const { return self_; }

  // What the delegate should distribute next, given the newest `map`, or
  // nullopt. One change at a time, in this order: a member in the map that
  // is dead leaves it; a live member missing from it (new, or recovered
  // and heard from for `dead_after`) joins; otherwise, once per tuning
  // interval and only under Policy::anu, the tuner rescales it with the
  // reports that are new since the last tuning. Call only on the delegate.
  std::optional<NextMap> next_map(const placement::AnuMap& map, SteadyTime now);
  // The last tuning step next_map() ran, whether or not it changed the map
  // (for the history pvfs-ctl mds shows); cleared by taking it.
  std::optional<placement::TuneResult> take_tuning() { return std::exchange(last_tuning_, std::nullopt); }

 private:
  struct Peer {
    std::optional<SteadyTime> last_heard;
    std::optional<SteadyTime> alive_since;  // start of the current run of heartbeats
  };
  std::vector<MdsId> members_;  // sorted
  MdsId self_;
  SteadyTime start_;
  MembershipOptions options_;
  std::map<MdsId, Peer> peers_;
  std::map<MdsId, IntervalReport> reports_;
  // The delegate's memory between tunings: when it last tuned and which
  // report of each member it used then (for divergent tuning).
  std::optional<SteadyTime> last_tuned_;
  std::map<MdsId, IntervalReport> used_;
  std::optional<placement::TuneResult> last_tuning_;
};

}  // namespace pvfs::mds
