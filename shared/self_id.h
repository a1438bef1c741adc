// Which config entry a daemon started without --id is: the one whose host is
// an address of this machine. The choice is pure (choose_self_id: entries,
// their resolved addresses and the local addresses in, an id or a one-line
// error out); find_self_id adds the I/O (getaddrinfo, getifaddrs). Used by
// pvfs-server and pvfs-mds, so that one systemd unit fits every host.
// Thread-safe: no shared state.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "shared/endpoint.h"
#include "shared/status.h"

namespace pvfs {

// One config entry with the numeric addresses its host resolves to
// (canonical text as inet_ntop writes it: "10.0.0.5", "::1").
struct SelfCandidate {
  uint32_t id = 0;
  Endpoint address;
  std::vector<std::string> resolved;  // empty when the host did not resolve
};

// The id of the one candidate with a resolved address among `local` (the
// machine's addresses, same text form). `section` names the table in errors
// ("server" for [[server]]). Errors (invalid_argument, one line asking for
// --id): no candidate is local (the message lists every entry), or several
// are (it lists those).
Result<uint32_t> choose_self_id(std::string_view section, const std::vector<SelfCandidate>& candidates,
                                const std::vector<std::string>& local);

// The numeric addresses `host` resolves to (a literal gives itself), in
// canonical text, without repeats; empty when it does not resolve.
std::vector<std::string> resolve_host(const std::string& host);

// Every address of an interface of this machine (getifaddrs), up or not,
// IPv4 and IPv6, in canonical text. Errors: getifaddrs failing.
Result<std::vector<std::string>> local_addresses();

// choose_self_id over `entries` with real resolution and interfaces.
Result<uint32_t> find_self_id(std::string_view section, const std::vector<DaemonEntry>& entries);

}  // namespace pvfs
