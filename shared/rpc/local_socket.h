// A Unix-domain socket beside each daemon's TCP port, for peers on the same
// host: the same frames, handshake and seals, without the TCP/IP stack
// (10-25% less CPU per metadata operation; docs/fast-path.md). A daemon bound to ADDRESS:PORT also listens on
// the abstract socket "pvfs-rpc/ADDRESS:PORT" (Linux's abstract namespace:
// nothing in the file system, gone with the process, private to the network
// namespace). A peer that connects to an address of its own host tries that
// name first (then the wildcard daemon's, "0.0.0.0:PORT" or "[::]:PORT")
// and falls back to TCP when nobody listens there. Which daemon answers is
// therefore the one TCP would have reached; the handshake authenticates it
// as it does over TCP.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <asio.hpp>

#include "shared/rpc/stream.h"
#include "shared/status.h"

namespace pvfs::rpc {

// The abstract socket name (with its leading NUL) of the daemon bound to `at`.
std::string local_socket_name(const asio::ip::tcp::endpoint& at);

// Whether `address` is this host's: loopback, or an address of one of its
// interfaces (read once per process).
bool is_local_address(const asio::ip::address& address);

// A stream to the daemon behind `target` over its local socket, connected
// within `timeout`; nullopt when `target` is not on this host or no daemon
// listens on the local socket (the caller uses TCP then).
asio::awaitable<std::optional<Stream>> connect_local(const asio::ip::tcp::endpoint& target,
                                                     std::chrono::milliseconds timeout);

// The local socket of the daemon whose TCP acceptor is bound to `bound`.
// Errors: unavailable (the name is taken, e.g. by a second daemon bound to
// the same port on another address of the wildcard kind).
Result<asio::local::stream_protocol::acceptor> listen_local(asio::io_context& io,
                                                            const asio::ip::tcp::endpoint& bound);

}  // namespace pvfs::rpc
