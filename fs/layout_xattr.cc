#include "fs/layout_xattr.h"

#include <charconv>
#include <set>
#include <sstream>

#include <fmt/format.h>

namespace pvfs {

namespace {
std::string join_servers(const std::vector<ServerId>& servers) {
  std::string out;
  for (size_t i = 0; i < servers.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(servers[i].value);
  }
  return out;
}

template <typename T>
bool parse_number(std::string_view text, T& out) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}
}  // namespace

std::string format_layout(const Layout& layout) {
  return fmt::format("stripe_size={} stripe_count={} servers={}", layout.stripe_size,
                     layout.stripe_count(), join_servers(layout.servers));
}

std::string format_policy(const LayoutPolicy& policy) {
  return fmt::format("stripe_size={} stripe_count={} servers={}", policy.stripe_size,
                     policy.stripe_count, join_servers(policy.servers));
}

Result<LayoutPolicy> parse_policy(std::string_view text) {
  LayoutPolicy policy;
  std::set<std::string> seen;
  std::istringstream in{std::string(text)};
  std::string part;
  while (in >> part) {
    auto eq = part.find('=');
    if (eq == std::string::npos)
      return Status(Errc::invalid_argument, fmt::format("'{}' is not key=value", part));
    std::string key = part.substr(0, eq);
    std::string_view value = std::string_view(part).substr(eq + 1);
    if (!seen.insert(key).second)
      return Status(Errc::invalid_argument, fmt::format("'{}' given twice", key));
    if (key == "stripe_size") {
      if (!parse_number(value, policy.stripe_size) || policy.stripe_size % 4096 != 0)
        return Status(Errc::invalid_argument, "stripe_size must be a multiple of 4096 (0 = default)");
    } else if (key == "stripe_count") {
      if (!parse_number(value, policy.stripe_count))
        return Status(Errc::invalid_argument, "stripe_count must be a number (0 = all servers)");
    } else if (key == "servers") {
      std::string_view rest = value;
      while (!rest.empty()) {
        auto comma = rest.find(',');
        std::string_view item = rest.substr(0, comma);
        uint32_t id = 0;
        if (!parse_number(item, id))
          return Status(Errc::invalid_argument, fmt::format("bad server id '{}'", item));
        policy.servers.push_back(ServerId(id));
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      }
    } else {
      return Status(Errc::invalid_argument, fmt::format("unknown layout key '{}'", key));
    }
  }
  return policy;
}

}  // namespace pvfs
