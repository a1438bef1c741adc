#include "policy/placement/anu_tuner.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace pvfs::placement {
namespace {

Result<std::map<MdsId, LatencyReport>> index_reports(std::span<const LatencyReport> reports) {
  std::map<MdsId, LatencyReport> out;
  for (const LatencyReport& r : reports) {
    if (!std::isfinite(r.latency_ms) || r.latency_ms < 0 || !std::isfinite(r.backlog_age_ms) ||
        r.backlog_age_ms < 0)
      return Status(Errc::invalid_argument, "latency and backlog age must be finite and >= 0");
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
    case Decision::backlogged: return "backlogged";
  }
  return "?";
}

Result<TuneResult> tune(const AnuMap& map, std::span<const LatencyReport> current,
                        std::span<const LatencyReport> previous, const TunerOptions& options) {
  if (map.empty()) return Status(Errc::invalid_argument, "empty map");
  if (!(options.threshold >= 0) || !(options.max_factor >= 1) || !std::isfinite(options.max_factor) ||
      !(options.backlog_growth >= 0) || !(options.backlog_max_factor >= 1) ||
      !std::isfinite(options.backlog_max_factor))
    return Status(Errc::invalid_argument, "tuner options out of range");
  auto now = index_reports(current);
  if (!now) return now.status();
  auto before = index_reports(previous);
  if (!before) return before.status();

  // What a server is tuned on: the mean latency of its requests, counting
  // those still outstanding at their age so far (a saturated server's
  // completed requests understate what it makes the queued ones wait).
  auto signal = [&](const LatencyReport& r) {
    if (!options.backlog || r.backlog == 0) return r.latency_ms;
    const double done = static_cast<double>(r.requests), queued = static_cast<double>(r.backlog);
    return (r.latency_ms * done + r.backlog_age_ms * queued) / (done + queued);
  };
  auto grows = [&](const LatencyReport& r) {
    if (!options.backlog) return false;
    auto prev = before->find(r.server);
    if (prev == before->end() || r.backlog < prev->second.backlog + 2) return false;
    return static_cast<double>(r.backlog - prev->second.backlog) >
           options.backlog_growth * static_cast<double>(r.requests);
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
  const double avg = result.average_ms;
  const double low = options.thresholding ? (1 - options.threshold) * avg : avg;
  const double high = options.thresholding ? (1 + options.threshold) * avg : avg;

  const std::vector<ServerShare> old = map.shares();
  std::vector<ServerShare> weights = old;
  std::vector<bool> growing(old.size(), false);
  std::vector<double> room(old.size(), 0);  // grow_underloaded: each server's claim on the shed
  bool any_scaled = false;
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
      growing[i] = grows(it->second);
      auto prev = before->find(w.server);
      // grow_underloaded: room below the band, weighted by the server's
      // share plus a floor, so an idle server gets some of the shed to
      // prove itself on, not a flood.
      if (!growing[i] && lat < low)
        room[i] = (1 - lat / avg) * (w.share + 0.25 / static_cast<double>(old.size()));
      if (growing[i]) {
        // It cannot keep up, whatever the average says: shrink it to the
        // part of its arrivals it served, or by L / latency if that
        // shrinks it more.
        const double arrived = static_cast<double>(r.requests + (r.backlog - before->at(r.server).backlog));
        const double keep = std::min(static_cast<double>(r.requests) / arrived, lat > 0 ? avg / lat : 1.0);
        t.factor = std::clamp(keep, 1 / options.backlog_max_factor, 1.0);
        t.decision = Decision::backlogged;
        w.share *= t.factor;
        any_scaled = any_scaled || t.factor < 1;
      } else if (lat == avg) {
        t.decision = Decision::at_average;
      } else if (lat >= low && lat <= high) {
        t.decision = Decision::within_band;
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
    for (ServerShare& w : weights) w.share /= total;
    // A server whose backlog grows gives back what it would gain; the
    // others share it in proportion. (When every server with a share grows
    // there is nobody to give it to, and the map keeps it.)
    double excess = 0;
    double takers = 0;
    for (size_t i = 0; i < weights.size(); ++i) {
      if (growing[i] && weights[i].share > old[i].share) {
        excess += weights[i].share - old[i].share;
        weights[i].share = old[i].share;
      } else if (!growing[i]) {
        takers += weights[i].share;
      }
    }
    if (excess > 0 && takers > 0)
      for (size_t i = 0; i < weights.size(); ++i)
        if (!growing[i]) weights[i].share += excess * weights[i].share / takers;
    auto next = map.with_shares(weights);
    PVFS_CHECK(next.ok());
    if (next->partitions() != map.partitions()) result.map = std::move(*next);
  }
  const AnuMap& final_map = result.map ? *result.map : map;
  for (ServerTuning& t : result.servers) t.new_share = final_map.share(t.server);
  return result;
}

}  // namespace pvfs::placement
