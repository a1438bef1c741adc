#include "shared/rpc/stream.h"

#include <sys/socket.h>

#include <fmt/format.h>

namespace pvfs::rpc {

using asio::ip::tcp;

Stream::Stream(tcp::socket socket) : s_(std::move(socket)) {
  auto& s = std::get<tcp::socket>(s_);
  asio::error_code ec;
  s.set_option(tcp::no_delay(true), ec);
  s.non_blocking(true, ec);
}

Stream::Stream(LocalSocket socket, std::string name) : s_(std::move(socket)), local_name_(std::move(name)) {
  auto& s = std::get<LocalSocket>(s_);
  asio::error_code ec;
  s.non_blocking(true, ec);
  // A Unix socket's buffers stay at net.core.[rw]mem_default (208 KiB) where
  // loopback TCP grows to megabytes: a 1 MiB frame would cross in five
  // wake-ups each way, which with four writers cost twice the CPU of TCP.
  // Room for a whole frame, forced where the process may (root), else the
  // most the system allows.
  const int bytes = 4 << 20;
  const int fd = s.native_handle();
  if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bytes, sizeof bytes) != 0)
    (void)::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) != 0)
    (void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
}

void Stream::close() {
  asio::error_code ec;
  if (auto* s = std::get_if<tcp::socket>(&s_)) {
    s->shutdown(tcp::socket::shutdown_both, ec);
    s->close(ec);
  } else if (auto* l = std::get_if<LocalSocket>(&s_)) {
    l->shutdown(LocalSocket::shutdown_both, ec);
    l->close(ec);
  } else {
    std::get<MemoryStream>(s_).close();
  }
}

std::string Stream::describe() const {
  if (const auto* m = std::get_if<MemoryStream>(&s_)) return m->peer_name();
  if (is_local()) return local_name_;
  asio::error_code ec;
  auto ep = std::get<tcp::socket>(s_).remote_endpoint(ec);
  if (ec) return "unknown peer";
  return fmt::format("{}:{}", ep.address().to_string(), ep.port());
}

std::string Stream::address() const {
  if (const auto* m = std::get_if<MemoryStream>(&s_)) return m->peer_address();
  if (is_local()) return {};
  asio::error_code ec;
  auto ep = std::get<tcp::socket>(s_).remote_endpoint(ec);
  if (ec) return {};
  auto addr = ep.address();
  if (addr.is_v6() && addr.to_v6().is_v4_mapped())
    return asio::ip::make_address_v4(asio::ip::v4_mapped, addr.to_v6()).to_string();
  return addr.to_string();
}

}  // namespace pvfs::rpc
