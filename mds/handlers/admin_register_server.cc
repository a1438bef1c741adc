// registerServer and heartbeat: a storage server says where it is and how
// full; only the server itself may, at an address the config allows.
#include "mds/handlers/call.h"

#include <fmt/format.h>

#include "shared/log.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> register_server(Call& c) {
  auto r = c.req.isRegisterServer() ? c.req.getRegisterServer() : c.req.getHeartbeat();
  auto ep = parse_endpoint(text(r.getAddress()));
  if (!ep) co_return ep.status();
  Status failure = check_registration(c.mds.config(), r.getId(), *ep);
  if (failure.ok() && c.conn->peer_identity() != rpc::Identity{rpc::Kind::server, r.getId()})
    failure = Status(Errc::not_permitted, fmt::format("{} may not register as storage server {}",
                                                      rpc::to_string(c.conn->peer_identity()), r.getId()));
  if (!failure.ok()) {
    spdlog::warn("refused registration from {}: {}", c.conn->peer(), failure.detail());
    co_return failure;
  }
  ServerRegistry::Entry entry{ServerId(r.getId()), std::string(text(r.getAddress())), r.getCapacityBytes(),
                              r.getFreeBytes(), {}};
  if (c.mds.registry().heard_from(entry, std::chrono::steady_clock::now())) {
    spdlog::info("storage server {} registered at {}", r.getId(), entry.address);
    NamespaceStore* root = c.mds.filesets().find(kRootInode);
    if (root && !c.mds.cluster().moving(root->fileset()))
      co_return c.none_or(
          root->save_server(StoredServer{r.getId(), entry.address, entry.capacity_bytes, entry.free_bytes}));
  }
  c.reply.setNone();
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
