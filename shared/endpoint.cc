#include "shared/endpoint.h"

#include <charconv>

#include <fmt/format.h>

#include "shared/request_limits.h"

namespace pvfs {

std::string Endpoint::to_string() const {
  if (host.find(':') != std::string::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

Result<Endpoint> parse_endpoint(std::string_view text) {
  if (text.size() > kMaxAddressBytes)
    return Status(Errc::invalid_argument, fmt::format("address is {} bytes; the limit is {} bytes", text.size(),
                                                      kMaxAddressBytes));
  Endpoint ep;
  std::string_view port_text;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return Status(Errc::invalid_argument, fmt::format("bad address '{}': want [v6]:port", text));
    ep.host = std::string(text.substr(1, close - 1));
    port_text = text.substr(close + 2);
  } else {
    auto colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0)
      return Status(Errc::invalid_argument, fmt::format("bad address '{}': want host:port", text));
    ep.host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
  }
  // An unbracketed host with a colon is ambiguous ("fe80::1" would be host
  // "fe80:" port 1), so IPv6 literals must be bracketed.
  if (ep.host.empty() || ep.host.find_first_of(" \t[]") != std::string::npos ||
      (text.front() != '[' && ep.host.find(':') != std::string::npos))
    return Status(Errc::invalid_argument,
                  fmt::format("bad host in address '{}': want host:port or [v6]:port", text));
  unsigned port = 0;
  auto [ptr, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || ptr != port_text.data() + port_text.size() || port > 65535)
    return Status(Errc::invalid_argument, fmt::format("bad port in address '{}'", text));
  ep.port = static_cast<uint16_t>(port);
  return ep;
}

}  // namespace pvfs
