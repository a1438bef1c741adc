#include "fs/server_reachability.h"

namespace pvfs {

ServerReachability::Try ServerReachability::how(uint32_t server, Clock::time_point now) const {
  auto it = down_since_.find(server);
  if (it == down_since_.end()) return Try::patiently;
  return now < it->second + quiet_ ? Try::not_at_all : Try::once;
}

void ServerReachability::unreachable(uint32_t server, Clock::time_point now) { down_since_[server] = now; }

}  // namespace pvfs
