#include "mds/server_registry.h"

#include <algorithm>
#include <fmt/format.h>

namespace pvfs::mds {

bool ServerRegistry::heard_from(const Entry& info, TimePoint now) {
  auto [it, inserted] = servers_.try_emplace(info.id, info);
  bool changed = inserted || it->second.address != info.address;
  it->second = info;
  it->second.last_seen = now;
  return changed;
}

std::vector<ServerId> ServerRegistry::live(TimePoint now) const {
  std::vector<ServerId> out;
  for (const auto& [id, e] : servers_)
    if (now - e.last_seen <= timeout_) out.push_back(id);
  return out;
}

std::vector<ServerId> ServerRegistry::with_room(TimePoint now, uint32_t full_percent) const {
  std::vector<ServerId> out;
  for (const auto& [id, e] : servers_) {
    if (now - e.last_seen > timeout_) continue;
    // used / capacity < full_percent / 100, in integers that cannot overflow
    // (capacities below 2^57 bytes).
    const uint64_t used = e.capacity_bytes - std::min(e.free_bytes, e.capacity_bytes);
    if (e.capacity_bytes == 0 || used * 100 < e.capacity_bytes * full_percent) out.push_back(id);
  }
  return out.empty() ? live(now) : out;
}

bool ServerRegistry::is_live(ServerId id, TimePoint now) const {
  auto it = servers_.find(id);
  return it != servers_.end() && now - it->second.last_seen <= timeout_;
}

std::vector<ServerRegistry::Entry> ServerRegistry::all() const {
  std::vector<Entry> out;
  for (const auto& [id, e] : servers_) out.push_back(e);
  return out;
}

const ServerRegistry::Entry* ServerRegistry::find(ServerId id) const {
  auto it = servers_.find(id);
  return it == servers_.end() ? nullptr : &it->second;
}

Status check_registration(const Config& config, uint32_t id, const Endpoint& address) {
  const DaemonEntry* entry = config.find_server(id);
  if (!entry)
    return Status(Errc::not_permitted,
                  fmt::format("storage server {} at {} is not in the config", id, address.to_string()));
  if (entry->address.host != address.host ||
      (entry->address.port != 0 && entry->address.port != address.port))
    return Status(Errc::not_permitted,
                  fmt::format("storage server {} claims address {} but the config says {}", id,
                              address.to_string(), entry->address.to_string()));
  return {};
}

}  // namespace pvfs::mds
