#include "shared/self_id.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace pvfs {

namespace {

// Canonical text of an IPv4 or IPv6 socket address; empty for other families.
std::string address_text(const sockaddr* sa) {
  char text[INET6_ADDRSTRLEN] = {};
  if (sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    if (::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text)) return text;
  } else if (sa->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    if (::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text)) return text;
  }
  return {};
}

void add_unique(std::vector<std::string>& list, std::string value) {
  if (!value.empty() && std::find(list.begin(), list.end(), value) == list.end())
    list.push_back(std::move(value));
}

}  // namespace

Result<uint32_t> choose_self_id(std::string_view section, const std::vector<SelfCandidate>& candidates,
                                const std::vector<std::string>& local) {
  std::vector<std::string> matching;
  uint32_t chosen = 0;
  for (const auto& c : candidates) {
    const bool here = std::any_of(c.resolved.begin(), c.resolved.end(), [&](const std::string& a) {
      return std::find(local.begin(), local.end(), a) != local.end();
    });
    if (!here) continue;
    chosen = c.id;
    matching.push_back(fmt::format("{}={}", c.id, c.address.to_string()));
  }
  if (matching.size() == 1) return chosen;
  if (matching.empty()) {
    std::vector<std::string> all;
    for (const auto& c : candidates)
      all.push_back(fmt::format("{}={}{}", c.id, c.address.to_string(),
                                c.resolved.empty() ? " (does not resolve)" : ""));
    if (all.empty())
      return Status(Errc::invalid_argument,
                    fmt::format("the config has no [[{}]] entry", section));
    return Status(Errc::invalid_argument,
                  fmt::format("no [[{}]] entry of the config is on this machine (entries: {}); "
                              "give --id",
                              section, fmt::join(all, ", ")));
  }
  return Status(Errc::invalid_argument,
                fmt::format("several [[{}]] entries of the config are on this machine ({}); "
                            "give --id to choose one",
                            section, fmt::join(matching, ", ")));
}

std::vector<std::string> resolve_host(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  std::vector<std::string> out;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0) return out;
  for (const addrinfo* a = found; a; a = a->ai_next) add_unique(out, address_text(a->ai_addr));
  ::freeaddrinfo(found);
  return out;
}

Result<std::vector<std::string>> local_addresses() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return Status::from_errno(errno, "getifaddrs");
  std::vector<std::string> out;
  for (const ifaddrs* i = list; i; i = i->ifa_next)
    if (i->ifa_addr) add_unique(out, address_text(i->ifa_addr));
  ::freeifaddrs(list);
  return out;
}

Result<uint32_t> find_self_id(std::string_view section, const std::vector<DaemonEntry>& entries) {
  auto local = local_addresses();
  if (!local) return local.status();
  std::vector<SelfCandidate> candidates;
  for (const auto& e : entries) candidates.push_back({e.id, e.address, resolve_host(e.address.host)});
  return choose_self_id(section, candidates, *local);
}

}  // namespace pvfs
