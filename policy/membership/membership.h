// Who is in the MDS cluster and what the delegate does about it (Wu and
// Burns, ANU, §4 and §6): which members are alive by their heartbeats,
// which is the delegate (the live member of the map with the lowest id),
// whether this member holds a lease to serve, and the delegate's next map:
// failed members removed, recovered or new ones added, and once per tuning
// interval the tuner's rescaling from each member's latency report.
// Fencing (ours, not the paper's): the delegate acts only while it hears a
// quorum of the map, and a member serves only under a lease renewed by
// answers to heartbeats it sent, so a member that was paused or cut off
// stops serving before anyone may take its file sets over.
// Also each member's own measuring interval (IntervalMeter), whose reports
// the delegate tunes with.
// Pure: time comes in as an argument, no I/O; the daemon
// (mds/cluster/mds_cluster.h), pvfs-sim's ANU scenario
// (utils/sim/anu_cluster.h) and the tests drive the same code.
// Not thread-safe: owned by the MDS's network thread.
#pragma once

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "policy/placement/anu_map.h"
#include "policy/placement/anu_tuner.h"
#include "policy/placement/policy.h"

namespace pvfs::mds {

// Time as the callers pass it: the daemon reads its clock, pvfs-sim counts
// virtual time from the time point zero.
using SteadyTime = std::chrono::steady_clock::time_point;

// A member's mean request latency over one of its measuring intervals.
struct IntervalReport {
  uint64_t seq = 0;  // 0: none yet
  double latency_ms = 0;
  uint64_t requests = 0;
  uint64_t backlog = 0;       // requests outstanding at the interval's end
  double backlog_age_ms = 0;  // their mean age then
  // How busy the member was (ours, issue 21): the fraction of the interval
  // with at least one request outstanding, and that busy time per request
  // completed (its service time when it serves one at a time); for an
  // emulated server (IntervalMeter::serving), per span it completed,
  // refused requests' included. 0 and 0 when unknown.
  double busy = 0;
  double service_ms = 0;
  // The requests that arrived per file set (by set; empty when the caller
  // named none) and the interval's length: what the delegate's overload
  // guard predicts from (placement::TunerOptions::overload_guard).
  std::vector<placement::SetRequests> sets{};
  double interval_ms = 0;
};

struct MembershipOptions {
  std::chrono::milliseconds dead_after{3000};
  // How long an answered heartbeat lets a member serve, counted from when
  // the heartbeat was sent. Shorter than dead_after, so a member that hears
  // nothing stops serving before the delegate may declare it failed.
  std::chrono::milliseconds lease{2000};
  std::chrono::milliseconds tune_interval{10000};
  placement::Policy policy = placement::Policy::anu;
  placement::TunerOptions tuner;
};

// One member's own measuring interval (Wu and Burns, §4: each server
// reports its mean latency over the last interval): requests are counted as
// they finish, and the interval closes at the first close() call at least
// `length` after it opened (the daemon calls it once per heartbeat).
class IntervalMeter {
 public:
  IntervalMeter(SteadyTime start, std::chrono::nanoseconds length) : start_(start), length_(length) {}

  // A request of this member finished after `latency`.
  void record(std::chrono::nanoseconds latency) {
    ++requests_;
    latency_ += latency;
  }
  // A request arrived at `arrival` and is outstanding until
  // finished(arrival): the backlog each report carries (issue 21).
  // From the first arrival to the last finish the member is busy.
  // Of file set `set`, when given: counted per set as well (what was
  // asked of the set, not what was served: a saturated member serves at
  // its own rate whatever arrives).
  void arrived(SteadyTime arrival, std::optional<FileSetId> set = std::nullopt) {
    if (set) ++sets_[*set];
    if (outstanding_ == 0) busy_since_ = std::max(arrival, start_);
    ++outstanding_;
    outstanding_since_ += arrival.time_since_epoch().count();
  }
  // The request that arrived at `arrival` was answered at `now`.
  void finished(SteadyTime arrival, SteadyTime now) {
    --outstanding_;
    outstanding_since_ -= arrival.time_since_epoch().count();
    if (outstanding_ == 0 && now > busy_since_) busy_ += now - busy_since_;
  }
  // A server of one request at a time (pvfs-mds --slowdown's emulated
  // one) serves a request from `from` to `to`; spans come in order and do
  // not overlap, and may lie ahead of the clock (a queued request). Once
  // this is called, the busy fraction is the time of these spans within
  // the interval, not the time with a request outstanding: the work the
  // daemon does after the emulated service overlaps the next request's
  // and is not the emulated server's. The service time is then that time
  // per span completed in the interval, not per request recorded: a
  // request the member refuses after its service (its file set moved on
  // a new map) took the emulated server's time too, and counting only
  // those recorded read a member that refuses most of what it gets (after
  // its share was cut, from clients on the old map) as many times slower
  // than it is, so that the delegate's guard kept load off it for good.
  void serving(SteadyTime from, SteadyTime to) {
    spans_ = true;
    span_ends_.push_back(to);
    if (from <= span_to_) {
      span_to_ = std::max(span_to_, to);
    } else {
      span_busy_ += span_to_ - span_from_;  // all of it past, in this interval
      span_from_ = from;
      span_to_ = to;
    }
  }
  // A member whose requests are served one at a time by one thread (the
  // daemon's event loop) reports that the thread worked `cpu` since the
  // last call. Once this is called, the busy time is the lesser of that
  // work and the time with a request outstanding: with many clients
  // waiting, a member has a request outstanding nearly all the time
  // however little it works, so that its service time would read as one
  // over its throughput; and the thread also works while none is (its
  // heartbeats, the delegate's tuning), which at a light load would read
  // as a slow service. serving()'s spans, when given, take precedence.
  void worked(std::chrono::nanoseconds cpu) {
    worked_given_ = true;
    worked_ += cpu;
  }
  // Closes the interval when `length` has passed since it opened (the next
  // one opens at `now`): its report, seq counting from 1, with the backlog
  // outstanding at `now`, which last() holds from then on. nullopt before.
  std::optional<IntervalReport> close(SteadyTime now);
  // The newest closed interval (seq 0: none yet).
  const IntervalReport& last() const { return last_; }

 private:
  SteadyTime start_;
  std::chrono::nanoseconds length_;
  uint64_t requests_ = 0;
  std::chrono::nanoseconds latency_{0};
  std::map<FileSetId, uint64_t> sets_;
  // Requests outstanding and the sum of their arrival times, so their
  // mean age needs no list.
  uint64_t outstanding_ = 0;
  SteadyTime::rep outstanding_since_ = 0;
  // Busy time in the current interval, and since when it has been busy
  // (while outstanding_ > 0; never before the interval opened).
  std::chrono::nanoseconds busy_{0};
  SteadyTime busy_since_{};
  // worked(): whether it was ever called, and the work reported since the
  // last close.
  bool worked_given_ = false;
  std::chrono::nanoseconds worked_{0};
  // serving(): the spans' time closed in this interval, and the run of
  // back-to-back spans still open (its part before the interval's start
  // was counted in the interval before).
  bool spans_ = false;
  std::chrono::nanoseconds span_busy_{0};
  SteadyTime span_from_{}, span_to_{};
  // The ends of the spans not yet counted as completed, oldest first (at
  // most the queue of the emulated server).
  std::deque<SteadyTime> span_ends_;
  IntervalReport last_;
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

  // An answer from `member` to a heartbeat this member sent at `sent`:
  // renews the lease (see lease_valid()).
  void answered(MdsId member, SteadyTime sent);

  bool alive(MdsId member, SteadyTime now) const;
  std::vector<MdsId> alive_members(SteadyTime now) const;
  // The live member of `map` with the lowest id; when none of the map's
  // members is alive, the live configured member with the lowest id. A
  // member outside the map (rejoining) is never the delegate while a
  // member of the map is alive: the delegate adds it back.
  MdsId delegate(const placement::AnuMap& map, SteadyTime now) const;
  bool is_delegate(const placement::AnuMap& map, SteadyTime now) const {
    return delegate(map, now) == self_;
  }
  // Whether this member hears a quorum of `map`'s members (itself
  // counted): more than half, or exactly half including the lowest id (so
  // one of two halves, never both, has it). Without it the delegate
  // changes nothing: a member cut off from the others, or just resumed
  // from a pause, must not remove them.
  bool quorum(const placement::AnuMap& map, SteadyTime now) const;
  // Whether this member may serve file sets at `now`: the delegate of
  // `map` (by this member's view) answered a heartbeat this member sent
  // less than `lease` ago, or, when this member is the delegate, a quorum
  // of the map did. Measured from the send time, so the delegate, which
  // counts a member alive from when it heard it, cannot declare it failed
  // (dead_after later) before the lease ran out.
  bool lease_valid(const placement::AnuMap& map, SteadyTime now) const;
  // Whether this member may serve: it has heard from every other member
  // once (and so holds the newest map they have) or waited `dead_after`.
  bool ready(SteadyTime now) const;
  const IntervalReport* report(MdsId member) const;
  const std::vector<MdsId>& members() const { return members_; }
  MdsId self() const { return self_; }

  // What the delegate should distribute next, given the newest `map`, or
  // nullopt (always nullopt without a quorum()). One change at a time, in this order: a member in the map that
  // is dead leaves it; a live member missing from it (new, or recovered
  // and heard from for `dead_after`) joins; otherwise, once per tuning
  // interval and only under Policy::anu, the tuner rescales it with the
  // reports that are new since the last tuning, as soon as every live
  // member of the map has sent one (or `dead_after` later, without the
  // missing). Call only on the delegate.
  std::optional<NextMap> next_map(const placement::AnuMap& map, SteadyTime now);
  // This member's turn as a possible delegate at `now` (the daemon takes it
  // once per heartbeat): next_map() when it is the delegate of `map` and
  // ready(), otherwise nullopt without tuning.
  std::optional<NextMap> step(const placement::AnuMap& map, SteadyTime now) {
    if (!is_delegate(map, now) || !ready(now)) return std::nullopt;
    return next_map(map, now);
  }
  // The last tuning step next_map() ran, whether or not it changed the map
  // (for the history pvfs-ctl mds shows); cleared by taking it.
  std::optional<placement::TuneResult> take_tuning() { return std::exchange(last_tuning_, std::nullopt); }

 private:
  struct Peer {
    std::optional<SteadyTime> last_heard;
    std::optional<SteadyTime> alive_since;  // start of the current run of heartbeats
    std::optional<SteadyTime> last_answer_sent;  // send time of the newest answered heartbeat
  };
  // Whether every live member of `map` has a report newer than the one
  // the last tuning used.
  bool all_reported(const placement::AnuMap& map, SteadyTime now) const;
  // When the lease from `member` runs out (self: never).
  std::optional<SteadyTime> answered_until(MdsId member) const;
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
  std::optional<uint64_t> tuned_version_;  // the version of the map the last tuning ran on
  // Per member, since the map last changed: the offered load of each
  // interval tuned on, weighted by its requests, and those requests.
  struct History {
    double load = 0;
    uint64_t requests = 0;
  };
  std::map<MdsId, History> history_;
  // Per member, the service time of its latest interval that measured one
  // (placement::LatencyReport::known_service_ms).
  std::map<MdsId, double> known_service_ms_;
  std::optional<placement::TuneResult> last_tuning_;
};

}  // namespace pvfs::mds
