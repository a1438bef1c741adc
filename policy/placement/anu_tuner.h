// The ANU delegate's tuning step (Wu and Burns, §4,
// §6): from the current map and each server's mean request latency over the
// last interval, scale down the regions of servers above the average and
// up those below, with thresholding, top-off and divergent tuning against
// over-tuning. Stateless apart from the previous interval's latencies,
// which the caller passes back in, so a new delegate after a failure
// carries on (without them divergent tuning is skipped, as the paper says).
// Ours beyond the paper (switchable, TunerOptions; issue 21): the backlog
// each server reports, so a saturated server is seen and shrunk at any
// load; and the busy model: each server's busy fraction and service time
// give the load it is offered, pooled over the intervals since the map last
// changed (the caller keeps that history, LatencyReport::history_*), and
// the servers are balanced on a queue's latency at that load, a change made
// only when it exceeds the noise of the arrivals counted; and the overload
// guard: from the requests each file set brought, no new map hands a
// server more than it can serve; and the floor: an idle server shrunk to a
// sliver gets part of an even share back when it would be fast enough there.
// Pure: no I/O, no clock; a free function, safe from any thread.
//
// How much to scale is not given by the paper ("the delegate scales down
// the mapped regions for servers above the average and scales up the mapped
// regions for servers below"; the others then change "proportionally in
// order to maintain the half-occupancy invariant"). We scale a tuned
// server's region by L / latency -- the factor that would bring it to the
// average if latency were proportional to load -- bounded to
// [1/max_factor, max_factor] per interval (an idle server, latency 0,
// gets max_factor), then renormalize every region so half the interval
// stays mapped.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "policy/placement/anu_map.h"
#include "shared/ids.h"
#include "shared/status.h"

namespace pvfs::placement {

// Requests of one file set that arrived at a server in an interval.
struct SetRequests {
  FileSetId set;
  uint64_t requests = 0;
  bool operator==(const SetRequests&) const = default;
};

// What one server measured over the last interval.
struct LatencyReport {
  MdsId server;
  double latency_ms = 0;  // mean request latency; 0 when it served nothing
  uint64_t requests = 0;  // requests completed in the interval
  // The backlog at the end of the interval: requests that had arrived and
  // were not answered yet, and their mean age so far (0 and 0 from
  // a member that does not report them). A saturated server completes
  // requests at its full rate while its queue grows without bound; only
  // these show that.
  uint64_t backlog = 0;
  double backlog_age_ms = 0;
  // How busy it was (ours, issue 21): the fraction of the interval with a
  // request outstanding, in [0, 1], and that busy time per completed
  // request (ms); 0 and 0 from a member that does not report them.
  double busy = 0;
  double service_ms = 0;
  // The load it was offered (offered_load) over the earlier intervals
  // since the map last changed, weighted by their requests, and those
  // requests (0: none); the delegate keeps them (mds::Membership).
  double history_load = 0;
  uint64_t history_requests = 0;
  // The requests that arrived per file set, by set (empty: not counted),
  // and how long the interval was (ms; 0 unknown): with service_ms, what
  // the overload guard (TunerOptions::overload_guard) predicts from.
  std::vector<SetRequests> sets{};
  double interval_ms = 0;
  // service_ms of its latest interval that measured one (the delegate
  // remembers it: a server emptied of file sets measures none); 0 unknown.
  double known_service_ms = 0;
};

// Whether a server's queue stands: busy all through this interval and the
// last (at least 98%), holding 2 or more requests at both ends and more
// than 5% of what it completed, neither grown nor shrunk by more than one.
// It is offered more than it serves, and how much more is hidden: a member
// reads at most so many requests of a connection, so a saturated member's
// backlog stops at that cap and the rest wait in the socket and the client.
bool standing_queue(const LatencyReport& current, const LatencyReport* previous);

// What arrived at a server in `current`'s interval: what it completed plus
// the growth of its backlog since `previous` (when known); with a standing
// queue, what it completed plus the whole backlog (a guess at what the cap
// hid, enough to show it cannot keep up).
double arrivals(const LatencyReport& current, const LatencyReport* previous);

// The load offered to a server in `current`'s interval, as a fraction of
// what it can serve: its busy fraction scaled by arrivals() over what it
// completed. Above 1 it cannot keep up; 0 without requests.
double offered_load(const LatencyReport& current, const LatencyReport* previous);

// The M/G/1 queue of TunerOptions::busy: the mean latency of a server with
// mean service time `service_ms`, busy fraction `load` in [0, 1) and
// service time variability `scv`; and its inverse, the busy fraction at
// which that latency is `latency_ms` (0 when the service alone is that
// long or longer).
double queue_latency(double service_ms, double load, double scv);
double load_at_latency(double service_ms, double latency_ms, double scv);

// How the system-wide average L is formed. The paper uses "a weighted
// average of the current latencies" without saying of what, and reports
// the median working as well.
//  - request_weighted: weighted by requests served, the mean latency of all
//    requests in the interval. A saturated member that serves most of them
//    is the average, so it is never above the band (our 80% trap).
//  - mean, median: over every reported member.
//  - capped: request-weighted, but no member weighs more than all the
//    others together, so one member far above the rest is always above L
//    (two saturated members still are L: the backlog rule, not the
//    average, is what gets out of the trap; see TunerOptions::backlog).
enum class Average : uint8_t { request_weighted, mean, median, capped };

struct TunerOptions {
  // Thresholding (§6): only servers outside [(1-k)L, (1+k)L] are tuned.
  bool thresholding = true;
  double threshold = 0.5;  // k; the paper's choice
  // Top-off (§6): only servers above the average (above (1+k)L with
  // thresholding) are tuned, always down; the others grow only through the
  // renormalization.
  bool top_off = true;
  // Divergent tuning (§6): only servers above the average whose latency is
  // not falling, or below it whose latency is not rising, are tuned. A
  // latency equal to the previous one counts as diverging: a server stuck
  // away from the average must not be frozen there.
  bool divergent = true;
  Average average = Average::request_weighted;
  // Bound on one interval's scale factor (>= 1).
  double max_factor = 4.0;
  // Ours, not the paper's (issue 21, docs/sim/anu-heterogeneous.md); off,
  // each gives the paper's tuner back.
  // Backlog: a server's latency counts its outstanding requests at their
  // age so far beside its completed ones; a server whose backlog grew by 2
  // or more and by more than `backlog_growth` x the requests it completed,
  // or whose queue stands (standing_queue), is shrunk to the part of its
  // arrivals it served (or by L / latency if that is less), whatever the
  // band says, and never ends with a larger share; a server above the
  // average whose backlog fell is converging (divergent tuning: its
  // latency is memento requests draining).
  bool backlog = true;
  double backlog_growth = 0.05;
  // Bound on a backlogged server's shrink per interval (>= 1), apart from
  // max_factor: the part it served is a measure of its capacity, not a
  // guess from latency, so it may take larger steps.
  double backlog_max_factor = 4.0;
  // Grow the underloaded: what backlogged servers shed goes to the servers
  // below the band, weighted by how far below and by share plus a floor of
  // 1/(4k), instead of to everyone in proportion to their shares (which
  // leaves an idle server's near-zero share near zero). Off by default: in
  // pvfs-sim it did not help (docs/sim/anu-heterogeneous.md).
  bool grow_underloaded = false;
  // Busy: a server that reports how busy it was (LatencyReport::busy,
  // service_ms) is tuned on the latency a queue that busy has (M/G/1, see
  // service_scv), not on the mean of the requests it happened to
  // complete, and a tuned one is scaled to the busy fraction at which that
  // model gives the average L (a server whose service alone exceeds L is
  // shrunk by max_factor). Near capacity a small
  // change of load changes latency a lot: L / latency over-corrects, and
  // one interval's latency is too noisy to settle on.
  bool busy = true;
  // With busy: how variable a server's service time is, as its squared
  // coefficient of variation (variance over the squared mean; >= 0). The
  // queue is M/G/1 (Pollaczek-Khinchine): at busy fraction p a request
  // waits service x (1 + p (1 + scv) / (2 (1 - p))). 1 is M/M/1, the
  // default: a real member's creates and stats take very different times.
  // 0 is a server whose every request takes the same time (M/D/1: the
  // simulator's servers and pvfs-mds --slowdown), for which M/M/1
  // overstates latency near capacity by up to twice; what that changes is
  // in docs/sim/anu-heterogeneous.md ("The queue model").
  double service_scv = 1;
  // With busy: a modeled server is scaled only when its factor differs
  // from 1 by more than `significance` standard deviations of its count
  // of arrivals (1 / sqrt(n) relative, n over every interval since the map
  // last changed); 0 = always.
  double significance = 3;
  // The overload guard (ours, issue 21): a new map must not make a server
  // busier than halfway from the cluster's utilization to saturation, by
  // what the reports predict (LatencyReport::sets, service_ms and
  // interval_ms: the file sets the server would own, each at the requests
  // that arrived for it in the interval, times the server's own service
  // time), unless that server is already busier under the current map,
  // and then not busier than that. A change that would is taken in part
  // (a half, a quarter, an eighth of each share's move) or not at all,
  // unless it lowers the busiest server's load. One file set can carry
  // more than a slow server can serve: moving it there swings the cluster
  // (docs/sim/anu-heterogeneous.md, "Hot file sets"). Servers without a
  // service time, and reports without set counts, predict nothing.
  bool overload_guard = true;
  // The floor (ours, issue 21): a fraction of an even share (1/n of the
  // mapped half, n members), in [0, 1]; 0 = off, the paper's tuner. With
  // top-off a server below the band grows only as others shrink, so one
  // shrunk to a sliver that serves nothing keeps it for good while the
  // rest sit inside the band, whatever capacity it has. On latency (busy
  // off) an idle server below the floor is raised to it if it would be
  // inside the band there (a queue with its last known service time,
  // offered the floor's part of the requests served, against the same
  // queue model of the servers that served); with busy, one the
  // model emptied comes back to it when the others cannot carry the load.
  // The overload guard still cuts a raise that would overload it.
  double floor_share = 0.25;
  // The hand-over (ours, issue 21; only with overload_guard): when a
  // server's queue stands (standing_queue) and the map would stay as it
  // is (the guard refused every part of the step, or nothing was scaled),
  // that server gives one whole partition of its region to one other
  // server: of every such pair, the one the reports predict leaves the
  // busier of the two least busy, if the giver ends less busy and the
  // taker not above the guard's bound (nor above what it carried, if it
  // was). A shrinking region gives up whichever file sets hash into its
  // end and re-hashes them onto any server, so when the set a stall hangs
  // on fits only one member, no step the guard accepts moves it there
  // (docs/bench/anu.md, "A hand-over from a standing queue"). It looks
  // in grids of 128 to 1024 partitions (splitting moves nothing; the map
  // keeps the finer grid), so a set that lies in the giver's partial
  // partition of one grid lies in a whole one of another.
  bool hand_over = true;
};

// Why a server's region was or was not scaled explicitly.
enum class Decision : uint8_t {
  scaled,        // scaled by `factor`
  not_reported,  // no latency for it this interval (or nobody served anything)
  at_average,    // latency equals the average
  within_band,   // thresholding: inside [(1-k)L, (1+k)L]
  underloaded,   // top-off: below the average, left to grow implicitly
  converging,    // divergent tuning: moving toward the average
  raised,        // idle below the floor (floor_share): raised to it
  backlogged,    // its backlog grows: scaled down by `factor` (<= 1), whatever L says
};
// "scaled", "not reported", "at average", "within band", "underloaded",
// "converging", "raised", "backlogged".
std::string_view decision_name(Decision decision);

struct ServerTuning {
  MdsId server;
  double latency_ms = 0;  // as tuned on (options.backlog: outstanding counted); 0 if not reported
  Decision decision = Decision::not_reported;
  double factor = 1;      // explicit scale factor, before renormalization (raised from nothing: 1)
  double old_share = 0;   // fraction of the mapped half
  double new_share = 0;
};

struct TuneResult {
  double average_ms = 0;              // L
  std::vector<ServerTuning> servers;  // one per member, in id order
  std::optional<AnuMap> map;          // version + 1; nullopt = unchanged
  // The part of the shares' moves the overload guard let through: 1 all
  // (or the guard did not act), 0.5, 0.25, 0.125, or 0 (the map kept).
  double taken = 1;
  // The hand-over that made `map` instead (TunerOptions::hand_over): whole
  // partition `index` of a grid of `partitions`, from `from` to `to`.
  struct HandOver {
    MdsId from, to;
    uint32_t partitions = 0, index = 0;
  };
  std::optional<HandOver> hand_over;
};

// Each server's busy fraction under `map` as `reports` predict it (the
// overload guard, TunerOptions::overload_guard): the requests of the file
// sets `map` gives it, summed over every report's counts, times its
// service time (this report's, else its known_service_ms), over the
// interval.
// Servers that cannot be predicted (no service time, no interval, no set
// counted anywhere) are left out.
std::map<MdsId, double> predicted_load(const AnuMap& map, std::span<const LatencyReport> reports);

// One tuning step over `map`. `current` holds this interval's reports,
// `previous` the last interval's (empty when unknown, e.g. on a new
// delegate); reports of non-members are ignored. The map is unchanged when
// no server is scaled or nobody served a request. A server whose backlog
// grew (options.backlog) never ends with a larger share than it had.
// invalid_argument for a negative or non-finite latency or backlog age, a
// server reported twice in one list, options out of range (threshold < 0,
// max_factor < 1, backlog_growth < 0, service_scv < 0, floor_share outside
// [0, 1]), or an empty map.
Result<TuneResult> tune(const AnuMap& map, std::span<const LatencyReport> current,
                        std::span<const LatencyReport> previous, const TunerOptions& options = {});

}  // namespace pvfs::placement
