#include "utils/sim/params.h"

#include <charconv>

namespace pvfs::sim {
namespace {

std::vector<std::string> split(std::string_view text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    out.emplace_back(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

bool parse_integer(std::string_view s, int64_t& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

bool parse_number(std::string_view s, double& out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

bool valid(ParamType type, std::string_view text) {
  int64_t i = 0;
  double d = 0;
  switch (type) {
    case ParamType::integer: return parse_integer(text, i);
    case ParamType::number: return parse_number(text, d);
    case ParamType::numbers:
      for (const std::string& item : split(text))
        if (!parse_number(item, d)) return false;
      return true;
    case ParamType::words:
      for (const std::string& item : split(text))
        if (item.empty()) return false;
      return true;
  }
  return false;
}

std::string_view type_name(ParamType type) {
  switch (type) {
    case ParamType::integer: return "an integer";
    case ParamType::number: return "a number";
    case ParamType::numbers: return "a comma-separated list of numbers";
    case ParamType::words: return "a comma-separated list of names";
  }
  return "?";
}

}  // namespace

Result<Params> Params::make(const std::vector<ParamSpec>& specs, bool quick,
                            const std::vector<std::string>& overrides) {
  Params p;
  for (const ParamSpec& s : specs) {
    const std::string& text = quick && !s.quick.empty() ? s.quick : s.full;
    PVFS_CHECK(valid(s.type, text));  // a default of the wrong type is a bug
    p.values_[s.key] = Value{s.type, text};
  }
  for (const std::string& o : overrides) {
    const size_t eq = o.find('=');
    if (eq == std::string::npos)
      return Status(Errc::invalid_argument, "parameter '" + o + "' is not key=value");
    const std::string key = o.substr(0, eq);
    auto it = p.values_.find(key);
    if (it == p.values_.end()) {
      std::string known;
      for (const auto& [k, v] : p.values_) known += (known.empty() ? "" : ", ") + k;
      return Status(Errc::invalid_argument,
                    "unknown parameter '" + key + "' (this scenario has: " + known + ")");
    }
    const std::string value = o.substr(eq + 1);
    if (!valid(it->second.type, value))
      return Status(Errc::invalid_argument, "parameter " + key + " must be " +
                                                std::string(type_name(it->second.type)) + ", not '" + value +
                                                "'");
    it->second.text = value;
  }
  return p;
}

const Params::Value& Params::find(std::string_view key, ParamType type) const {
  auto it = values_.find(key);
  PVFS_CHECK(it != values_.end() && it->second.type == type);
  return it->second;
}

int64_t Params::integer(std::string_view key) const {
  int64_t out = 0;
  PVFS_CHECK(parse_integer(find(key, ParamType::integer).text, out));
  return out;
}

double Params::number(std::string_view key) const {
  double out = 0;
  PVFS_CHECK(parse_number(find(key, ParamType::number).text, out));
  return out;
}

std::vector<double> Params::numbers(std::string_view key) const {
  std::vector<double> out;
  for (const std::string& item : split(find(key, ParamType::numbers).text)) {
    double d = 0;
    PVFS_CHECK(parse_number(item, d));
    out.push_back(d);
  }
  return out;
}

std::vector<std::string> Params::words(std::string_view key) const {
  return split(find(key, ParamType::words).text);
}

std::vector<std::string> Params::describe() const {
  std::vector<std::string> out;
  for (const auto& [key, value] : values_) out.push_back(key + "=" + value.text);
  return out;
}

}  // namespace pvfs::sim
