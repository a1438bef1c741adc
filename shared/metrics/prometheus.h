// The Prometheus text exposition format (version 0.0.4): rendering metric
// families for the /metrics endpoint and pvfs-ctl stats --prometheus, and a
// reader of the same format for tests and tools. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "shared/metrics/metrics.h"
#include "shared/status.h"

namespace pvfs::metrics {

// The Content-Type of render_prometheus()'s text.
inline constexpr std::string_view kPrometheusContentType = "text/plain; version=0.0.4; charset=utf-8";

// One "# HELP" and one "# TYPE" line per family, then one line per sample:
// name+suffix{label="value",...} value. Label values escape \, " and
// newline; help text escapes \ and newline. Values print as the shortest
// text that reads back exactly; NaN and infinities as NaN, +Inf, -Inf.
// Families without samples are left out. Ends with a newline (empty input:
// empty text).
std::string render_prometheus(const Families& families);

// Reads text in that format back into families (HELP and TYPE lines start
// a family; samples whose name is the family's plus _sum or _count get that
// suffix). Comment lines other than HELP and TYPE are skipped; timestamps
// after the value are ignored. Errors: invalid_argument naming the line.
Result<Families> parse_prometheus(std::string_view text);

}  // namespace pvfs::metrics
