// getServers: the storage servers this member knows, alive or not.
#include "mds/handlers/call.h"

#include "shared/rpc/convert.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> get_servers(Call& c) {
  const ServerRegistry& registry = c.mds.registry();
  auto all = registry.all();
  auto list = c.reply.initServers(static_cast<unsigned>(all.size()));
  auto now_steady = std::chrono::steady_clock::now();
  for (size_t i = 0; i < all.size(); ++i)
    rpc::to_wire(ServerInfo{all[i].id, all[i].address, all[i].capacity_bytes, all[i].free_bytes,
                            registry.is_live(all[i].id, now_steady)},
                 list[static_cast<unsigned>(i)]);
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
