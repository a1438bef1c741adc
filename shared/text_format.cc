#include "shared/text_format.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

namespace pvfs {

namespace {

Status bad_duration(std::string_view text) {
  return Status(Errc::invalid_argument,
                fmt::format("\"{}\" is not a duration: say e.g. 90s, 10m, 1h30m, 500ms (a plain number: seconds)", text));
}

}  // namespace

Result<std::chrono::milliseconds> parse_duration(std::string_view text) {
  if (text.empty()) return bad_duration(text);
  if (std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    if (text.size() > 9) return bad_duration(text);
    const uint64_t s = std::stoull(std::string(text));
    if (s == 0) return bad_duration(text);
    return std::chrono::milliseconds(s * 1000);
  }
  uint64_t total = 0;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (j == i || j - i > 9) return bad_duration(text);
    const uint64_t n = std::stoull(std::string(text.substr(i, j - i)));
    size_t k = j;
    while (k < text.size() && std::isalpha(static_cast<unsigned char>(text[k]))) ++k;
    const std::string_view unit = text.substr(j, k - j);
    uint64_t scale = 0;
    if (unit == "ms") scale = 1;
    else if (unit == "s") scale = 1000;
    else if (unit == "m") scale = 60'000;
    else if (unit == "h") scale = 3'600'000;
    else if (unit == "d") scale = 86'400'000;
    else return bad_duration(text);
    total += n * scale;
    i = k;
  }
  if (total == 0) return bad_duration(text);
  return std::chrono::milliseconds(total);
}

Result<uint64_t> parse_size(std::string_view text) {
  const auto bad = [&] {
    return Status(Errc::invalid_argument,
                  fmt::format("bad size '{}': want a number with an optional K, M, G or T suffix", text));
  };
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0 || text.size() - digits > 1) return bad();
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + digits, value);
  if (ec != std::errc()) return bad();
  unsigned shift = 0;
  if (digits < text.size()) {
    switch (text[digits]) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      case 't': case 'T': shift = 40; break;
      default: return bad();
    }
  }
  if (value > (std::numeric_limits<uint64_t>::max() >> shift)) return bad();
  return value << shift;
}

std::string json_number(double value) {
  return std::isfinite(value) ? fmt::format("{}", value) : std::string("null");
}

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        else out += c;
    }
  }
  return out + "\"";
}

namespace {

// Optimal string alignment distance: Levenshtein plus swaps of neighbours
// ("stirpe" is one edit from "stripe").
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::string closest_name(std::string_view text, const std::vector<std::string_view>& candidates) {
  const size_t limit = text.size() <= 4 ? 1 : 2;
  size_t best = limit + 1;
  std::string_view found;
  bool tie = false;
  for (std::string_view c : candidates) {
    const size_t d = edit_distance(text, c);
    if (d < best) {
      best = d;
      found = c;
      tie = false;
    } else if (d == best && c != found) {
      tie = true;
    }
  }
  return best <= limit && !tie ? std::string(found) : std::string();
}

}  // namespace pvfs
