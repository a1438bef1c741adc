#include "policy/elevator/deadline_estimator.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace pvfs::elevator {
namespace {

constexpr std::string_view kTag = "pvfs-bandwidth-v1";

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Splits off the next space-separated token of `s`; empty at the end.
std::string_view next_token(std::string_view& s) {
  s = trim(s);
  size_t n = 0;
  while (n < s.size() && !is_space(s[n])) ++n;
  std::string_view token = s.substr(0, n);
  s.remove_prefix(n);
  return token;
}

bool parse_u64(std::string_view s, uint64_t& out) {
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

}  // namespace

Nanos saturating_add(Nanos a, Nanos b) {
  PVFS_CHECK(b >= Nanos(0));
  return a > Nanos::max() - b ? Nanos::max() : a + b;
}

Nanos from_seconds(double seconds) {
  const double ns = seconds * 1e9;
  if (!(ns > 0)) return Nanos(0);
  if (ns >= static_cast<double>(Nanos::max().count())) return Nanos::max();
  return Nanos(std::llround(ns));
}

Result<BandwidthTable> BandwidthTable::make(std::vector<BandwidthPoint> points) {
  if (points.empty()) return Status(Errc::invalid_argument, "bandwidth table: no points");
  for (size_t i = 0; i < points.size(); ++i) {
    if (points[i].record_bytes == 0 || points[i].bytes_per_second == 0)
      return Status(Errc::invalid_argument, "bandwidth table: zero record size or bandwidth");
    if (i > 0 && points[i].record_bytes <= points[i - 1].record_bytes)
      return Status(Errc::invalid_argument, "bandwidth table: record sizes not increasing");
  }
  return BandwidthTable(std::move(points));
}

BandwidthTable BandwidthTable::flat(uint64_t bytes_per_second) {
  PVFS_CHECK(bytes_per_second > 0);
  return BandwidthTable({BandwidthPoint{1, bytes_per_second}});
}

size_t BandwidthTable::window_of(uint64_t length_bytes) const {
  auto above = std::upper_bound(points_.begin(), points_.end(), length_bytes,
                                [](uint64_t len, const BandwidthPoint& p) { return len < p.record_bytes; });
  return above == points_.begin() ? 0 : static_cast<size_t>(above - points_.begin()) - 1;
}

std::string BandwidthTable::to_text() const {
  std::string out(kTag);
  for (const BandwidthPoint& p : points_) {
    out += ' ';
    out += std::to_string(p.record_bytes);
    out += '=';
    out += std::to_string(p.bytes_per_second);
  }
  return out;
}

Result<BandwidthTable> BandwidthTable::from_text(std::string_view text) {
  std::string_view rest = text;
  if (next_token(rest) != kTag) return Status(Errc::corrupt, "bandwidth table: missing tag");
  std::vector<BandwidthPoint> points;
  for (std::string_view token = next_token(rest); !token.empty(); token = next_token(rest)) {
    const size_t eq = token.find('=');
    BandwidthPoint p;
    if (eq == std::string_view::npos || !parse_u64(token.substr(0, eq), p.record_bytes) ||
        !parse_u64(token.substr(eq + 1), p.bytes_per_second))
      return Status(Errc::corrupt, "bandwidth table: bad pair '" + std::string(token) + "'");
    points.push_back(p);
  }
  auto table = make(std::move(points));
  if (!table) return Status(Errc::corrupt, table.status().detail());
  return table;
}

DeadlineEstimator::DeadlineEstimator(BandwidthTable table, double lambda)
    : table_(std::move(table)), lambda_(lambda), outstanding_(table_.windows(), 0) {
  PVFS_CHECK(lambda_ >= 1.0);
}

void DeadlineEstimator::add(uint64_t length_bytes) {
  outstanding_[table_.window_of(length_bytes)] += length_bytes;
  total_ += length_bytes;
}

void DeadlineEstimator::remove(uint64_t length_bytes) {
  uint64_t& window = outstanding_[table_.window_of(length_bytes)];
  PVFS_CHECK(window >= length_bytes);
  window -= length_bytes;
  total_ -= length_bytes;
}

Nanos DeadlineEstimator::expiration() const {
  double seconds = 0;
  for (size_t i = 0; i < outstanding_.size(); ++i)
    seconds += static_cast<double>(outstanding_[i]) /
               static_cast<double>(table_.points()[i].bytes_per_second);
  return from_seconds(lambda_ * seconds);
}

Nanos DeadlineEstimator::service_estimate(uint64_t length_bytes) const {
  const double bw = static_cast<double>(table_.points()[table_.window_of(length_bytes)].bytes_per_second);
  return from_seconds(static_cast<double>(length_bytes) / bw);
}

Nanos DeadlineEstimator::deadline(Nanos now, Nanos latest) const {
  return std::max(saturating_add(now, expiration()), latest);
}

}  // namespace pvfs::elevator
