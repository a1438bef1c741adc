// A daemon's network address as the config and the command lines write it
// ("host:port", "[v6]:port"), and a daemon's entry in the config. Plain
// values, no resolving (shared/rpc does that); thread-safe to copy.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "shared/status.h"

namespace pvfs {

struct Endpoint {
  std::string host;
  uint16_t port = 0;
  std::string to_string() const;
  bool operator==(const Endpoint&) const = default;
};

// "host:port" or "[v6]:port". Port 0 is allowed (bind to any free port).
// Errors: invalid_argument saying what is wrong with `text`.
Result<Endpoint> parse_endpoint(std::string_view text);

// One daemon in the cluster.
struct DaemonEntry {
  uint32_t id = 0;
  Endpoint address;
  std::filesystem::path data_dir;
  // Where the daemon serves Prometheus /metrics (the optional `metrics` key;
  // unset: not served). Unauthenticated: meant for a management network.
  std::optional<Endpoint> metrics = std::nullopt;
};

}  // namespace pvfs
