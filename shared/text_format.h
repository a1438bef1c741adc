// Small text conventions the command-line tools share: sizes with binary
// suffixes ("4M"), JSON string literals and lists of choices. Pure;
// thread-safe.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "shared/status.h"

namespace pvfs {

// A byte count: decimal digits with an optional K, M, G or T suffix (either
// case, powers of 1024). invalid_argument, with a one-line detail quoting
// the text, for anything else or an overflow.
Result<uint64_t> parse_size(std::string_view text);

// A duration: "90s", "10m", "1h30m", "500ms", "2d" (units ms, s, m, h, d,
// each after up to 9 digits), or a plain number of seconds.
// invalid_argument, saying how to write one, for anything else or 0.
Result<std::chrono::milliseconds> parse_duration(std::string_view text);

// `text` as a JSON string literal, quotes included; control characters
// escaped.
std::string json_string(std::string_view text);

// `value` as a JSON number, or null for NaN and infinity (JSON has neither).
std::string json_number(double value);

// The one of `candidates` closest to `text` by edit distance (insertions,
// deletions, substitutions and swaps of neighbours), when it is close
// enough to be a typo of it: at most 1 edit for names up to 4 characters,
// 2 for longer ones. Empty when none is, or when two are equally close.
std::string closest_name(std::string_view text, const std::vector<std::string_view>& candidates);

// "a, b or c": every value of `all` by `name`, in order, for an error
// message that lists the valid choices (a policy's kPolicies and
// policy_name, say).
template <typename Enum, size_t N>
std::string choices(const std::array<Enum, N>& all, std::string_view (*name)(Enum)) {
  std::string out;
  for (size_t i = 0; i < N; ++i) {
    if (i > 0) out += i + 1 == N ? " or " : ", ";
    out += name(all[i]);
  }
  return out;
}

}  // namespace pvfs
