#include "shared/rpc/connection.h"

#include <asio/experimental/awaitable_operators.hpp>
#include <fmt/format.h>
#include <kj/exception.h>

#include <limits>

#include "shared/log.h"
#include "shared/rpc/frame.h"
#include "shared/rpc/handshake.h"
#include "shared/rpc/local_socket.h"
#include "shared/rpc/origin.h"
#include "shared/rpc/read_ahead.h"
#include "shared/rpc/wire_status.h"

namespace pvfs::rpc {

using asio::redirect_error;
using asio::use_awaitable;
using asio::ip::tcp;
using namespace asio::experimental::awaitable_operators;

capnp::ReaderOptions reader_options() {
  capnp::ReaderOptions options;
  options.traversalLimitInWords = kMaxMessageBytes / 8 * 4;
  options.nestingLimit = 16;
  return options;
}

InMessage::InMessage(kj::Array<capnp::word> words, Buffer data)
    : words_(std::move(words)),
      reader_(words_.asPtr(), reader_options()),
      envelope_(reader_.getRoot<proto::Envelope>()),
      data_(std::move(data)),
      id_(envelope_.getId()) {}

Result<tcp::endpoint> resolve(const Endpoint& ep) {
  asio::error_code ec;
  auto addr = asio::ip::make_address(ep.host, ec);
  if (!ec) return tcp::endpoint(addr, ep.port);
  asio::io_context io;
  tcp::resolver resolver(io);
  auto results = resolver.resolve(ep.host, std::to_string(ep.port), ec);
  if (ec || results.empty())
    return Status(Errc::unavailable, fmt::format("cannot resolve {}: {}", ep.host, ec.message()));
  return results.begin()->endpoint();
}

Result<tcp::acceptor> listen_on(asio::io_context& io, const Endpoint& at) {
  auto ep = resolve(at);
  if (!ep)
    return Status(ep.status().code(),
                  fmt::format("cannot listen on {}: {}", at.to_string(), ep.status().detail()));
  tcp::acceptor acceptor(io);
  asio::error_code ec;
  acceptor.open(ep->protocol(), ec);
  if (!ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(*ep, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status(Errc::unavailable, fmt::format("cannot listen on {}: {}", at.to_string(), ec.message()));
  return acceptor;
}

namespace {

struct Handshake {
  Identity peer;
  SessionKeys keys;
  bool encrypt = false;
  bool tag_data = true;
};

asio::awaitable<Status> read_proof(Stream& socket, Mac& proof, std::string_view closed_why) {
  asio::error_code ec;
  co_await asio::async_read(socket, asio::buffer(proof), redirect_error(use_awaitable, ec));
  if (ec) co_return Status(Errc::access_denied, std::string(closed_why));
  co_return Status{};
}

// One side of the handshake (handshake.h). Runs without a deadline of its
// own; callers race it against a timer. The responder speaks second at every
// step, so it proves nothing to a peer that has not proved itself first.
asio::awaitable<Result<Handshake>> run_handshake(Stream& socket, const Auth& auth, Side side) {
  asio::error_code ec;
  Nonce own{};
  random_bytes(own);
  const Hello mine = make_hello(auth.self, auth.encrypt, own, socket.is_local());
  Hello theirs{};
  auto send = [&](std::span<const uint8_t> bytes) -> asio::awaitable<Status> {
    co_await asio::async_write(socket, asio::buffer(bytes.data(), bytes.size()),
                               redirect_error(use_awaitable, ec));
    if (ec) co_return Status(Errc::unavailable, "handshake: " + ec.message());
    co_return Status{};
  };
  if (side == Side::initiator) {
    if (Status st = co_await send(mine); !st.ok()) co_return st;
  }
  co_await asio::async_read(socket, asio::buffer(theirs), redirect_error(use_awaitable, ec));
  if (ec) co_return Status(Errc::unavailable, "handshake: " + ec.message());
  auto fields = parse_hello(theirs);
  if (!fields)
    co_return Status(Errc::access_denied, "peer does not speak this version of the pvfs handshake");
  const Hello& initiator = side == Side::initiator ? mine : theirs;
  const Hello& responder = side == Side::initiator ? theirs : mine;
  Mac peer_proof{};
  if (side == Side::initiator) {
    Mac proof = make_proof(auth.key, Side::initiator, initiator, responder);
    if (Status st = co_await send(proof); !st.ok()) co_return st;
    if (Status st = co_await read_proof(socket, peer_proof, "peer refused our proof (wrong secret?)");
        !st.ok())
      co_return st;
    if (!check_proof(auth.key, Side::responder, initiator, responder, peer_proof))
      co_return Status(Errc::access_denied, "peer failed the secret check");
  } else {
    if (Status st = co_await send(mine); !st.ok()) co_return st;
    if (Status st = co_await read_proof(socket, peer_proof, "peer closed during handshake");
        !st.ok())
      co_return st;
    if (!check_proof(auth.key, Side::initiator, initiator, responder, peer_proof))
      co_return Status(Errc::access_denied,
                       fmt::format("peer ({}) failed the secret check", to_string(fields->who)));
    Mac proof = make_proof(auth.key, Side::responder, initiator, responder);
    if (Status st = co_await send(proof); !st.ok()) co_return st;
  }
  const bool encrypt = auth.encrypt || fields->encrypt;
  co_return Handshake{fields->who, derive_session_keys(auth.key, initiator, responder), encrypt,
                      encrypt || !(socket.is_local() && fields->local)};
}

// Frame data up to this size is received together with the message.
constexpr uint64_t kEagerDataBytes = uint64_t{64} << 10;

// A completion condition for asio::async_read: done once `need` bytes have
// come; until then each read may also fill the buffers past them with what
// the socket already holds.
auto at_least(size_t need) {
  return [need](const asio::error_code& ec, size_t got) -> size_t {
    if (ec || got >= need) return 0;
    return std::numeric_limits<size_t>::max();
  };
}

// A TCP stream to `target` (`to` as configured, for messages), within `timeout`.
asio::awaitable<Result<Stream>> connect_tcp(asio::any_io_executor ex, const tcp::endpoint& target,
                                            const Endpoint& to, milliseconds timeout) {
  tcp::socket socket(ex);
  asio::steady_timer timer(ex, timeout);
  asio::error_code ec, timer_ec;
  auto first = co_await (socket.async_connect(target, redirect_error(use_awaitable, ec)) ||
                         timer.async_wait(redirect_error(use_awaitable, timer_ec)));
  if (first.index() == 1)
    co_return Status(Errc::timeout, fmt::format("connecting to {} timed out", to.to_string()));
  if (ec)
    co_return Status(Errc::unavailable, fmt::format("cannot connect to {}: {}", to.to_string(), ec.message()));
  co_return Stream(std::move(socket));
}

// Fills `parts` in order, first from what `ahead` holds, then from the
// stream; each read also takes into `ahead` whatever the socket holds past
// them (the next frame's start). False with `ec` set when the stream failed.
asio::awaitable<bool> receive(Stream& stream, ReadAhead& ahead, std::span<const asio::mutable_buffer> parts,
                              asio::error_code& ec) {
  std::array<asio::mutable_buffer, 4> rest{};
  PVFS_CHECK(parts.size() < rest.size());
  size_t count = 0;
  size_t need = 0;
  for (const asio::mutable_buffer& part : parts) {
    const size_t took = ahead.take({static_cast<std::byte*>(part.data()), part.size()});
    if (took == part.size()) continue;
    rest[count++] = part + took;
    need += part.size() - took;
  }
  if (need == 0) co_return true;
  const std::span<std::byte> room = ahead.room();  // all of it: `ahead` ran out above
  rest[count] = asio::buffer(room.data(), room.size());
  const size_t got = co_await asio::async_read(stream, rest, at_least(need), redirect_error(use_awaitable, ec));
  if (ec) co_return false;
  ahead.filled(got - need);
  co_return true;
}

std::span<std::byte> bytes_of(kj::Array<capnp::word>& words) {
  auto b = words.asBytes();
  return {reinterpret_cast<std::byte*>(b.begin()), b.size()};
}

}  // namespace

Connection::Connection(Stream stream, Identity peer, const SessionKeys& keys, bool initiator, bool encrypt,
                       bool tag_data)
    : stream_(std::move(stream)),
      peer_(stream_.describe()),
      peer_address_(stream_.address()),
      peer_is_local_(stream_.is_local()),
      peer_identity_(peer),
      send_seal_(initiator ? keys.initiator_to_responder : keys.responder_to_initiator, encrypt, tag_data),
      receive_seal_(initiator ? keys.responder_to_initiator : keys.initiator_to_responder, encrypt, tag_data) {}

Connection::~Connection() = default;

asio::awaitable<Result<std::shared_ptr<Connection>>> Connection::connect(const Endpoint& to,
                                                                          const Auth& auth,
                                                                          milliseconds timeout) {
  auto ex = co_await asio::this_coro::executor;
  auto target = resolve(to);
  if (!target) co_return target.status();
  std::optional<Stream> stream = co_await connect_local(*target, timeout);
  if (!stream) {
    auto tcp_stream = co_await connect_tcp(ex, *target, to, timeout);
    if (!tcp_stream) co_return tcp_stream.status();
    stream.emplace(std::move(*tcp_stream));
  }
  auto made = co_await over(std::move(*stream), auth, true, timeout);
  if (!made) {
    if (made.status().code() == Errc::timeout)
      co_return Status(Errc::timeout, fmt::format("handshake with {} timed out", to.to_string()));
    co_return Status(made.status().code(), fmt::format("{}: {}", to.to_string(), made.status().detail()));
  }
  co_return made;
}

asio::awaitable<Result<std::shared_ptr<Connection>>> Connection::accept(tcp::socket socket,
                                                                         const Auth& auth,
                                                                         milliseconds timeout) {
  co_return co_await over(Stream(std::move(socket)), auth, false, timeout);
}

asio::awaitable<Result<std::shared_ptr<Connection>>> Connection::over(Stream stream, const Auth& auth,
                                                                       bool initiator, milliseconds timeout) {
  auto ex = co_await asio::this_coro::executor;
  asio::steady_timer timer(ex, timeout);
  asio::error_code timer_ec;
  const std::string who = stream.describe();
  auto hs = co_await (run_handshake(stream, auth, initiator ? Side::initiator : Side::responder) ||
                      timer.async_wait(redirect_error(use_awaitable, timer_ec)));
  if (hs.index() == 1)
    co_return Status(Errc::timeout, initiator ? fmt::format("handshake with {} timed out", who)
                                              : fmt::format("handshake from {} timed out", who));
  auto& done = std::get<0>(hs);
  if (!done) co_return initiator ? done.status() : Status(done.code(), fmt::format("{}: {}", who, done.status().detail()));
  co_return std::make_shared<Connection>(std::move(stream), done->peer, done->keys, initiator, done->encrypt,
                                       done->tag_data);
}

void Connection::start(Handler on_request, std::function<void()> on_close) {
  on_close_ = std::move(on_close);
  auto self = shared_from_this();
  asio::co_spawn(stream_.get_executor(), read_loop(std::move(on_request)),
                 [self](std::exception_ptr e) {
                   if (e) {
                     try {
                       std::rethrow_exception(e);
                     } catch (const std::exception& ex) {
                       spdlog::error("connection {}: read loop failed: {}", self->peer_, ex.what());
                     }
                     self->close();
                   }
                 });
}

asio::awaitable<void> Connection::read_loop(Handler on_request) {
  auto self = shared_from_this();
  auto ex = stream_.get_executor();
  ReadAhead ahead;
  while (open_) {
    HeaderBytes header_bytes{};
    asio::error_code ec;
    const std::array<asio::mutable_buffer, 1> header_part{asio::buffer(header_bytes)};
    if (!co_await receive(stream_, ahead, header_part, ec)) break;
    auto header = decode_header(header_bytes);
    if (!header) {
      spdlog::warn("dropping connection from {}: {}", peer_, header.status().detail());
      break;
    }
    // Back-pressure: stop reading while too much is in service.
    while (open_ && inflight_requests_ > 0 &&
           (inflight_requests_ >= kMaxInflightRequests ||
            inflight_bytes_ + header->data_bytes > kMaxInflightBytes)) {
      inflight_wait_ = std::make_shared<asio::steady_timer>(ex, Clock::time_point::max());
      auto wait = inflight_wait_;
      co_await wait->async_wait(redirect_error(use_awaitable, ec));
    }
    if (!open_) break;
    const auto frame_start = Clock::now();
    auto words = kj::heapArray<capnp::word>(header->message_bytes / sizeof(capnp::word));
    // The data is received straight into the pooled buffer the handler
    // keeps (a storage server writes it to disk from there). Small data
    // comes in the same read as the message. Large data waits until the
    // message has come: a peer that announces the largest frame and sends
    // nothing more must not make the daemon hold (or, with a debugging
    // allocator, touch) its size.
    Buffer data;
    FrameTag tag{};
    const std::array<asio::mutable_buffer, 1> message{asio::buffer(words.begin(), header->message_bytes)};
    if (header->data_bytes <= kEagerDataBytes) {
      data = Buffer(header->data_bytes);
      const std::array<asio::mutable_buffer, 3> frame_rest{message[0], asio::buffer(data.data(), data.size()),
                                                           asio::buffer(tag)};
      if (!co_await receive(stream_, ahead, frame_rest, ec)) break;
    } else {
      if (!co_await receive(stream_, ahead, message, ec)) break;
      data = Buffer(header->data_bytes);
      const std::array<asio::mutable_buffer, 2> data_and_tag{asio::buffer(data.data(), data.size()),
                                                             asio::buffer(tag)};
      if (!co_await receive(stream_, ahead, data_and_tag, ec)) break;
    }
    if (!receive_seal_.open(header_bytes, bytes_of(words), data.span(), tag)) {
      const uint64_t frame = receive_seal_.frames();
      spdlog::error("closing connection with {} ({}): frame {} failed its integrity check "
                    "(changed, replayed, reordered or dropped on the path)",
                    peer_, to_string(peer_identity_), frame);
      close_with(Status(Errc::io, fmt::format("frame {} from {} failed its integrity check; "
                                              "connection closed", frame, peer_)));
      break;
    }
    std::unique_ptr<InMessage> msg;
    bool is_reply = false;
    try {
      msg = std::make_unique<InMessage>(std::move(words), std::move(data));
      msg->set_receive_time(Clock::now() - frame_start);
      is_reply = msg->envelope().getIsReply();
    } catch (const kj::Exception& e) {
      spdlog::warn("dropping connection from {}: malformed message: {}", peer_,
                   e.getDescription().cStr());
      break;
    }
    if (is_reply) {
      if (msg->envelope().getBusy()) {
        peer_busy(milliseconds(msg->envelope().getTimeoutMs()));
        continue;
      }
      auto it = pending_.find(msg->id());
      if (it == pending_.end()) continue;  // the caller gave up (timeout)
      auto call = it->second;
      call->reply = std::move(msg);
      call->done = true;
      call->timer.cancel();
      continue;
    }
    ++inflight_requests_;
    inflight_bytes_ += header->data_bytes;
    const uint64_t period = serving(milliseconds(msg->envelope().getTimeoutMs()));
    asio::co_spawn(ex, serve_one(on_request, std::move(msg), period), asio::detached);
  }
  close();
}

asio::awaitable<void> Connection::serve_one(Handler handler, std::unique_ptr<InMessage> msg,
                                            uint64_t busy_period) {
  auto self = shared_from_this();
  const uint64_t id = msg->id();
  const uint64_t bytes = msg->data().size();
  Status failure;
  if (!handler) {
    failure = Status(Errc::not_supported, "this endpoint serves no requests");
  } else {
    try {
      // Bounds every daemon keeps, checked before any service sees the request.
      if (Status bounded = check_envelope(msg->envelope()); !bounded.ok()) failure = bounded;
      else co_await handler(self, std::move(msg));
    } catch (const kj::Exception& e) {
      failure = Status(Errc::invalid_argument,
                       std::string("malformed request: ") + e.getDescription().cStr());
    } catch (const std::exception& e) {
      spdlog::error("request from {} failed: {}", peer_, e.what());
      failure = Status(Errc::io, e.what());
    }
  }
  if (!failure.ok()) co_await reply_error(id, failure);
  served(busy_period);
  --inflight_requests_;
  inflight_bytes_ -= bytes;
  if (inflight_wait_) inflight_wait_->cancel();
}

asio::awaitable<Result<std::unique_ptr<InMessage>>> Connection::call(OutMessage& request,
                                                                      std::span<const std::byte> data,
                                                                      milliseconds timeout,
                                                                      milliseconds busy_limit) {
  auto self = shared_from_this();
  if (!open_) co_return Status(Errc::unavailable, fmt::format("connection to {} is closed", peer_));
  const auto began = Clock::now();
  const auto deadline = began + timeout;
  const uint64_t id = next_id_++;
  auto env = request.envelope();
  env.setId(id);
  env.setIsReply(false);
  env.setTimeoutMs(static_cast<uint32_t>(timeout.count()));
  auto pending = std::make_shared<PendingCall>(stream_.get_executor());
  pending->timeout = timeout;
  pending->deadline = deadline;
  pending->limit = began + std::max(timeout, busy_limit);
  pending_[id] = pending;
  watch_deadline(deadline);
  Status sent = co_await write_frame(request, data, deadline, &pending->deadline);
  if (!sent.ok() && !pending->done) {
    pending_.erase(id);
    co_return sent;
  }
  // Woken by the reply, a closed connection or watch_deadlines(); busy
  // frames may have moved the deadline on meanwhile.
  while (!pending->done && Clock::now() < pending->deadline) {
    pending->timer.expires_at(Clock::time_point::max());
    asio::error_code ec;
    co_await pending->timer.async_wait(redirect_error(use_awaitable, ec));
  }
  pending_.erase(id);
  if (!pending->done) {
    if (!pending->waited_busy)
      co_return Status(Errc::timeout, fmt::format("no reply from {} within {} ms", peer_, timeout.count()));
    const auto waited = std::chrono::duration_cast<milliseconds>(Clock::now() - began).count();
    if (pending->deadline >= pending->limit)
      co_return Status(Errc::timeout,
                       fmt::format("no reply from {} in {} ms; it said it was busy all along, and {} ms "
                                   "is the most a call waits for a busy server",
                                   peer_, waited, busy_limit.count()));
    co_return Status(Errc::timeout,
                     fmt::format("no reply from {} within {} ms of its last word that it was busy "
                                 "({} ms in all)", peer_, timeout.count(), waited));
  }
  if (!pending->error.ok()) co_return pending->error;
  auto reply_env = pending->reply->envelope();
  if (reply_env.getStatus() != proto::Errc::OK)
    co_return Status(from_wire(reply_env.getStatus()), reply_env.getDetail().cStr());
  co_return std::move(pending->reply);
}

asio::awaitable<void> Connection::reply(uint64_t id, OutMessage& reply,
                                        std::span<const std::byte> data) {
  auto env = reply.envelope();
  env.setId(id);
  env.setIsReply(true);
  env.setStatus(proto::Errc::OK);
  Status st = co_await write_frame(reply, data, Clock::now() + std::chrono::seconds(60));
  (void)st;  // the peer is gone or stuck; the connection is closed already
}

asio::awaitable<void> Connection::reply_error(uint64_t id, const Status& status) {
  OutMessage msg;
  auto env = msg.envelope();
  env.setId(id);
  env.setIsReply(true);
  env.setStatus(to_wire(status.code() == Errc::ok ? Errc::io : status.code()));
  if (!status.detail().empty()) env.setDetail(status.detail());
  Status st = co_await write_frame(msg, {}, Clock::now() + std::chrono::seconds(60));
  (void)st;
}

asio::awaitable<Status> Connection::write_frame(OutMessage& msg, std::span<const std::byte> data,
                                                Clock::time_point deadline, const Clock::time_point* moving) {
  auto self = shared_from_this();
  auto ex = stream_.get_executor();
  auto until = [&] { return moving ? std::max(deadline, *moving) : deadline; };
  kj::Array<capnp::word> words = capnp::messageToFlatArray(msg.builder());
  std::span<std::byte> bytes = bytes_of(words);
  HeaderBytes header = encode_header({static_cast<uint32_t>(bytes.size()), data.size()});
  asio::error_code ec;
  while (writing_) {
    if (!open_) co_return Status(Errc::unavailable, fmt::format("connection to {} lost", peer_));
    auto waiter = std::make_shared<asio::steady_timer>(ex, until());
    write_waiters_.push_back(waiter);
    for (;;) {
      co_await waiter->async_wait(redirect_error(use_awaitable, ec));
      if (ec) break;  // woken: our turn (or the connection closed)
      auto queued = std::find(write_waiters_.begin(), write_waiters_.end(), waiter);
      if (queued == write_waiters_.end()) break;  // taken off the queue as it expired: our turn
      if (until() > Clock::now()) {
        waiter->expires_at(until());  // moved on meanwhile
        continue;
      }
      // The deadline passed while queued: nothing was written.
      write_waiters_.erase(queued);
      wake_next_writer();
      co_return Status(Errc::timeout, fmt::format("sending to {} timed out", peer_));
    }
  }
  if (!open_) co_return Status(Errc::unavailable, fmt::format("connection to {} lost", peer_));
  writing_ = true;
  // Sealed only now, in wire order: the receiver counts frames as they arrive.
  Buffer encrypted;
  std::span<const std::byte> sent = data;
  if (send_seal_.encrypts() && !data.empty()) {
    encrypted = Buffer(data.size());
    sent = encrypted.span();
  }
  const FrameTag tag = send_seal_.seal(header, bytes, data, encrypted.span());
  std::array<asio::const_buffer, 4> buffers{asio::buffer(header),
                                            asio::buffer(bytes.data(), bytes.size()),
                                            asio::buffer(sent.data(), sent.size()),
                                            asio::buffer(tag)};
  // Most frames fit in the socket's send buffer at once: one non-blocking
  // send, and the deadline race (a timer and two coroutines) only for what
  // the socket did not take.
  const size_t total = asio::buffer_size(buffers);
  ec = {};  // may hold the wake-up of a wait for our turn above
  size_t taken = stream_.write_some(buffers, ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again) ec = {};
  if (ec || taken == total) {
    writing_ = false;
    wake_next_writer();
    if (!ec) co_return Status{};
    close();
    co_return Status(Errc::unavailable, fmt::format("connection to {} lost: {}", peer_, ec.message()));
  }
  for (auto& b : buffers) {
    const size_t skip = std::min(taken, b.size());
    b += skip;
    taken -= skip;
  }
  // The rest, against the deadline, which may move on while it waits. The
  // write runs on its own and wakes the wait when it ends; the buffers
  // (this frame's locals) outlive it, since this waits for its end even
  // after closing the stream under it.
  struct Rest {
    explicit Rest(const asio::any_io_executor& ex) : wake(ex) {}
    asio::steady_timer wake;
    bool done = false;
    asio::error_code ec;
  };
  auto rest = std::make_shared<Rest>(ex);
  asio::async_write(stream_, buffers, [rest](const asio::error_code& write_ec, size_t) {
    rest->done = true;
    rest->ec = write_ec;
    rest->wake.cancel();
  });
  bool timed_out = false;
  while (!rest->done) {
    if (!timed_out && Clock::now() >= until()) {
      // A half-written frame cannot be taken back: the stream is unusable.
      timed_out = true;
      spdlog::warn("closing connection to {}: a send did not finish in time", peer_);
      close();  // ends the write, which then wakes this
    }
    rest->wake.expires_at(timed_out ? Clock::time_point::max() : until());
    asio::error_code wait_ec;
    co_await rest->wake.async_wait(redirect_error(use_awaitable, wait_ec));
  }
  ec = rest->ec;
  writing_ = false;
  wake_next_writer();
  if (timed_out) co_return Status(Errc::timeout, fmt::format("sending to {} timed out", peer_));
  if (ec) {
    close();
    co_return Status(Errc::unavailable, fmt::format("connection to {} lost: {}", peer_, ec.message()));
  }
  co_return Status{};
}

asio::awaitable<bool> Connection::reserve_reply_bytes(uint64_t bytes) {
  auto self = shared_from_this();
  while (open_ && reply_bytes_ > 0 && reply_bytes_ + bytes > kMaxInflightBytes) {
    auto waiter = std::make_shared<asio::steady_timer>(stream_.get_executor(),
                                                       Clock::time_point::max());
    reply_waiters_.push_back(waiter);
    asio::error_code ec;
    co_await waiter->async_wait(redirect_error(use_awaitable, ec));
  }
  if (!open_) co_return false;
  reply_bytes_ += bytes;
  co_return true;
}

void Connection::release_reply_bytes(uint64_t bytes) {
  reply_bytes_ -= bytes;
  // Wake every waiter; each checks again whether it fits now.
  for (auto& w : std::exchange(reply_waiters_, {})) w->cancel();
}

void Connection::wake_next_writer() {
  if (writing_ || write_waiters_.empty()) return;
  auto next = write_waiters_.front();
  write_waiters_.pop_front();
  next->cancel();
}

void Connection::peer_busy(milliseconds period) {
  const auto now = Clock::now();
  // At least four of the peer's periods: a call left with less than its
  // first timeout (a retry late in an operation) must not miss the next word.
  const milliseconds at_least = 4 * std::min(period, milliseconds(60000));
  for (auto& [id, call] : pending_) {
    if (call->done || call->deadline >= call->limit) continue;
    const auto moved = std::min(call->limit, now + std::max(call->timeout, at_least));
    if (moved <= call->deadline) continue;
    call->deadline = moved;
    call->waited_busy = true;
  }
}

uint64_t Connection::serving(milliseconds caller_timeout) {
  ++began_this_period_;
  if (caller_timeout.count() > 0)
    busy_every_ = std::min(busy_every_, std::clamp(caller_timeout / 4, milliseconds(20), milliseconds(2500)));
  if (!busy_timer_ && busy_every_ != milliseconds::max() && open_) {
    busy_timer_ = std::make_shared<asio::steady_timer>(stream_.get_executor());
    asio::co_spawn(stream_.get_executor(), send_busy(), asio::detached);
  }
  return busy_period_;
}

void Connection::served(uint64_t period) {
  if (period == busy_period_) --began_this_period_;
  else if (period + 1 == busy_period_) --began_last_period_;
  else --began_earlier_;
}

asio::awaitable<void> Connection::send_busy() {
  auto self = shared_from_this();
  auto timer = busy_timer_;
  // Runs while requests are in service (the next one to come starts it
  // again). A frame goes out only for a request in service a whole period,
  // so it reaches the caller between one and two periods after the request
  // came, half its timeout at most, and a server that keeps up sends none.
  while (open_ && inflight_requests_ > 0) {
    timer->expires_after(busy_every_);
    asio::error_code ec;
    co_await timer->async_wait(redirect_error(use_awaitable, ec));
    if (!open_) break;
    began_earlier_ += std::exchange(began_last_period_, std::exchange(began_this_period_, 0));
    ++busy_period_;
    if (began_earlier_ == 0) continue;
    OutMessage msg;
    auto env = msg.envelope();
    env.setId(0);
    env.setIsReply(true);
    env.setBusy(true);
    env.setTimeoutMs(static_cast<uint32_t>(busy_every_.count()));
    (void)co_await write_frame(msg, {}, Clock::now() + std::chrono::seconds(60));
  }
  if (busy_timer_ == timer) busy_timer_.reset();
}

void Connection::watch_deadline(Clock::time_point deadline) {
  if (deadline_timer_) {
    if (deadline < deadline_at_) {
      deadline_at_ = deadline;
      deadline_timer_->expires_at(deadline);  // the watcher waits again, for this one
    }
    return;
  }
  if (!open_) return;
  deadline_timer_ = std::make_shared<asio::steady_timer>(stream_.get_executor(), deadline);
  deadline_at_ = deadline;
  asio::co_spawn(stream_.get_executor(), watch_deadlines(), asio::detached);
}

asio::awaitable<void> Connection::watch_deadlines() {
  auto self = shared_from_this();
  auto timer = deadline_timer_;
  while (open_) {
    asio::error_code ec;
    co_await timer->async_wait(redirect_error(use_awaitable, ec));
    if (!open_) break;
    if (ec == asio::error::operation_aborted && timer->expiry() > Clock::now()) continue;  // moved earlier
    const auto now = Clock::now();
    auto next = Clock::time_point::max();
    for (auto& [id, call] : pending_) {
      if (call->done) continue;
      if (call->deadline <= now) call->timer.cancel();
      else next = std::min(next, call->deadline);
    }
    if (next == Clock::time_point::max()) break;
    deadline_at_ = next;
    timer->expires_at(next);
  }
  if (deadline_timer_ == timer) deadline_timer_.reset();
}

void Connection::fail_pending(const Status& status) {
  for (auto& [id, call] : pending_) {
    if (call->done) continue;
    call->done = true;
    call->error = status;
    call->timer.cancel();
  }
}

void Connection::close() {
  close_with(Status(Errc::unavailable, fmt::format("connection to {} lost", peer_)));
}

void Connection::close_with(const Status& why) {
  if (!open_) return;
  open_ = false;
  stream_.close();
  fail_pending(why);
  for (auto& w : write_waiters_) w->cancel();
  write_waiters_.clear();
  if (inflight_wait_) inflight_wait_->cancel();
  if (busy_timer_) busy_timer_->cancel();
  if (deadline_timer_) deadline_timer_->cancel();
  for (auto& w : std::exchange(reply_waiters_, {})) w->cancel();
  if (on_close_) {
    auto cb = std::move(on_close_);
    cb();
  }
}

}  // namespace pvfs::rpc
