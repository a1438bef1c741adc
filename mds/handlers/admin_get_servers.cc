// getServers: the storage servers this member knows, alive or not.
#include "mds/handlers/call.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> get_servers(Call& c) {
  const ServerRegistry& registry = c.mds.registry();
  auto all = registry.all();
  auto list = c.reply.initServers(static_cast<unsigned>(all.size()));
  auto now_steady = std::chrono::steady_clock::now();
  for (size_t i = 0; i < all.size(); ++i) {
    list[i].setId(all[i].id.value);
    list[i].setAddress(all[i].address);
    list[i].setCapacityBytes(all[i].capacity_bytes);
    list[i].setFreeBytes(all[i].free_bytes);
    list[i].setAlive(registry.is_live(all[i].id, now_steady));
  }
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
