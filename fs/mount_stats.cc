#include "fs/mount_stats.h"

#include <charconv>

#include <fmt/format.h>

namespace pvfs {

void MountStats::op(std::string_view name, bool failed, std::chrono::nanoseconds latency) {
  auto it = ops_.find(name);
  if (it == ops_.end()) it = ops_.emplace(std::string(name), PerOp{}).first;
  ++it->second.count;
  if (failed) ++it->second.errors;
  it->second.latency.add(latency);
}

std::string MountStats::render(const std::string& extra) const {
  std::string out =
      fmt::format("bytes_read {}\nbytes_written {}\nmds_retries {}\nmds_redirects {}\ncache_hits {}\nbusy_waits {}\n"
                  "writes_behind {}\nbehind_waits {}\nbehind_failures {}\nappends {}\n",
                  bytes_read, bytes_written, mds_retries, mds_redirects, cache_hits, busy_waits, writes_behind,
                  behind_waits, behind_failures, appends);
  out += extra;
  for (const auto& [name, o] : ops_) {
    out += fmt::format("op {} {} {} {:.0f} {:.0f} {:.0f}", name, o.count, o.errors, o.latency.sum_seconds() * 1e6,
                       o.latency.quantile_seconds(0.5) * 1e6, o.latency.quantile_seconds(0.99) * 1e6);
    const auto& buckets = o.latency.buckets();
    for (size_t k = 0; k < buckets.size(); ++k)
      if (buckets[k] > 0) out += fmt::format(" {}:{}", k, buckets[k]);
    out += '\n';
  }
  return out;
}

namespace {

std::string_view next_word(std::string_view& line) {
  while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  const size_t end = line.find(' ');
  std::string_view word = line.substr(0, end);
  line.remove_prefix(end == std::string_view::npos ? line.size() : end);
  return word;
}

bool number(std::string_view word, uint64_t& out) {
  auto [p, ec] = std::from_chars(word.data(), word.data() + word.size(), out);
  return ec == std::errc() && p == word.data() + word.size() && !word.empty();
}

}  // namespace

Result<MountStatsView> parse_mount_stats(std::string_view text) {
  MountStatsView view;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    if (line.empty()) continue;
    const std::string whole(line);
    const auto bad = [&] { return Status(Errc::invalid_argument, fmt::format("unexpected client stats line '{}'", whole)); };
    const std::string_view key = next_word(line);
    if (key == "op") {
      const std::string name(next_word(line));
      uint64_t v[5];
      for (uint64_t& x : v)
        if (!number(next_word(line), x)) return bad();
      MountStatsView::Op op{v[0], v[1], static_cast<double>(v[2]), static_cast<double>(v[3]),
                            static_cast<double>(v[4])};
      for (std::string_view word = next_word(line); !word.empty(); word = next_word(line)) {
        const size_t colon = word.find(':');
        uint64_t k = 0, n = 0;
        if (colon == std::string_view::npos || !number(word.substr(0, colon), k) ||
            !number(word.substr(colon + 1), n) || k >= op.buckets.size())
          return bad();
        op.buckets[k] = n;
        op.has_buckets = true;
      }
      view.ops[name] = op;
      continue;
    }
    // Counters; a value that is not a whole number (the dispatch policy's
    // name, a mean) is skipped rather than refused, so newer keys pass.
    uint64_t value = 0;
    if (key.empty()) return bad();
    if (number(next_word(line), value)) view.counters[std::string(key)] = value;
  }
  return view;
}

std::optional<std::pair<double, double>> interval_percentiles(const MountStatsView::Op& now,
                                                              const MountStatsView::Op& before) {
  if (!now.has_buckets) return std::nullopt;
  std::array<uint64_t, metrics::LatencyBuckets::kBuckets> change{};
  // A count below the earlier one: the mount restarted; all of it is new.
  for (size_t k = 0; k < change.size(); ++k)
    change[k] = now.buckets[k] >= before.buckets[k] ? now.buckets[k] - before.buckets[k] : now.buckets[k];
  return std::pair{metrics::LatencyBuckets::quantile_of(change, 0.5) * 1e6,
                   metrics::LatencyBuckets::quantile_of(change, 0.99) * 1e6};
}

}  // namespace pvfs
