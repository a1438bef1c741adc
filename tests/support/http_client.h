// Test support: a plain HTTP/1.1 exchange with 127.0.0.1:port over a raw
// socket (for the daemons' /metrics endpoint). Header-only; test code only.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include <doctest/doctest.h>

namespace pvfs::test {

// Sends `request` to 127.0.0.1:port, closes the sending side and returns
// everything the peer sends back until it closes (empty when it cannot
// connect; waits at most 5 s for each piece).
inline std::string http_exchange(uint16_t port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    if (!request.empty()) (void)::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
    ::shutdown(fd, SHUT_WR);  // all sent: the server sees the end of the request
    char buf[16384];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) response.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return response;
}

struct HttpReply {
  std::string status_line, headers, body;
};

// GET `path` from 127.0.0.1:port; all fields empty when no complete head came back.
inline HttpReply http_get(uint16_t port, const std::string& path) {
  const std::string raw =
      http_exchange(port, "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: */*\r\n\r\n");
  HttpReply r;
  const size_t head_end = raw.find("\r\n\r\n");
  const size_t line_end = raw.find("\r\n");
  if (head_end == std::string::npos) return r;
  r.status_line = raw.substr(0, line_end);
  r.headers = raw.substr(line_end + 2, head_end - line_end - 2);
  r.body = raw.substr(head_end + 4);
  return r;
}

}  // namespace pvfs::test
