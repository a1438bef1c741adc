#include "shared/rpc/rpc_server.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <fmt/format.h>

#include "shared/log.h"
#include "shared/rpc/local_socket.h"

namespace pvfs::rpc {

using asio::ip::tcp;

namespace {

// TCP keepalive on every accepted connection: a peer whose machine vanished
// (no FIN, no RST) is noticed about 11 s after its last traffic, so the MDS
// can act for a dead client (pvfs-mds(8), "Sizes when a client dies").
// Best effort: a socket that refuses the options works without them.
void probe_liveness(tcp::socket& socket) {
  asio::error_code ec;
  socket.set_option(asio::socket_base::keep_alive(true), ec);
  const int fd = socket.native_handle();
  const int idle_s = 5, interval_s = 2, probes = 3;
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof idle_s);
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval_s, sizeof interval_s);
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof probes);
}

}  // namespace

Result<std::unique_ptr<RpcServer>> RpcServer::listen(asio::io_context& io, const Endpoint& at,
                                                     const Auth& auth, Connection::Handler handler,
                                                     milliseconds handshake_timeout, bool local_socket) {
  auto acceptor = listen_on(io, at);
  if (!acceptor) return acceptor.status();
  auto server = std::make_unique<RpcServer>(io, std::move(*acceptor), auth, std::move(handler), handshake_timeout);
  if (local_socket) {
    asio::error_code ec;
    auto local = listen_local(io, server->acceptor_.local_endpoint(ec));
    if (local) server->local_acceptor_.emplace(std::move(*local));
    else spdlog::warn("{}; peers on this host use TCP", local.status().detail());
  }
  return server;
}

RpcServer::RpcServer(asio::io_context& io, tcp::acceptor acceptor, const Auth& auth,
                     Connection::Handler handler, milliseconds handshake_timeout)
    : io_(io),
      acceptor_(std::move(acceptor)),
      auth_(auth),
      handler_(std::move(handler)),
      handshake_timeout_(handshake_timeout) {}

uint16_t RpcServer::port() const {
  asio::error_code ec;
  return acceptor_.local_endpoint(ec).port();
}

void RpcServer::start() {
  asio::co_spawn(io_, accept_loop(), asio::detached);
  if (local_acceptor_) asio::co_spawn(io_, accept_local_loop(), asio::detached);
}

void RpcServer::stop() {
  asio::error_code ec;
  acceptor_.close(ec);
  if (local_acceptor_) local_acceptor_->close(ec);
  auto conns = std::move(connections_);
  for (auto& c : conns) c->close();
}

asio::awaitable<void> RpcServer::accept_loop() {
  while (acceptor_.is_open()) {
    asio::error_code ec;
    tcp::socket socket = co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted) break;
      spdlog::warn("accept failed: {}", ec.message());
      // Out of descriptors or similar: back off rather than spin.
      asio::steady_timer pause(io_, std::chrono::milliseconds(100));
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    probe_liveness(socket);
    const auto from = socket.remote_endpoint(ec);
    std::string who = ec ? std::string() : fmt::format("{}:{}", from.address().to_string(), from.port());
    asio::co_spawn(io_, admit(Stream(std::move(socket)), std::move(who)), asio::detached);
  }
}

asio::awaitable<void> RpcServer::accept_local_loop() {
  // No keepalive: a peer on this host that dies closes its end.
  while (local_acceptor_->is_open()) {
    asio::error_code ec;
    auto socket = co_await local_acceptor_->async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted) break;
      spdlog::warn("accept on the local socket failed: {}", ec.message());
      asio::steady_timer pause(io_, std::chrono::milliseconds(100));
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    asio::co_spawn(io_, admit(Stream(std::move(socket), "a peer on this host (local socket)"), {}),
                   asio::detached);
  }
}

asio::awaitable<void> RpcServer::admit(Stream stream, std::string who) {
  auto conn = co_await Connection::over(std::move(stream), auth_, false, handshake_timeout_);
  if (!conn) {
    rejected(conn.status().detail(), who);
    co_return;
  }
  auto c = *conn;
  connections_.insert(c);
  std::weak_ptr<Connection> weak = c;
  c->start(handler_, [this, weak] {
    if (auto strong = weak.lock()) connections_.erase(strong);
  });
}

void RpcServer::rejected(const std::string& detail, const std::string& who) {
  // The reason without the peer's address and port: a peer failing on
  // purpose (or a port scanner) must not write a line per attempt.
  std::string reason = detail;
  if (!who.empty()) {
    if (reason.starts_with(who + ": ")) reason.erase(0, who.size() + 2);
    for (size_t at; (at = reason.find(who)) != std::string::npos;) reason.replace(at, who.size(), "a peer");
  }
  const auto verdict = rejections_.admit(reason, std::chrono::steady_clock::now());
  if (verdict.log) {
    if (verdict.suppressed)
      spdlog::warn("rejected connection: {} (and {} more for this reason since its last line)", detail,
                   verdict.suppressed);
    else
      spdlog::warn("rejected connection: {}", detail);
    return;
  }
  if (!reporting_) {
    reporting_ = true;
    asio::co_spawn(io_, report_held(), asio::detached);
  }
}

asio::awaitable<void> RpcServer::report_held() {
  while (rejections_.holding()) {
    asio::steady_timer pause(io_, std::chrono::seconds(1));
    asio::error_code ec;
    co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    for (const auto& held : rejections_.drain(std::chrono::steady_clock::now()))
      spdlog::warn("rejected {} more connections since the last line for this reason: {}", held.count,
                   held.reason);
  }
  reporting_ = false;
}

}  // namespace pvfs::rpc
