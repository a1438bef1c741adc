// A raw pvfs connection for tests that must speak the wire protocol by
// hand (the fuzz tests): blocking POSIX socket with timeouts, the initiator
// side of the handshake, and sealed frames in and out (bytes sent with
// send() are not sealed). Test-only; one thread per object.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include <capnp/serialize.h>
#include <doctest/doctest.h>

#include "config/config.h"
#include "shared/proto/common.capnp.h"
#include "shared/rpc/frame.h"
#include "shared/rpc/frame_seal.h"
#include "shared/rpc/handshake.h"
#include "shared/rpc/message.h"
#include "shared/rpc/wire_status.h"
#include "shared/secret.h"
#include "shared/status.h"

namespace pvfs::test {

using Bytes = std::vector<std::byte>;

// A blocking TCP connection with receive and send timeouts, so a daemon that
// neither answers nor closes shows up as `hung` instead of stalling the test.
class RawConn {
 public:
  enum class Got { ok, closed, hung };

  explicit RawConn(const Endpoint& to, int timeout_ms = 10000) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    set_timeouts(timeout_ms, timeout_ms);
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(to.port);
    REQUIRE(::inet_pton(AF_INET, to.host.c_str(), &addr.sin_addr) == 1);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  }
  ~RawConn() { close(); }
  RawConn(const RawConn&) = delete;
  RawConn& operator=(const RawConn&) = delete;

  void set_timeouts(int recv_ms, int send_ms) {
    timeval r{recv_ms / 1000, (recv_ms % 1000) * 1000}, s{send_ms / 1000, (send_ms % 1000) * 1000};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &r, sizeof r);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &s, sizeof s);
  }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // False when the peer has closed or the send timed out.
  bool send(std::span<const std::byte> bytes) {
    for (size_t done = 0; done < bytes.size();) {
      ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }
  bool send(const void* p, size_t n) { return send({static_cast<const std::byte*>(p), n}); }

  Got recv_exact(std::span<std::byte> out) {
    for (size_t done = 0; done < out.size();) {
      ssize_t n = ::recv(fd_, out.data() + done, out.size() - done, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Got::hung;
      if (n <= 0) return Got::closed;
      done += static_cast<size_t>(n);
    }
    return Got::ok;
  }

  // Runs the initiator side of the handshake with `key`, as a client.
  bool handshake(const Secret& key) {
    rpc::Nonce own{};
    random_bytes(own);
    rpc::Hello hello = rpc::make_hello({}, false, own);
    if (!send(hello.data(), hello.size())) return false;
    rpc::Hello theirs{};
    if (recv_exact(std::as_writable_bytes(std::span(theirs))) != Got::ok) return false;
    auto fields = rpc::parse_hello(theirs);
    if (!fields) return false;
    Mac proof = rpc::make_proof(key, rpc::Side::initiator, hello, theirs);
    if (!send(proof.data(), proof.size())) return false;
    Mac server_proof{};
    if (recv_exact(std::as_writable_bytes(std::span(server_proof))) != Got::ok) return false;
    if (!rpc::check_proof(key, rpc::Side::responder, hello, theirs, server_proof)) return false;
    auto keys = rpc::derive_session_keys(key, hello, theirs);
    send_seal_ = std::make_unique<rpc::FrameSeal>(keys.initiator_to_responder, fields->encrypt);
    receive_seal_ = std::make_unique<rpc::FrameSeal>(keys.responder_to_initiator, fields->encrypt);
    return true;
  }

  // The bytes of the next frame: sealed after handshake() (so frames made
  // here must be sent in the order they were made), bare (no tag) before it.
  Bytes frame(std::span<const std::byte> message, std::span<const std::byte> data = {}) {
    auto header = rpc::encode_header({static_cast<uint32_t>(message.size()), data.size()});
    Bytes out(header.begin(), header.end());
    out.insert(out.end(), message.begin(), message.end());
    out.insert(out.end(), data.begin(), data.end());
    if (!send_seal_) return out;
    REQUIRE(!send_seal_->encrypts());
    Bytes copy(message.begin(), message.end());
    auto tag = send_seal_->seal(header, copy, data, {});
    out.insert(out.end(), tag.begin(), tag.end());
    return out;
  }
  // Sends one frame (see frame()).
  bool send_frame(std::span<const std::byte> message, std::span<const std::byte> data) {
    return send(frame(message, data));
  }
  bool send_request(rpc::OutMessage& out, uint64_t id, std::span<const std::byte> data = {}) {
    out.envelope().setId(id);
    out.envelope().setIsReply(false);
    auto words = capnp::messageToFlatArray(out.builder());
    return send_frame(std::as_bytes(std::span(words.begin(), words.size())), data);
  }

  struct Reply {
    uint64_t id = 0;
    bool is_reply = false;
    Errc status = Errc::ok;
    Bytes data;
  };
  // The next frame from the daemon.
  std::variant<Reply, Got> read_frame() {
    rpc::HeaderBytes hb{};
    if (Got g = recv_exact(hb); g != Got::ok) return g;
    auto header = rpc::decode_header(hb);
    REQUIRE_MESSAGE(header.ok(), "daemon sent a bad frame: ", header.status().to_string());
    auto words = kj::heapArray<capnp::word>(header->message_bytes / 8);
    if (Got g = recv_exact(std::as_writable_bytes(std::span(words.begin(), words.size())));
        g != Got::ok)
      return g;
    Reply r;
    r.data.resize(header->data_bytes);
    if (Got g = recv_exact(r.data); g != Got::ok) return g;
    rpc::FrameTag tag{};
    if (Got g = recv_exact(tag); g != Got::ok) return g;
    REQUIRE(receive_seal_);
    REQUIRE_MESSAGE(receive_seal_->open(hb, std::as_writable_bytes(std::span(words.begin(), words.size())),
                                        r.data, tag),
                    "daemon sent a frame that fails its integrity check");
    capnp::FlatArrayMessageReader reader(words, rpc::reader_options());
    auto env = reader.getRoot<proto::Envelope>();
    r.id = env.getId();
    r.is_reply = env.getIsReply();
    r.status = rpc::from_wire(env.getStatus());
    return r;
  }
  // Reads until the reply to `id` arrives or the connection ends.
  std::variant<Reply, Got> reply_to(uint64_t id) {
    for (;;) {
      auto frame = read_frame();
      if (auto* r = std::get_if<Reply>(&frame); r && !(r->is_reply && r->id == id)) continue;
      return frame;
    }
  }
  // Whether the daemon closes this connection (reading and dropping whatever it sends).
  Got wait_closed() {
    std::byte sink[4096];
    for (;;) {
      ssize_t n = ::recv(fd_, sink, sizeof sink, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Got::hung;
      if (n <= 0) return Got::closed;
    }
  }

 private:
  int fd_ = -1;
  std::unique_ptr<rpc::FrameSeal> send_seal_;
  std::unique_ptr<rpc::FrameSeal> receive_seal_;
};

// The status of the reply to `id`, or "closed" / "hung".
inline std::string outcome(RawConn& c, uint64_t id) {
  auto frame = c.reply_to(id);
  if (auto* r = std::get_if<RawConn::Reply>(&frame)) return std::string(errc_name(r->status));
  return std::get<RawConn::Got>(frame) == RawConn::Got::closed ? "closed" : "hung";
}

}  // namespace pvfs::test
