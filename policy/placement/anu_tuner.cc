#include "policy/placement/anu_tuner.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace pvfs::placement {
namespace {

Result<std::map<MdsId, LatencyReport>> index_reports(std::span<const LatencyReport> reports) {
  std::map<MdsId, LatencyReport> out;
  for (const LatencyReport& r : reports) {
    if (!std::isfinite(r.latency_ms) || r.latency_ms < 0)
      return Status(Errc::invalid_argument, "latency must be finite and >= 0");
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
  }
  return "?";
}

Result<TuneResult> tune(const AnuMap& map, std::span<const LatencyReport> current,
                        std::span<const LatencyReport> previous, const TunerOptions& options) {
  if (map.empty()) return Status(Errc::invalid_argument, "empty map");
  if (!(options.threshold >= 0) || !(options.max_factor >= 1) || !std::isfinite(options.max_factor))
    return Status(Errc::invalid_argument, "tuner options out of range");
  auto now = index_reports(current);
  if (!now) return now.status();
  auto before = index_reports(previous);
  if (!before) return before.status();

  std::vector<LatencyReport> members;
  for (MdsId s : map.servers()) {
    if (auto it = now->find(s); it != now->end()) members.push_back(it->second);
  }
  TuneResult result;
  result.average_ms = average_of(members, options.average);
  const double avg = result.average_ms;
  const double low = options.thresholding ? (1 - options.threshold) * avg : avg;
  const double high = options.thresholding ? (1 + options.threshold) * avg : avg;

  std::vector<ServerShare> weights = map.shares();
  bool any_scaled = false;
  for (ServerShare& w : weights) {
    ServerTuning t;
    t.server = w.server;
    t.old_share = w.share;
    auto it = now->find(w.server);
    if (it == now->end() || avg <= 0) {
      // No latency for it, or nobody served anything: nothing to balance.
      t.decision = Decision::not_reported;
    } else {
      const double lat = it->second.latency_ms;
      t.latency_ms = lat;
      auto prev = before->find(w.server);
      if (lat == avg) {
        t.decision = Decision::at_average;
      } else if (lat >= low && lat <= high) {
        t.decision = Decision::within_band;
      } else if (options.top_off && lat < avg) {
        t.decision = Decision::underloaded;
      } else if (options.divergent && prev != before->end() &&
                 (lat > avg ? lat < prev->second.latency_ms : lat > prev->second.latency_ms)) {
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
    auto next = map.with_shares(weights);
    PVFS_CHECK(next.ok());
    if (next->partitions() != map.partitions()) result.map = std::move(*next);
  }
  const AnuMap& final_map = result.map ? *result.map : map;
  for (ServerTuning& t : result.servers) t.new_share = final_map.share(t.server);
  return result;
}

}  // namespace pvfs::placement
