// Small text conventions the command-line tools share: sizes with binary
// suffixes ("4M") and JSON string literals. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "shared/status.h"

namespace pvfs {

// A byte count: decimal digits with an optional K, M, G or T suffix (either
// case, powers of 1024). invalid_argument, with a one-line detail quoting
// the text, for anything else or an overflow.
Result<uint64_t> parse_size(std::string_view text);

// `text` as a JSON string literal, quotes included; control characters
// escaped.
std::string json_string(std::string_view text);

}  // namespace pvfs
