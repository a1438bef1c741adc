// The peers' loads a storage server heard; see peer_loads.h. Pure.
#include "policy/load/peer_loads.h"

namespace pvfs::load {

void PeerLoads::learn(const PeerLoad& load, Nanos age, Nanos now) {
  const Nanos at = now - age;
  auto it = heard_.find(load.server);
  if (it != heard_.end() && it->second.at >= at) return;
  heard_.insert_or_assign(load.server, Figure{load, at});
}

std::vector<HeardLoad> PeerLoads::fresh(Nanos now, Nanos ttl) const {
  std::vector<HeardLoad> out;
  for (const auto& [server, f] : heard_)
    if (now - f.at < ttl) out.push_back(HeardLoad{f.load, now - f.at});
  return out;
}

}  // namespace pvfs::load
