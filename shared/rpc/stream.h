// The byte stream under a Connection: a TCP socket between processes, a
// Unix-domain socket between processes on one host (local_socket.h), or a
// MemoryStream between a client and a service in one process (tests). One
// type for all, so the Connection's handshake, sealing and framing code is
// the same over each. Models Asio's AsyncReadStream and AsyncWriteStream.
// Belongs to one single-threaded io_context.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include <asio.hpp>

#include "shared/rpc/memory_stream.h"

namespace pvfs::rpc {

class Stream {
 public:
  using executor_type = asio::any_io_executor;

  using LocalSocket = asio::local::stream_protocol::socket;

  // A connected TCP socket: Nagle off, non-blocking (write_some never waits).
  explicit Stream(asio::ip::tcp::socket socket);
  // A connected local socket, non-blocking; `name` says who is at the other
  // end, for logs ("127.0.0.1:7000 (local)").
  Stream(LocalSocket socket, std::string name);
  explicit Stream(MemoryStream memory) : s_(std::move(memory)) {}

  executor_type get_executor() {
    return std::visit([](auto& s) -> executor_type { return s.get_executor(); }, s_);
  }

  template <typename MutableBufferSequence, typename Token>
  auto async_read_some(const MutableBufferSequence& buffers, Token&& token) {
    return asio::async_initiate<Token, void(asio::error_code, size_t)>(
        [this](auto handler, const MutableBufferSequence& b) {
          std::visit([&](auto& s) { s.async_read_some(b, std::move(handler)); }, s_);
        },
        token, buffers);
  }
  template <typename ConstBufferSequence, typename Token>
  auto async_write_some(const ConstBufferSequence& buffers, Token&& token) {
    return asio::async_initiate<Token, void(asio::error_code, size_t)>(
        [this](auto handler, const ConstBufferSequence& b) {
          std::visit([&](auto& s) { s.async_write_some(b, std::move(handler)); }, s_);
        },
        token, buffers);
  }
  // As much of `buffers` as goes without waiting (would_block when none).
  template <typename ConstBufferSequence>
  size_t write_some(const ConstBufferSequence& buffers, asio::error_code& ec) {
    return std::visit([&](auto& s) { return s.write_some(buffers, ec); }, s_);
  }

  // Shuts down and closes; pending operations fail.
  void close();
  // The peer as "host:port" (or "memory:NAME"), and its address alone
  // ("127.0.0.1"; empty when unknown, as over a local socket), for logs and
  // trust decisions.
  std::string describe() const;
  std::string address() const;
  // Over a local socket: the peer runs on this host.
  bool is_local() const { return std::holds_alternative<LocalSocket>(s_); }

 private:
  std::variant<asio::ip::tcp::socket, LocalSocket, MemoryStream> s_;
  std::string local_name_;  // LocalSocket: describe()
};

}  // namespace pvfs::rpc
