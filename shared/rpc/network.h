// Where connections to other daemons come from: TCP between processes
// (tcp_network(), what the daemons use), or a MemoryNetwork
// (memory_network.h) that joins clients and services in one process for
// tests. Peers and the drivers that own them take a Network&.
#pragma once

#include <memory>

#include <asio.hpp>

#include "shared/endpoint.h"
#include "shared/rpc/connection.h"

namespace pvfs::rpc {

class Network {
 public:
  virtual ~Network() = default;
  // Connects to `to` and runs the handshake as initiator, within `timeout`;
  // the connection is not started. Errors as Connection::connect.
  virtual asio::awaitable<Result<std::shared_ptr<Connection>>> connect(const Endpoint& to, const Auth& auth,
                                                                       milliseconds timeout) = 0;
};

// Connection::connect. Stateless: one instance serves everyone.
Network& tcp_network();

}  // namespace pvfs::rpc
