// The /metrics endpoint: a minimal HTTP/1.1 server on the daemon's own
// io_context that answers `GET /metrics` with the daemon's metric families
// in the Prometheus text format (shared/metrics/prometheus.h), 404 for any
// other request and 400 for a malformed or oversized one, then closes the
// connection. Unauthenticated and read-only: bind it to a management
// network. Bounded: requests up to 8 KiB, 5 s to send one, at most 16
// connections at once; each connection is served on its own, and when all
// 16 are taken a new one closes the connection that has waited longest for
// its request (an idle or slow peer), so idle connections never keep a
// scraper out. Bad input never stops the daemon. Belongs to one
// single-threaded io_context; so does `source`.
#pragma once

#include <functional>
#include <map>
#include <memory>

#include <asio.hpp>

#include "shared/endpoint.h"
#include "shared/metrics/metrics.h"

namespace pvfs::rpc {

class MetricsHttpServer {
 public:
  // Builds the families served on each request; runs on the io_context's thread.
  using Source = std::function<metrics::Families()>;

  // Binds `at` (port 0 picks a free port). Errors: unavailable, naming the
  // address and the reason.
  static Result<std::unique_ptr<MetricsHttpServer>> listen(asio::io_context& io, const Endpoint& at,
                                                           Source source);
  // The port actually bound.
  uint16_t port() const;
  // Starts accepting; returns at once.
  void start();
  // Stops accepting; connections in progress finish or time out.
  void stop();

  MetricsHttpServer(asio::io_context& io, asio::ip::tcp::acceptor acceptor, Source source);

 private:
  asio::awaitable<void> accept_loop();
  asio::awaitable<void> serve(asio::ip::tcp::socket socket);

  asio::io_context& io_;
  asio::ip::tcp::acceptor acceptor_;
  Source source_;
  std::shared_ptr<unsigned> open_ = std::make_shared<unsigned>(0);  // connections being served
  // Connections still waiting for their request head, oldest first.
  std::map<uint64_t, std::weak_ptr<asio::ip::tcp::socket>> waiting_;
  uint64_t next_connection_ = 0;
};

// The response to one request head (the bytes up to and including the
// blank line; `complete` false: the head was cut off by the size limit or
// the peer). Pure; exposed for tests.
struct HttpResponse {
  int status = 200;
  std::string content_type;
  std::string body;
  // The whole response: status line, headers (Content-Length,
  // Connection: close) and body.
  std::string to_text() const;
};
HttpResponse respond(std::string_view head, bool complete, const MetricsHttpServer::Source& source);

}  // namespace pvfs::rpc
