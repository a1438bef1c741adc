#include "shared/rpc/local_socket.h"

#include <ifaddrs.h>
#include <netinet/in.h>

#include <cstring>
#include <mutex>
#include <vector>

#include <asio/experimental/awaitable_operators.hpp>
#include <fmt/format.h>

namespace pvfs::rpc {

using asio::ip::tcp;
using LocalProtocol = asio::local::stream_protocol;
using namespace asio::experimental::awaitable_operators;

namespace {

// The addresses of this host's interfaces, read once.
const std::vector<asio::ip::address>& interface_addresses() {
  static std::once_flag once;
  static std::vector<asio::ip::address> all;
  std::call_once(once, [] {
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) return;
    for (ifaddrs* i = list; i; i = i->ifa_next) {
      if (!i->ifa_addr) continue;
      if (i->ifa_addr->sa_family == AF_INET) {
        const auto* in = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
        asio::ip::address_v4::bytes_type b;
        std::memcpy(b.data(), &in->sin_addr, b.size());
        all.emplace_back(asio::ip::address_v4(b));
      } else if (i->ifa_addr->sa_family == AF_INET6) {
        const auto* in6 = reinterpret_cast<const sockaddr_in6*>(i->ifa_addr);
        asio::ip::address_v6::bytes_type b;
        std::memcpy(b.data(), &in6->sin6_addr, b.size());
        all.emplace_back(asio::ip::address_v6(b, in6->sin6_scope_id));
      }
    }
    ::freeifaddrs(list);
  });
  return all;
}

// A v4-mapped v6 address as the v4 one, so both spellings name one daemon.
asio::ip::address plain(const asio::ip::address& a) {
  if (a.is_v6() && a.to_v6().is_v4_mapped()) return asio::ip::make_address_v4(asio::ip::v4_mapped, a.to_v6());
  return a;
}

LocalProtocol::endpoint endpoint_named(const std::string& name) { return LocalProtocol::endpoint(name); }

}  // namespace

std::string local_socket_name(const tcp::endpoint& at) {
  const asio::ip::address a = plain(at.address());
  const std::string host = a.is_v6() ? "[" + a.to_string() + "]" : a.to_string();
  return std::string(1, '\0') + fmt::format("pvfs-rpc/{}:{}", host, at.port());
}

bool is_local_address(const asio::ip::address& address) {
  const asio::ip::address a = plain(address);
  if (a.is_loopback()) return true;
  for (const auto& mine : interface_addresses())
    if (mine == a) return true;
  return false;
}

asio::awaitable<std::optional<Stream>> connect_local(const tcp::endpoint& target,
                                                     std::chrono::milliseconds timeout) {
  if (!is_local_address(target.address())) co_return std::nullopt;
  auto ex = co_await asio::this_coro::executor;
  const std::string shown = fmt::format("{}:{} (local)", plain(target.address()).to_string(), target.port());
  // The daemon bound to this very address, else one bound to the wildcard
  // of either family (it holds the port on every address of the host).
  const tcp::endpoint names[] = {target, tcp::endpoint(asio::ip::address_v4::any(), target.port()),
                                 tcp::endpoint(asio::ip::address_v6::any(), target.port())};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (const auto& name : names) {
    LocalProtocol::socket socket(ex);
    asio::steady_timer timer(ex, deadline);
    asio::error_code ec, timer_ec;
    auto first = co_await (
        socket.async_connect(endpoint_named(local_socket_name(name)), asio::redirect_error(asio::use_awaitable, ec)) ||
        timer.async_wait(asio::redirect_error(asio::use_awaitable, timer_ec)));
    if (first.index() == 0 && !ec) co_return Stream(std::move(socket), shown);
  }
  co_return std::nullopt;
}

Result<LocalProtocol::acceptor> listen_local(asio::io_context& io, const tcp::endpoint& bound) {
  LocalProtocol::acceptor acceptor(io);
  asio::error_code ec;
  acceptor.open(LocalProtocol(), ec);
  if (!ec) acceptor.bind(endpoint_named(local_socket_name(bound)), ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    return Status(Errc::unavailable, fmt::format("cannot listen on the local socket of {}:{}: {}",
                                                 bound.address().to_string(), bound.port(), ec.message()));
  return acceptor;
}

}  // namespace pvfs::rpc
