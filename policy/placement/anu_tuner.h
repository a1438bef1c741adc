// The ANU delegate's tuning step (../shared/papers/anu-placement.txt §4,
// §6): from the current map and each server's mean request latency over the
// last interval, scale down the regions of servers above the average and
// up those below, with thresholding, top-off and divergent tuning against
// over-tuning. Stateless apart from the previous interval's latencies,
// which the caller passes back in, so a new delegate after a failure
// carries on (without them divergent tuning is skipped, as the paper says).
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
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "policy/placement/anu_map.h"
#include "shared/ids.h"
#include "shared/status.h"

namespace pvfs::placement {

// What one server measured over the last interval.
struct LatencyReport {
  MdsId server;
  double latency_ms = 0;  // mean request latency; 0 when it served nothing
  uint64_t requests = 0;  // requests completed in the interval
};

// How the system-wide average L is formed. The paper uses "a weighted
// average of the current latencies" without saying of what; we weight by
// requests served, which makes L the mean latency of all requests in the
// interval. It also reports the median working as well.
enum class Average : uint8_t { request_weighted, mean, median };

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
};

// Why a server's region was or was not scaled explicitly.
enum class Decision : uint8_t {
  scaled,        // scaled by `factor`
  not_reported,  // no latency for it this interval (or nobody served anything)
  at_average,    // latency equals the average
  within_band,   // thresholding: inside [(1-k)L, (1+k)L]
  underloaded,   // top-off: below the average, left to grow implicitly
  converging,    // divergent tuning: moving toward the average
};
// "scaled", "not reported", "at average", "within band", "underloaded", "converging".
std::string_view decision_name(Decision decision);

struct ServerTuning {
  MdsId server;
  double latency_ms = 0;  // as reported (0 if not reported)
  Decision decision = Decision::not_reported;
  double factor = 1;      // explicit scale factor, before renormalization
  double old_share = 0;   // fraction of the mapped half
  double new_share = 0;
};

struct TuneResult {
  double average_ms = 0;              // L
  std::vector<ServerTuning> servers;  // one per member, in id order
  std::optional<AnuMap> map;          // version + 1; nullopt = unchanged
};

// One tuning step over `map`. `current` holds this interval's reports,
// `previous` the last interval's (empty when unknown, e.g. on a new
// delegate); reports of non-members are ignored. The map is unchanged when
// no server is scaled or nobody served a request. invalid_argument for a
// negative or non-finite latency, a server reported twice in one list, or
// options out of range (threshold < 0, max_factor < 1), or an empty map.
Result<TuneResult> tune(const AnuMap& map, std::span<const LatencyReport> current,
                        std::span<const LatencyReport> previous, const TunerOptions& options = {});

}  // namespace pvfs::placement
