// One authenticated connection carrying pvfs frames in both directions:
// many calls in flight at once, matched to replies by id; every call has a
// deadline; requests from the peer go to a handler coroutine each. Every
// frame is sealed (frame_seal.h); one that fails its check closes the
// connection and fails the calls in flight with `io` (EIO).
// Runs over a Stream: TCP between processes, a local socket between
// processes on one host (local_socket.h: connect() picks it when it can), or
// an in-process MemoryStream (memory_network.h) for tests, with the same code.
// Does not reconnect (see Peer) and does not know any service's schema.
// Thread-safety: a Connection belongs to one single-threaded io_context;
// every member must be called from that thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <asio.hpp>

#include "shared/endpoint.h"
#include "shared/rpc/frame_seal.h"
#include "shared/rpc/handshake.h"
#include "shared/rpc/message.h"
#include "shared/rpc/stream.h"
#include "shared/secret.h"
#include "shared/status.h"

namespace pvfs::rpc {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // Called once per request received; must send exactly one reply.
  using Handler =
      std::function<asio::awaitable<void>(std::shared_ptr<Connection>, std::unique_ptr<InMessage>)>;

  // Connects to `to` and runs the handshake (as initiator), all within
  // `timeout`. Frames are encrypted when either end asks for it.
  // Errors: unavailable (refused/unreachable), timeout, access_denied (wrong secret).
  static asio::awaitable<Result<std::shared_ptr<Connection>>> connect(const Endpoint& to,
                                                                       const Auth& auth,
                                                                       milliseconds timeout);
  // Runs the responder side of the handshake on an accepted socket: it
  // sends its proof only after checking the initiator's.
  static asio::awaitable<Result<std::shared_ptr<Connection>>> accept(asio::ip::tcp::socket socket,
                                                                      const Auth& auth,
                                                                      milliseconds timeout);
  // Runs the handshake over an already connected `stream`, as the initiator
  // or the responder, within `timeout` (a MemoryStream does not notice a
  // timeout until its peer writes or closes). Errors as connect().
  static asio::awaitable<Result<std::shared_ptr<Connection>>> over(Stream stream, const Auth& auth,
                                                                    bool initiator, milliseconds timeout);

  // Starts reading frames. Requests go to `on_request` (may be empty on a
  // pure client, which then answers every request with not_supported).
  // `on_close` (optional) runs once when the connection ends.
  void start(Handler on_request, std::function<void()> on_close = {});

  // Sends a request and waits for its reply. `data` must stay valid until the
  // call returns (it does not outlive it). A non-ok reply status is returned
  // as that Status. Errors: timeout (the connection is then closed if a frame
  // was half-written), unavailable (connection lost).
  //
  // Waiting while busy: a peer with requests of this connection in service
  // for a whole period, a quarter of the shortest timeout its callers asked
  // for (at most 2.5 s), says so at the end of each period (a `busy` frame,
  // common.capnp, naming that period). A peer that answers within a period
  // sends nothing.
  // With `busy_limit` above `timeout`, each such word gives the call another
  // `timeout` (at least four periods) from when it came, up to
  // `busy_limit` after the call began: a queue longer than the timeout (an
  // overloaded server) delays the call instead of failing it. A paused,
  // hung or cut-off peer says nothing, so the call still fails `timeout`
  // after the last word. Quick tries (probes) leave `busy_limit` at 0.
  asio::awaitable<Result<std::unique_ptr<InMessage>>> call(OutMessage& request,
                                                           std::span<const std::byte> data,
                                                           milliseconds timeout,
                                                           milliseconds busy_limit = milliseconds(0));
  // Sends the reply to request `id`. Failures (peer gone) are ignored.
  asio::awaitable<void> reply(uint64_t id, OutMessage& reply, std::span<const std::byte> data = {});
  asio::awaitable<void> reply_error(uint64_t id, const Status& status);

  // For a request handler about to allocate `bytes` for its reply (a read
  // buffer): waits until this connection's replies in service leave room for
  // them under kMaxInflightBytes (one is always admitted when none is held),
  // then counts them until release_reply_bytes(). False when the connection
  // closed meanwhile (nothing is counted then).
  asio::awaitable<bool> reserve_reply_bytes(uint64_t bytes);
  void release_reply_bytes(uint64_t bytes);

  void close();
  bool is_open() const { return open_; }
  const std::string& peer() const { return peer_; }
  // Who the peer said it is in its hello (bound into its proof).
  const Identity& peer_identity() const { return peer_identity_; }
  // The peer's IP address as text ("127.0.0.1"); empty when unknown (over a
  // local socket: see peer_is_local()).
  const std::string& peer_address() const { return peer_address_; }
  // The peer came over the local socket (local_socket.h): it runs on this host.
  bool peer_is_local() const { return peer_is_local_; }
  bool encrypted() const { return send_seal_.encrypts(); }
  // Frames' bulk data carries a tag: everywhere but between two ends on a
  // local socket that both said they take it (handshake.h).
  bool tags_data() const { return send_seal_.tags_data(); }
  asio::any_io_executor executor() { return stream_.get_executor(); }

  // After a finished handshake: `keys` as derived from it, `initiator` true
  // on the connecting side.
  // `tag_data` false: frames' bulk data carries no tag (handshake.h).
  Connection(Stream stream, Identity peer, const SessionKeys& keys, bool initiator, bool encrypt,
             bool tag_data = true);
  ~Connection();

 private:
  struct PendingCall {
    explicit PendingCall(const asio::any_io_executor& ex) : timer(ex) {}
    asio::steady_timer timer;
    std::unique_ptr<InMessage> reply;
    Status error;
    bool done = false;
    milliseconds timeout{0};
    Clock::time_point deadline;  // moved on by busy frames, never past `limit`
    Clock::time_point limit;
    bool waited_busy = false;    // a busy frame moved `deadline`
  };

  asio::awaitable<void> read_loop(Handler on_request);
  asio::awaitable<void> serve_one(Handler handler, std::unique_ptr<InMessage> msg, uint64_t busy_period);
  // Writes one frame; serialised with other writers. Fails when the write
  // failed or was cut off by `deadline` (the connection is closed then).
  // With `moving`, the deadline is what it points to when it is reached (a
  // call's, which busy frames move on while the peer, at its limit of
  // requests in service, reads nothing more).
  asio::awaitable<Status> write_frame(OutMessage& msg, std::span<const std::byte> data,
                                      Clock::time_point deadline, const Clock::time_point* moving = nullptr);
  void wake_next_writer();
  // The peer said it is busy, and will again within `period`: moves on the
  // deadlines of calls that wait while busy.
  void peer_busy(milliseconds period);
  // Notes a request's timeout and the period it began in (returned);
  // starts send_busy() if it is not running.
  uint64_t serving(milliseconds caller_timeout);
  // A request that began in `period` was answered.
  void served(uint64_t period);
  // Ends a period every busy_every_ while requests are in service, and sends
  // a busy frame when one of them has been in service a whole period.
  asio::awaitable<void> send_busy();
  // Calls wait for their reply on a timer that never expires; one timer per
  // connection, set to the earliest deadline of the calls in flight, wakes
  // those whose deadline has passed. A timer per call re-armed the
  // kernel's timer (a system call) on every call; this one is re-armed
  // only when a call's deadline comes before the one it is set to.
  void watch_deadline(Clock::time_point deadline);
  asio::awaitable<void> watch_deadlines();
  void fail_pending(const Status& status);
  // Closes, failing the calls in flight with `why` instead of unavailable.
  void close_with(const Status& why);

  Stream stream_;
  std::string peer_;
  std::string peer_address_;
  bool peer_is_local_ = false;
  Identity peer_identity_;
  FrameSeal send_seal_;
  FrameSeal receive_seal_;
  bool open_ = true;
  uint64_t next_id_ = 1;
  std::map<uint64_t, std::shared_ptr<PendingCall>> pending_;
  bool writing_ = false;
  std::deque<std::shared_ptr<asio::steady_timer>> write_waiters_;
  // Requests being served; reading pauses at the limits so a flood cannot
  // grow memory without bound.
  size_t inflight_requests_ = 0;
  uint64_t inflight_bytes_ = 0;
  std::shared_ptr<asio::steady_timer> inflight_wait_;
  // Busy frames: how often (a quarter of the shortest timeout a request
  // here asked for; max while none asked for one) and the wait of
  // send_busy() while it runs. Requests in service are counted by the
  // period they began in: this one, the one before, or earlier ("aged",
  // in service at least one whole period, the ones a frame is sent for).
  milliseconds busy_every_ = milliseconds::max();
  std::shared_ptr<asio::steady_timer> busy_timer_;
  // watch_deadlines() runs while this is set; it is set to `deadline_at_`.
  std::shared_ptr<asio::steady_timer> deadline_timer_;
  Clock::time_point deadline_at_;
  uint64_t busy_period_ = 0;
  size_t began_this_period_ = 0;
  size_t began_last_period_ = 0;
  size_t began_earlier_ = 0;
  // Reply bytes handlers hold (reserve_reply_bytes), and handlers waiting for room.
  uint64_t reply_bytes_ = 0;
  std::vector<std::shared_ptr<asio::steady_timer>> reply_waiters_;
  std::function<void()> on_close_;
};

// Limits on what one connection may have in service at once (request data
// and, separately, reply data reserved by handlers).
inline constexpr size_t kMaxInflightRequests = 128;
inline constexpr uint64_t kMaxInflightBytes = uint64_t{256} << 20;

// Resolves host:port to a TCP endpoint (numeric or via getaddrinfo).
Result<asio::ip::tcp::endpoint> resolve(const Endpoint& ep);
// An acceptor listening on `at` (address reuse on, the system's backlog).
// Errors: unavailable, "cannot listen on HOST:PORT: reason".
Result<asio::ip::tcp::acceptor> listen_on(asio::io_context& io, const Endpoint& at);

}  // namespace pvfs::rpc
