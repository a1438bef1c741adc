#include "shared/text_format.h"

#include <charconv>
#include <limits>

#include <fmt/format.h>

namespace pvfs {

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

}  // namespace pvfs
