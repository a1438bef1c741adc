// registerServer and heartbeat: a storage server says where it is and how
// full; only the server itself may, at an address the config allows.
#include "mds/handlers/call.h"

#include <fmt/format.h>

#include "shared/log.h"
#include "shared/rpc/convert.h"

namespace pvfs::mds::handlers {

asio::awaitable<Status> register_server(Call& c) {
  const ServerInfo info =
      rpc::from_wire(c.req.isRegisterServer() ? c.req.getRegisterServer() : c.req.getHeartbeat());
  auto ep = parse_endpoint(info.address);
  if (!ep) co_return ep.status();
  Status failure = check_registration(c.mds.config(), info.id.value, *ep);
  if (failure.ok() && c.conn->peer_identity() != rpc::Identity{rpc::Kind::server, info.id.value})
    failure = Status(Errc::not_permitted, fmt::format("{} may not register as storage server {}",
                                                      rpc::to_string(c.conn->peer_identity()), info.id.value));
  if (!failure.ok()) {
    spdlog::warn("refused registration from {}: {}", c.conn->peer(), failure.detail());
    co_return failure;
  }
  ServerRegistry::Entry entry{info.id, info.address, info.capacity_bytes, info.free_bytes, {}};
  if (c.mds.registry().heard_from(entry, std::chrono::steady_clock::now())) {
    spdlog::info("storage server {} registered at {}", info.id.value, entry.address);
    NamespaceStore* root = c.mds.filesets().find(kRootInode);
    if (root && !c.mds.cluster().moving(root->fileset()))
      co_return c.none_or(root->save_server(
          StoredServer{info.id.value, entry.address, entry.capacity_bytes, entry.free_bytes}));
  }
  c.reply.setNone();
  co_return Status{};
}

}  // namespace pvfs::mds::handlers
