// Accepts connections on one address, authenticates each with the cluster
// secret (dropping peers that fail, and logging them at most once a second
// per reason with a count of the rest), and hands every request to the
// service's handler. Belongs to one single-threaded io_context.
#pragma once

#include <memory>
#include <optional>
#include <set>

#include <asio.hpp>

#include "shared/endpoint.h"
#include "shared/log_limiter.h"
#include "shared/rpc/connection.h"

namespace pvfs::rpc {

class RpcServer {
 public:
  // Binds `at` (port 0 picks a free port) and, with `local_socket`, the
  // local socket of the address bound (local_socket.h; a name already taken
  // is logged and left out: peers then use TCP). Errors: unavailable, naming
  // the address and the reason (e.g. address in use).
  static Result<std::unique_ptr<RpcServer>> listen(asio::io_context& io, const Endpoint& at,
                                                   const Auth& auth, Connection::Handler handler,
                                                   milliseconds handshake_timeout, bool local_socket = true);
  // The port actually bound.
  uint16_t port() const;
  // Starts accepting; returns at once.
  void start();
  // Stops accepting and closes every connection.
  void stop();

  RpcServer(asio::io_context& io, asio::ip::tcp::acceptor acceptor, const Auth& auth,
            Connection::Handler handler, milliseconds handshake_timeout);

 private:
  asio::awaitable<void> accept_loop();
  asio::awaitable<void> accept_local_loop();
  // The handshake on a new connection from `who`, then its requests.
  asio::awaitable<void> admit(Stream stream, std::string who);
  // Logs a failed handshake from `who`, rate-limited.
  void rejected(const std::string& detail, const std::string& who);
  // Logs the counts of rejections held back, once a second while there are any.
  asio::awaitable<void> report_held();

  asio::io_context& io_;
  asio::ip::tcp::acceptor acceptor_;
  std::optional<asio::local::stream_protocol::acceptor> local_acceptor_;
  Auth auth_;
  Connection::Handler handler_;
  milliseconds handshake_timeout_;
  std::set<std::shared_ptr<Connection>> connections_;
  LogLimiter rejections_;
  bool reporting_ = false;  // report_held() is running
};

}  // namespace pvfs::rpc
