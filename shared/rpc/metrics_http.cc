#include "shared/rpc/metrics_http.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "shared/log.h"
#include "shared/metrics/prometheus.h"
#include "shared/rpc/connection.h"

namespace pvfs::rpc {

using asio::ip::tcp;

namespace {

constexpr size_t kMaxHeadBytes = 8192;
constexpr auto kRequestTimeout = std::chrono::seconds(5);
constexpr unsigned kMaxConnections = 16;
constexpr size_t kMaxDrainBytes = 64 * 1024;

std::string_view reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    default: return "Error";
  }
}

HttpResponse plain(int status, std::string body) {
  return HttpResponse{status, "text/plain; charset=utf-8", std::move(body)};
}

}  // namespace

std::string HttpResponse::to_text() const {
  return fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                     status, reason(status), content_type, body.size(), body);
}

HttpResponse respond(std::string_view head, bool complete, const MetricsHttpServer::Source& source) {
  if (!complete) return plain(400, "bad request: the request head must end with a blank line within 8 KiB\n");
  const size_t eol = head.find("\r\n");
  const std::string_view line = head.substr(0, eol);
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || !line.substr(sp2 + 1).starts_with("HTTP/1."))
    return plain(400, "bad request: want 'GET /metrics HTTP/1.1'\n");
  const std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  target = target.substr(0, target.find('?'));
  if (method != "GET" || target != "/metrics") return plain(404, "not found: only GET /metrics is served\n");
  return HttpResponse{200, std::string(metrics::kPrometheusContentType),
                      metrics::render_prometheus(source())};
}

Result<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::listen(asio::io_context& io,
                                                                     const Endpoint& at,
                                                                     Source source) {
  auto acceptor = listen_on(io, at);
  if (!acceptor)
    return Status(acceptor.code(), "metrics: " + acceptor.status().detail());
  return std::make_unique<MetricsHttpServer>(io, std::move(*acceptor), std::move(source));
}

MetricsHttpServer::MetricsHttpServer(asio::io_context& io, tcp::acceptor acceptor, Source source)
    : io_(io), acceptor_(std::move(acceptor)), source_(std::move(source)) {}

uint16_t MetricsHttpServer::port() const {
  asio::error_code ec;
  return acceptor_.local_endpoint(ec).port();
}

void MetricsHttpServer::start() { asio::co_spawn(io_, accept_loop(), asio::detached); }

void MetricsHttpServer::stop() {
  asio::error_code ec;
  acceptor_.close(ec);
}

asio::awaitable<void> MetricsHttpServer::accept_loop() {
  while (acceptor_.is_open()) {
    asio::error_code ec;
    tcp::socket socket = co_await acceptor_.async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted) break;
      spdlog::warn("metrics endpoint: accept failed: {}", ec.message());
      asio::steady_timer pause(io_, std::chrono::milliseconds(100));
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    if (*open_ >= kMaxConnections) {
      // Full: the connection that has waited longest for its request goes,
      // so a scraper that sends at once is served whatever idles here.
      bool evicted = false;
      while (!evicted && !waiting_.empty()) {
        auto oldest = waiting_.begin()->second.lock();
        waiting_.erase(waiting_.begin());
        if (oldest && oldest->is_open()) {
          oldest->close(ec);
          evicted = true;
        }
      }
      if (!evicted) continue;  // every one is being answered: this socket closes as it goes
    }
    asio::co_spawn(io_, serve(std::move(socket)), asio::detached);
  }
}

asio::awaitable<void> MetricsHttpServer::serve(tcp::socket accepted) {
  auto open = open_;
  ++*open;
  struct Leave {
    std::shared_ptr<unsigned> n;
    ~Leave() { --*n; }
  } leave{open};
  // Shared with the deadline's handler, which may run after this coroutine ends.
  auto socket = std::make_shared<tcp::socket>(std::move(accepted));
  // A peer that sends slowly or never reads is cut off at the deadline.
  asio::steady_timer deadline(io_, kRequestTimeout);
  deadline.async_wait([socket](const asio::error_code& ec) {
    if (ec) return;
    asio::error_code ignore;
    socket->close(ignore);
  });
  std::string head;
  asio::error_code ec;
  const uint64_t me = next_connection_++;
  waiting_.emplace(me, socket);
  const size_t n = co_await asio::async_read_until(*socket, asio::dynamic_buffer(head, kMaxHeadBytes),
                                                   "\r\n\r\n",
                                                   asio::redirect_error(asio::use_awaitable, ec));
  waiting_.erase(me);
  if (!socket->is_open() || (ec && head.empty())) co_return;  // timed out, or left without a word
  const HttpResponse response =
      respond(std::string_view(head).substr(0, ec ? head.size() : n), !ec, source_);
  if (spdlog::should_log(spdlog::level::debug)) {
    asio::error_code peer_ec;
    const auto peer = socket->remote_endpoint(peer_ec);
    std::string line = head.substr(0, std::min({head.find('\r'), head.find('\n'), size_t{120}}));
    for (char& c : line)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) c = '?';
    spdlog::debug("metrics endpoint: {} '{}' -> {}", peer_ec ? std::string("?") : fmt::format("{}:{}",
                  peer.address().to_string(), peer.port()), line, response.status);
  }
  const std::string text = response.to_text();
  co_await asio::async_write(*socket, asio::buffer(text), asio::redirect_error(asio::use_awaitable, ec));
  socket->shutdown(tcp::socket::shutdown_send, ec);
  // Closing with unread request bytes would reset the connection and could
  // destroy the response before the peer reads it: read on (bounded, and
  // the deadline still applies) until the peer closes its side.
  std::array<char, 4096> scratch;
  for (size_t drained = 0; !ec && drained < kMaxDrainBytes;)
    drained += co_await socket->async_read_some(asio::buffer(scratch),
                                                asio::redirect_error(asio::use_awaitable, ec));
  socket->close(ec);
}

}  // namespace pvfs::rpc
