// A remote daemon the caller talks to by address: connects on first use,
// reconnects on the next call after a loss, and shares one connection among
// all concurrent callers. Used by clients, by storage servers (to reach the
// MDS) and by tools. Belongs to one single-threaded io_context.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <span>

#include <asio.hpp>

#include "shared/endpoint.h"
#include "shared/rpc/connection.h"
#include "shared/rpc/network.h"

namespace pvfs::rpc {

class Peer {
 public:
  // Connections come from `network` (which must outlive the peer).
  Peer(asio::any_io_executor ex, Endpoint address, const Auth& auth, milliseconds connect_timeout,
       Network& network = tcp_network());

  // As Connection::call, after connecting if needed. A request is sent at
  // most once; a lost connection fails the calls in flight with unavailable.
  asio::awaitable<Result<std::unique_ptr<InMessage>>> call(OutMessage& request,
                                                           std::span<const std::byte> data,
                                                           milliseconds timeout,
                                                           milliseconds busy_limit = milliseconds(0));
  // The live connection, connecting first if there is none (one attempt,
  // shared by concurrent callers: those that waited get its outcome, a
  // failure included). Lets callers tell "could not send" apart
  // from "sent, then lost". Errors as Connection::connect.
  asio::awaitable<Result<std::shared_ptr<Connection>>> connection();
  // Requests the remote daemon sends over connections made from now on go to
  // `on_request` (without one they are answered not_supported), and
  // `on_close` runs when such a connection ends.
  void serve(Connection::Handler on_request, std::function<void()> on_close) {
    on_request_ = std::move(on_request);
    on_close_ = std::move(on_close);
  }
  // Drops the current connection (the next call reconnects).
  void close();
  const Endpoint& address() const { return address_; }

 private:

  asio::any_io_executor ex_;
  Endpoint address_;
  Auth auth_;
  milliseconds connect_timeout_;
  Network& network_;
  Connection::Handler on_request_;
  std::function<void()> on_close_;
  std::shared_ptr<Connection> conn_;
  bool connecting_ = false;
  uint64_t attempts_ = 0;  // connect attempts finished
  Status last_failure_;    // of the last attempt (ok if it connected)
  std::deque<std::shared_ptr<asio::steady_timer>> waiters_;
};

}  // namespace pvfs::rpc
