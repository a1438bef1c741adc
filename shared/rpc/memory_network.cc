#include "shared/rpc/memory_network.h"

#include <fmt/format.h>

#include "shared/log.h"

namespace pvfs::rpc {

namespace {

class TcpNetwork final : public Network {
 public:
  asio::awaitable<Result<std::shared_ptr<Connection>>> connect(const Endpoint& to, const Auth& auth,
                                                               milliseconds timeout) override {
    co_return co_await Connection::connect(to, auth, timeout);
  }
};

// The listener's end of a new connection: its half of the handshake, then
// its requests to the handler.
asio::awaitable<void> respond(MemoryStream end, Auth auth, Connection::Handler handler, milliseconds timeout) {
  auto conn = co_await Connection::over(Stream(std::move(end)), auth, false, timeout);
  if (!conn) {
    spdlog::warn("in-memory connection refused: {}", conn.status().to_string());
    co_return;
  }
  (*conn)->start(std::move(handler));
}

}  // namespace

Network& tcp_network() {
  static TcpNetwork network;
  return network;
}

void MemoryNetwork::listen(const Endpoint& at, const Auth& auth, Connection::Handler handler) {
  listeners_.insert_or_assign(at.to_string(), Listener{auth, std::move(handler)});
}

void MemoryNetwork::unlisten(const Endpoint& at) { listeners_.erase(at.to_string()); }

void MemoryNetwork::refuse(const Endpoint& at, bool refused) {
  if (refused) refused_.insert(at.to_string());
  else refused_.erase(at.to_string());
}

asio::awaitable<Result<std::shared_ptr<Connection>>> MemoryNetwork::connect(const Endpoint& to, const Auth& auth,
                                                                            milliseconds timeout) {
  const std::string name = to.to_string();
  auto it = listeners_.find(name);
  if (it == listeners_.end() || refused_.count(name))
    co_return Status(Errc::unavailable, fmt::format("cannot connect to {}: connection refused", name));
  auto [mine, theirs] = MemoryStream::pair(ex_, source_, name);
  links_[name].push_back(mine.link());
  asio::co_spawn(ex_, respond(std::move(theirs), it->second.auth, it->second.handler, timeout), asio::detached);
  auto conn = co_await Connection::over(Stream(std::move(mine)), auth, true, timeout);
  if (!conn) co_return Status(conn.status().code(), fmt::format("{}: {}", name, conn.status().detail()));
  co_return conn;
}

std::vector<MemoryLink> MemoryNetwork::links(const Endpoint& at) const {
  auto it = links_.find(at.to_string());
  return it == links_.end() ? std::vector<MemoryLink>{} : it->second;
}

void MemoryNetwork::cut(const Endpoint& at) {
  for (auto& link : links(at)) link.cut();
}

}  // namespace pvfs::rpc
