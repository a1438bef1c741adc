#include "policy/placement/anu_tuner.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace pvfs::placement {
namespace {

// The busiest a queue counts as (TunerOptions::busy): a saturated server
// models 25 (M/D/1) to 50 (M/M/1) service times, not infinity; its backlog
// shows the rest.
constexpr double kBusiest = 0.98;
// A queue stands (standing_queue) only when it holds more than this part of
// what the server completed in the interval: a busy server keeping up
// holds a few requests at any moment.
constexpr double kStandingQueue = 0.05;

Result<std::map<MdsId, LatencyReport>> index_reports(std::span<const LatencyReport> reports) {
  std::map<MdsId, LatencyReport> out;
  for (const LatencyReport& r : reports) {
    if (!std::isfinite(r.latency_ms) || r.latency_ms < 0 || !std::isfinite(r.backlog_age_ms) ||
        r.backlog_age_ms < 0 || !(r.busy >= 0 && r.busy <= 1) || !std::isfinite(r.service_ms) || r.service_ms < 0 ||
        !std::isfinite(r.history_load) || r.history_load < 0 || !std::isfinite(r.interval_ms) || r.interval_ms < 0 ||
        !std::isfinite(r.known_service_ms) || r.known_service_ms < 0)
      return Status(Errc::invalid_argument,
                    "latency, backlog age and service time must be finite and >= 0, busy in [0, 1]");
    if (!out.emplace(r.server, r).second) return Status(Errc::invalid_argument, "server reported twice");
  }
  return out;
}

double average_of(const std::vector<LatencyReport>& reports, Average kind) {
  if (reports.empty()) return 0;
  switch (kind) {
    case Average::request_weighted: {
      double weighted = 0;
      double requests = 0;
      for (const LatencyReport& r : reports) {
        weighted += r.latency_ms * static_cast<double>(r.requests);
        requests += static_cast<double>(r.requests);
      }
      return requests > 0 ? weighted / requests : 0;
    }
    case Average::capped: {
      // Request-weighted, but no member weighs more than all the others
      // together: a saturated member that completes most requests cannot
      // be the average it is compared with.
      double total = 0;
      for (const LatencyReport& r : reports) total += static_cast<double>(r.requests);
      double weighted = 0;
      double weights = 0;
      for (const LatencyReport& r : reports) {
        const double w = std::min(static_cast<double>(r.requests), total - static_cast<double>(r.requests));
        weighted += r.latency_ms * w;
        weights += w;
      }
      if (weights > 0) return weighted / weights;
      // One member served everything: nothing to weigh it against.
      return average_of(reports, Average::request_weighted);
    }
    case Average::mean: {
      double sum = 0;
      for (const LatencyReport& r : reports) sum += r.latency_ms;
      return sum / static_cast<double>(reports.size());
    }
    case Average::median: {
      std::vector<double> v;
      for (const LatencyReport& r : reports) v.push_back(r.latency_ms);
      std::sort(v.begin(), v.end());
      const size_t n = v.size();
      return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }
  }
  return 0;
}

}  // namespace

std::string_view decision_name(Decision decision) {
  switch (decision) {
    case Decision::scaled: return "scaled";
    case Decision::not_reported: return "not reported";
    case Decision::at_average: return "at average";
    case Decision::within_band: return "within band";
    case Decision::underloaded: return "underloaded";
    case Decision::converging: return "converging";
    case Decision::raised: return "raised";
    case Decision::backlogged: return "backlogged";
  }
  return "?";
}

bool standing_queue(const LatencyReport& current, const LatencyReport* previous) {
  return previous && current.busy >= kBusiest && previous->busy >= kBusiest && previous->backlog >= 2 &&
         current.backlog + 1 >= previous->backlog && current.backlog < previous->backlog + 2 &&
         static_cast<double>(current.backlog) > kStandingQueue * static_cast<double>(current.requests);
}

double arrivals(const LatencyReport& current, const LatencyReport* previous) {
  double arrived = static_cast<double>(current.requests);
  if (standing_queue(current, previous)) return arrived + static_cast<double>(current.backlog);
  if (previous) arrived += static_cast<double>(current.backlog) - static_cast<double>(previous->backlog);
  return std::max(arrived, 0.0);
}

double offered_load(const LatencyReport& current, const LatencyReport* previous) {
  if (current.requests == 0) return 0;
  return current.busy * arrivals(current, previous) / static_cast<double>(current.requests);
}

double queue_latency(double service_ms, double load, double scv) {
  return service_ms * (1 + load * (1 + scv) / (2 * (1 - load)));
}

double load_at_latency(double service_ms, double latency_ms, double scv) {
  // latency / service - 1 = x = load k / (1 - load), k = (1 + scv) / 2.
  const double x = latency_ms / service_ms - 1;
  if (!(x > 0)) return 0;
  return x / (x + (1 + scv) / 2);
}

namespace {

// A server's service time: this interval's, else the last one it measured
// (0: never measured).
double last_service_ms(const LatencyReport& r) { return r.service_ms > 0 ? r.service_ms : r.known_service_ms; }

// Each reported server's service time as the overload guard uses it.
std::map<MdsId, double> service_times(std::span<const LatencyReport> reports) {
  std::map<MdsId, double> out;
  for (const LatencyReport& r : reports)
    if (const double ms = last_service_ms(r); ms > 0) out[r.server] = ms;
  return out;
}

}  // namespace

std::map<MdsId, double> predicted_load(const AnuMap& map, std::span<const LatencyReport> reports) {
  std::map<FileSetId, uint64_t> sets;
  double interval_ms = 0;
  for (const LatencyReport& r : reports) {
    for (const SetRequests& s : r.sets) sets[s.set] += s.requests;
    interval_ms = std::max(interval_ms, r.interval_ms);
  }
  const std::map<MdsId, double> service = service_times(reports);
  std::map<MdsId, double> load;
  if (sets.empty() || !(interval_ms > 0)) return load;
  for (MdsId m : map.servers())
    if (service.contains(m)) load[m] = 0;
  for (const auto& [set, requests] : sets) {
    const MdsId m = map.locate(set);
    if (auto it = load.find(m); it != load.end())
      it->second += static_cast<double>(requests) * service.at(m) / interval_ms;
  }
  return load;
}

namespace {

// What the guard weighs a new map against: each server's predicted load
// under the current one, the busiest of them, and the bound, halfway from
// the cluster's predicted utilization to 1 (`predicts` false: nothing
// could be predicted); and the service times the loads came from.
struct LoadBound {
  std::map<MdsId, double> before;
  std::map<MdsId, double> service;
  double busiest_before = 0;
  double bound = 1;
  bool predicts = false;
  // Whether `load` puts server `m` above the bound, and above what it
  // carried before if that was more.
  bool over(MdsId m, double load) const {
    auto was = before.find(m);
    return load > std::max(bound, was == before.end() ? 0.0 : was->second) * (1 + 1e-9);
  }
};

LoadBound load_bound(const AnuMap& map, std::span<const LatencyReport> reports) {
  LoadBound b;
  b.before = predicted_load(map, reports);
  b.service = service_times(reports);
  double work = 0, capacity = 0;
  for (const auto& [m, load] : b.before) {
    work += load / b.service.at(m);
    capacity += 1 / b.service.at(m);
    b.busiest_before = std::max(b.busiest_before, load);
  }
  b.predicts = capacity > 0;
  if (b.predicts) b.bound = (1 + work / capacity) / 2;
  return b;
}

// The overload guard (TunerOptions::overload_guard): of the change from
// the shares `old` of `map` to `target`, the largest part (all, a half, a
// quarter, an eighth) under which no server is predicted busier than the
// bound, nor busier than it was when it was above it; or none of it. The
// bound is halfway from the cluster's predicted utilization to 1: near
// capacity every server must be nearly as busy as the cluster. A change
// that lowers the busiest server's load passes anyway: a server above
// capacity must be able to shed onto one that then passes the bound.
// Returns the map and the part taken.
std::pair<AnuMap, double> guard_overload(const AnuMap& map, const std::vector<ServerShare>& old,
                                         const std::vector<ServerShare>& target,
                                         std::span<const LatencyReport> reports) {
  auto with = [&](double part) {
    std::vector<ServerShare> shares = old;
    for (size_t i = 0; i < shares.size(); ++i) shares[i].share += part * (target[i].share - old[i].share);
    auto next = map.with_shares(shares);
    PVFS_CHECK(next.ok());
    return std::move(*next);
  };
  const LoadBound b = load_bound(map, reports);
  if (!b.predicts) return {with(1), 1};
  auto passes = [&](const AnuMap& candidate) {
    bool over = false;
    double busiest = 0;
    for (const auto& [m, load] : predicted_load(candidate, reports)) {
      over = over || b.over(m, load);
      busiest = std::max(busiest, load);
    }
    return !over || busiest < b.busiest_before * (1 - 1e-9);
  };
  for (double part = 1; part >= 0.125; part /= 2) {
    AnuMap candidate = with(part);
    if (passes(candidate)) return {std::move(candidate), part};
  }
  return {map, 0};
}

// The grids a hand-over looks in, from the coarsest: a set that lies in
// the giver's partial partition of one grid lies in a whole one of a finer
// grid (splitting moves nothing, but the map keeps the finer grid).
constexpr uint32_t kHandOverGrid = 128;
constexpr uint32_t kHandOverFinestGrid = 1024;
static_assert(kHandOverFinestGrid <= kMaxPartitions);

// TunerOptions::hand_over: of `standing` (servers whose queue stands), the
// busiest by prediction that can hand one whole partition over so that
// it ends less busy and the taker within the bound (or no busier than it
// was, if it was above it); the hand-over of it that leaves the busier of
// the two least busy (a coarser grid on a tie). Not "the busiest server
// ends less busy": two members may stand at their caps, and relieving one
// leaves the other the busiest. Nothing when none qualifies.
std::optional<std::pair<AnuMap, TuneResult::HandOver>> hand_over(const AnuMap& map,
                                                                   std::span<const LatencyReport> reports,
                                                                   std::span<const MdsId> standing) {
  const LoadBound b = load_bound(map, reports);
  if (!b.predicts) return std::nullopt;
  std::vector<std::pair<double, MdsId>> givers;  // (predicted load, server), busiest first
  for (MdsId m : standing)
    if (auto it = b.before.find(m); it != b.before.end()) givers.push_back({it->second, m});
  std::sort(givers.begin(), givers.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  for (const auto& [giver_load, giver] : givers) {
    std::optional<std::pair<AnuMap, TuneResult::HandOver>> best;
    double best_peak = 0;
    AnuMap grid = map;
    while (grid.partition_count() < kHandOverGrid) grid = grid.doubled();
    for (;;) {
      for (uint32_t index = 0; index < grid.partition_count(); ++index) {
        const Partition& p = grid.partitions()[index];
        if (p.server != giver || p.length != grid.partition_length()) continue;
        for (MdsId taker : map.servers()) {
          if (taker == giver || !b.service.contains(taker)) continue;
          auto candidate = map.handed_over(grid.partition_count(), index, taker);
          PVFS_CHECK(candidate.ok());
          const std::map<MdsId, double> load = predicted_load(*candidate, reports);
          const double kept = load.at(giver), taken = load.at(taker);
          if (!(kept < giver_load * (1 - 1e-9)) || b.over(taker, taken)) continue;
          const double peak = std::max(kept, taken);
          if (!best || peak < best_peak * (1 - 1e-9)) {
            best.emplace(std::move(*candidate), TuneResult::HandOver{giver, taker, grid.partition_count(), index});
            best_peak = peak;
          }
        }
      }
      if (grid.partition_count() >= kHandOverFinestGrid) break;
      grid = grid.doubled();
    }
    if (best) return best;
  }
  return std::nullopt;
}

}  // namespace

Result<TuneResult> tune(const AnuMap& map, std::span<const LatencyReport> current,
                        std::span<const LatencyReport> previous, const TunerOptions& options) {
  if (map.empty()) return Status(Errc::invalid_argument, "empty map");
  if (!(options.threshold >= 0) || !(options.max_factor >= 1) || !std::isfinite(options.max_factor) ||
      !(options.backlog_growth >= 0) || !(options.backlog_max_factor >= 1) || !(options.significance >= 0) ||
      !(options.service_scv >= 0) || !std::isfinite(options.service_scv) ||
      !std::isfinite(options.backlog_max_factor) || !(options.floor_share >= 0 && options.floor_share <= 1))
    return Status(Errc::invalid_argument, "tuner options out of range");
  auto now = index_reports(current);
  if (!now) return now.status();
  auto before = index_reports(previous);
  if (!before) return before.status();

  // What a server is tuned on: the mean latency of its requests, counting
  // those still outstanding at their age so far (a saturated server's
  // completed requests understate what it makes the queued ones wait).
  auto modeled = [&](const LatencyReport& r) {
    return options.busy && r.requests > 0 && r.service_ms > 0 && r.busy > 0;
  };
  // The load offered to a server under the current map (offered_load),
  // pooled with what it was offered in the earlier intervals under the
  // same map: each interval's count of arrivals is noisy, and near
  // capacity the noise is as large as the imbalance.
  auto previous_of = [&](const LatencyReport& r) -> const LatencyReport* {
    auto prev = before->find(r.server);
    return prev == before->end() ? nullptr : &prev->second;
  };
  auto offered = [&](const LatencyReport& r) {
    auto prev = before->find(r.server);
    const double here = offered_load(r, prev == before->end() ? nullptr : &prev->second);
    const double n = static_cast<double>(r.requests), h = static_cast<double>(r.history_requests);
    return h > 0 ? (here * n + r.history_load * h) / (n + h) : here;
  };
  // Whether scaling a modeled server by `factor` is more than the noise
  // of its offered load: with n arrivals, a Poisson count's relative
  // standard deviation is 1 / sqrt(n).
  auto significant = [&](const LatencyReport& r, double factor) {
    if (options.significance <= 0 || factor <= 0) return true;  // 0: emptied (see model_factor)
    const double n = arrivals(r, previous_of(r)) + static_cast<double>(r.history_requests);
    if (n < 1) return true;
    return std::abs(factor - 1) > options.significance / std::sqrt(n);
  };
  auto signal = [&](const LatencyReport& r) {
    if (modeled(r)) return queue_latency(r.service_ms, std::min(offered(r), kBusiest), options.service_scv);
    if (!options.backlog || r.backlog == 0) return r.latency_ms;
    const double done = static_cast<double>(r.requests), queued = static_cast<double>(r.backlog);
    return (r.latency_ms * done + r.backlog_age_ms * queued) / (done + queued);
  };
  // Its queue grows, or stands while it is busy throughout: a queue held
  // at a cap (a member reads at most so many requests of a connection;
  // the rest wait in the socket and the client, unseen) cannot grow, yet
  // it is offered more than it serves.
  auto grows = [&](const LatencyReport& r) {
    if (!options.backlog) return false;
    const LatencyReport* prev = previous_of(r);
    if (!prev) return false;
    const double requests = static_cast<double>(r.requests);
    if (standing_queue(r, prev)) return true;
    if (r.backlog < prev->backlog + 2) return false;
    return static_cast<double>(r.backlog - prev->backlog) > options.backlog_growth * requests;
  };

  std::vector<LatencyReport> members;
  for (MdsId s : map.servers()) {
    if (auto it = now->find(s); it != now->end()) {
      LatencyReport r = it->second;
      r.latency_ms = signal(r);
      members.push_back(r);
    }
  }
  TuneResult result;
  result.average_ms = average_of(members, options.average);
  // The request-weighted latency the servers measured, backlog aside.
  double measured = 0;
  {
    double weights = 0;
    for (MdsId m : map.servers())
      if (auto it = now->find(m); it != now->end()) {
        measured += it->second.latency_ms * static_cast<double>(it->second.requests);
        weights += static_cast<double>(it->second.requests);
      }
    measured = weights > 0 ? measured / weights : 0;
  }
  bool saturated = false;  // options.busy: the modeled servers cannot carry what is offered
  if (options.busy) {
    // The balanced latency: the W at which the modeled servers, each as
    // busy as the queue model puts it at latency W, carry the load offered
    // to them now.
    double demand = 0;
    double slowest = 0;
    std::vector<const LatencyReport*> queues;
    for (const LatencyReport& r : members)
      if (modeled(r)) {
        queues.push_back(&r);
        demand += offered(r) / r.service_ms;
        slowest = std::max(slowest, r.service_ms);
      }
    if (!queues.empty()) {
      auto carried = [&](double w) {
        double sum = 0;
        for (const LatencyReport* r : queues)
          sum += load_at_latency(r->service_ms, w, options.service_scv) / r->service_ms;
        return sum;
      };
      double lo = 0, hi = queue_latency(slowest, kBusiest, options.service_scv);
      if (carried(hi) <= demand) {
        lo = hi;  // more than they can carry: the busiest the model goes
        saturated = true;
      } else {
        for (int i = 0; i < 60; ++i) {
          const double mid = (lo + hi) / 2;
          (carried(mid) < demand ? lo : hi) = mid;
        }
      }
      result.average_ms = (lo + hi) / 2;
    }
  }
  const double avg = result.average_ms;
  const double low = options.thresholding ? (1 - options.threshold) * avg : avg;
  const double high = options.thresholding ? (1 + options.threshold) * avg : avg;

  const std::vector<ServerShare> old = map.shares();
  // TunerOptions::floor_share, in the map's terms; a share that rounding
  // left a hair under it is at it.
  const double floor = options.floor_share / static_cast<double>(old.size());
  auto below_floor = [&](double share) { return share < floor * (1 - 1e-9); };
  // Whether an idle server raised to the floor would stay inside the band:
  // a queue with its last known service time, offered the floor's part of
  // the requests the cluster served this interval (M/G/1, as the busy
  // model's), against the same queue model of the servers that served,
  // at the loads they reported, weighted by their requests. Model against
  // model: a real member's service time is its loop's work per request,
  // which counts work done after the reply, so it can exceed the latency
  // measured. A server that would not fit would be shrunk again at once,
  // and raised again once idle: file sets moved back and forth for
  // nothing. A server whose service time is unknown, or a cluster whose
  // are, is given the floor.
  double served = 0, modeled_sum = 0, modeled_requests = 0;
  for (const LatencyReport& r : members) {
    served += static_cast<double>(r.requests);
    if (r.requests == 0 || r.service_ms <= 0) continue;
    const double n = static_cast<double>(r.requests);
    modeled_sum += n * queue_latency(r.service_ms, std::clamp(r.busy, 0.0, kBusiest), options.service_scv);
    modeled_requests += n;
  }
  auto fits_floor = [&](const LatencyReport& r) {
    const double service = last_service_ms(r);
    if (service <= 0 || modeled_requests <= 0) return true;
    const double load = r.interval_ms > 0 ? floor * served * service / r.interval_ms : 0;
    const double band = options.thresholding ? 1 + options.threshold : 1;
    return queue_latency(service, std::min(load, kBusiest), options.service_scv) <
           band * modeled_sum / modeled_requests;
  };
  std::vector<ServerShare> weights = old;
  std::vector<bool> growing(old.size(), false);
  std::vector<bool> raised(old.size(), false);  // raised to the floor: holds it through the renormalization
  std::vector<double> room(old.size(), 0);  // grow_underloaded: each server's claim on the shed
  bool any_scaled = false;
  auto raise_to_floor = [&](size_t i, ServerTuning& t) {
    t.factor = weights[i].share > 0 ? floor / weights[i].share : 1;
    t.decision = Decision::raised;
    weights[i].share = floor;
    raised[i] = true;
    any_scaled = true;
  };
  for (size_t i = 0; i < weights.size(); ++i) {
    ServerShare& w = weights[i];
    ServerTuning t;
    t.server = w.server;
    t.old_share = w.share;
    auto it = now->find(w.server);
    if (it == now->end() || avg <= 0) {
      // No latency for it, or nobody served anything: nothing to balance.
      t.decision = Decision::not_reported;
    } else {
      const LatencyReport& r = it->second;
      const double lat = signal(r);
      t.latency_ms = lat;
      // The model's factor: to the busy fraction at which it is at L; 0
      // when its service alone is above the band around the latency the
      // cluster's requests measured (the paper's L): any request it serves
      // is slower than the rest by more than thresholding allows, however
      // idle it is (the model's L is a queue's mean, which overstates a
      // steady server's, so it cannot tell).
      auto model_factor = [&] {
        auto prev = before->find(r.server);
        if (prev != before->end() && r.service_ms >= (1 + options.threshold) * measured &&
            prev->second.service_ms >= (1 + options.threshold) * measured)
          return 0.0;
        const double target = load_at_latency(r.service_ms, avg, options.service_scv), load = offered(r);
        return target <= 0 ? 1 / options.max_factor : load > 0 ? target / load : options.max_factor;
      };
      growing[i] = grows(it->second);
      // A modeled server's backlog grows by chance at any load: it cannot
      // keep up only when offered more than it serves, by more than noise.
      if (growing[i] && modeled(r)) growing[i] = offered(r) > 1 && significant(r, model_factor());
      auto prev = before->find(w.server);
      // grow_underloaded: room below the band, weighted by the server's
      // share plus a floor, so an idle server gets some of the shed to
      // prove itself on, not a flood.
      if (!growing[i] && lat < low)
        room[i] = (1 - lat / avg) * (w.share + 0.25 / static_cast<double>(old.size()));
      if (growing[i]) {
        // It cannot keep up, whatever the average says: shrink it to the
        // part of its arrivals it served, or by L / latency if that
        // shrinks it more (the model's factor when it is modeled).
        const double arrived = arrivals(r, previous_of(r));
        const double keep = modeled(r) ? model_factor()
                                       : std::min(static_cast<double>(r.requests) / arrived,
                                                  lat > 0 ? avg / lat : 1.0);
        t.factor = std::clamp(keep, 1 / options.backlog_max_factor, 1.0);
        t.decision = Decision::backlogged;
        w.share *= t.factor;
        any_scaled = any_scaled || t.factor < 1;
      } else if (!options.busy && below_floor(w.share) && r.requests == 0 && fits_floor(r)) {
        // The way back (TunerOptions::floor_share): idle on a sliver of the
        // map, it shows nothing of what it could carry, and top-off would
        // leave it there while the others sit inside the band.
        raise_to_floor(i, t);
      } else if (lat == avg) {
        t.decision = Decision::at_average;
      } else if (lat >= low && lat <= high) {
        t.decision = Decision::within_band;
      } else if (modeled(r) && r.service_ms < avg && !significant(r, model_factor())) {
        // The change the model asks for is within the noise of its count
        // of arrivals: moving file sets for it would be churn. (A server
        // whose service alone is at L is too slow however few it served.)
        t.decision = Decision::within_band;
      } else if (modeled(r)) {
        // Outside the band by the model: to its share of the balanced load,
        // up or down. Top-off and divergent tuning guard against latency's
        // over-correction and memento requests; the model has neither.
        const double f = model_factor();
        t.factor = f == 0 ? 0 : std::clamp(f, 1 / options.max_factor, options.max_factor);
        t.decision = Decision::scaled;
        w.share *= t.factor;
        any_scaled = true;
      } else if (saturated && r.requests == 0 && below_floor(w.share)) {
        // The way back for a server the model emptied or shrank to nothing
        // (its service was too slow for the band): the others cannot carry
        // the load.
        raise_to_floor(i, t);
      } else if (options.top_off && lat < avg) {
        t.decision = Decision::underloaded;
      } else if (options.divergent && prev != before->end() &&
                 (lat > avg ? lat < signal(prev->second) || (options.backlog && r.backlog < prev->second.backlog)
                            : lat > signal(prev->second))) {
        // Above the average with its queue shrinking is converging too: its
        // latency is that of memento requests queued under the old map.
        t.decision = Decision::converging;
      } else {
        const double raw = lat > 0 ? avg / lat : options.max_factor;
        t.factor = std::clamp(raw, 1 / options.max_factor, options.max_factor);
        t.decision = Decision::scaled;
        w.share *= t.factor;
        any_scaled = true;
      }
    }
    result.servers.push_back(t);
  }

  if (any_scaled) {
    double total = 0;
    for (const ServerShare& w : weights) total += w.share;
    if (!(total > 0)) {
      // Every server with a share was emptied (busy): nobody is left to
      // take the load, so they only shrink by the bound.
      for (size_t i = 0; i < weights.size(); ++i)
        if (result.servers[i].decision == Decision::scaled && result.servers[i].factor == 0) {
          result.servers[i].factor = 1 / options.max_factor;
          weights[i].share = old[i].share * result.servers[i].factor;
          total += weights[i].share;
        }
    }
    // What the servers whose backlog grows shed must go where there is
    // room: to the servers below the band, the idlest first (an idle
    // server's near-zero share would take next to nothing of it in
    // proportion). What the others shed is spread in proportion to the
    // shares, as in the paper.
    double room_total = 0;
    for (double r : room) room_total += r;
    double backlog_shed = 0;
    for (size_t i = 0; i < weights.size(); ++i)
      if (growing[i]) backlog_shed += old[i].share - weights[i].share;
    if (options.grow_underloaded && room_total > 0 && backlog_shed > 0) {
      for (size_t i = 0; i < weights.size(); ++i) weights[i].share += backlog_shed * room[i] / room_total;
      total += backlog_shed;
    }
    // A raised server ends at the floor; the others fill the rest in
    // proportion (renormalizing it with them would leave it under the
    // floor, to be raised again next interval).
    double pinned = 0;
    for (size_t i = 0; i < weights.size(); ++i)
      if (raised[i]) pinned += weights[i].share;
    if (pinned > 0 && pinned < 1 && total > pinned) {
      for (size_t i = 0; i < weights.size(); ++i)
        if (!raised[i]) weights[i].share *= (1 - pinned) / (total - pinned);
    } else {
      for (ServerShare& w : weights) w.share /= total;
    }
    // A server whose backlog grows gives back what it would gain; the
    // others share it in proportion. (When every server with a share grows
    // there is nobody to give it to, and the map keeps it.)
    double excess = 0;
    double takers = 0;
    for (size_t i = 0; i < weights.size(); ++i) {
      if (growing[i] && weights[i].share > old[i].share) {
        excess += weights[i].share - old[i].share;
        weights[i].share = old[i].share;
      } else if (!growing[i] && !raised[i]) {
        takers += weights[i].share;
      }
    }
    if (excess > 0 && takers > 0)
      for (size_t i = 0; i < weights.size(); ++i)
        if (!growing[i] && !raised[i]) weights[i].share += excess * weights[i].share / takers;
    auto next = map.with_shares(weights);
    PVFS_CHECK(next.ok());
    if (options.overload_guard) {
      auto guarded = guard_overload(map, old, weights, current);
      next = std::move(guarded.first);
      result.taken = guarded.second;
    }
    if (next->partitions() != map.partitions()) result.map = std::move(*next);
  }
  if (!result.map && options.overload_guard && options.hand_over) {
    // The map stays: a queue that stands would stand for good.
    std::vector<MdsId> standing;
    for (const LatencyReport& r : members)
      if (standing_queue(now->at(r.server), previous_of(r))) standing.push_back(r.server);
    if (auto h = hand_over(map, current, standing)) {
      result.map = std::move(h->first);
      result.hand_over = h->second;
    }
  }
  const AnuMap& final_map = result.map ? *result.map : map;
  for (ServerTuning& t : result.servers) t.new_share = final_map.share(t.server);
  return result;
}

}  // namespace pvfs::placement
