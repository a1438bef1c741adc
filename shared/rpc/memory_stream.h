// An in-process byte stream: the two ends of a MemoryStream pair behave as
// the two ends of a connected TCP socket (Asio's AsyncReadStream and
// AsyncWriteStream), so a Connection, with its handshake, sealing and
// framing, runs over it unchanged. A MemoryLink, shared by both ends, lets a
// test hold, drop or cut what travels each way. Both ends and the link
// belong to one single-threaded io_context; nothing is locked.
// Buffers are unbounded (a write never waits for the reader) unless the
// link is given a capacity, as a socket's buffer has.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <asio.hpp>

namespace pvfs::rpc {

namespace detail {

// One direction of a pair: bytes written by one end, not yet read by the other.
struct MemoryPipe {
  explicit MemoryPipe(const asio::any_io_executor& ex)
      : signal(ex, asio::steady_timer::time_point::max()), room(ex, asio::steady_timer::time_point::max()) {}
  std::vector<std::byte> bytes;
  size_t read_at = 0;
  bool closed = false;  // the writer closed: the reader gets eof once drained
  bool reset = false;   // cut: both sides fail at once
  bool held = false;    // written bytes wait in `held_bytes` until released
  std::vector<std::byte> held_bytes;
  unsigned drop_writes = 0;  // the next writes vanish
  size_t capacity = 0;        // bytes unread (held ones included) a write may fill up to; 0: no limit
  uint64_t written = 0;       // bytes taken by writes since the pair was made
  uint64_t reads = 0;         // reads that took bytes
  asio::steady_timer signal;  // the reader waits on it; writers cancel it
  asio::steady_timer room;    // writers of a full pipe wait on it; the reader cancels it

  void wake() {
    signal.cancel();
    room.cancel();
  }
  size_t unread() const { return bytes.size() - read_at + held_bytes.size(); }
};

struct MemoryLinkState {
  explicit MemoryLinkState(const asio::any_io_executor& ex) : ex(ex), pipes{MemoryPipe(ex), MemoryPipe(ex)} {}
  asio::any_io_executor ex;
  MemoryPipe pipes[2];  // [0]: initiator to responder, [1]: back
};

}  // namespace detail

// What travels from the initiator (the connecting end) to the responder,
// or back.
enum class Direction : uint8_t { to_responder = 0, to_initiator = 1 };

// Fault controls over one pair, from either end's point of view.
class MemoryLink {
 public:
  explicit MemoryLink(std::shared_ptr<detail::MemoryLinkState> state) : state_(std::move(state)) {}
  // Both ends fail their reads (connection reset) and writes (broken pipe)
  // from now on; bytes not yet read are lost.
  void cut();
  // Keeps bytes written in `d` from the reader until release(d).
  void hold(Direction d);
  // Delivers what hold(d) kept, in order, and stops holding.
  void release(Direction d);
  // The next `writes` writes in `d` vanish (a Connection writes one frame per
  // write, so these are whole frames: the receiver's seal then fails on the
  // next frame that does arrive).
  void drop(Direction d, unsigned writes);
  // Bytes written in `d` and not yet read (held ones included).
  size_t pending(Direction d) const;
  // Bytes written in `d` since the pair was made (dropped writes excluded).
  uint64_t written(Direction d) const;
  // Reads in `d` that took bytes, since the pair was made (a socket's
  // system calls that return data).
  uint64_t reads(Direction d) const;
  // At most `bytes` unread in `d` (0: no limit, the default): a write then
  // takes what fits, and one that fits nothing waits for the reader.
  void set_capacity(Direction d, size_t bytes);
  bool is_cut() const { return state_->pipes[0].reset; }

 private:
  std::shared_ptr<detail::MemoryLinkState> state_;
};

class MemoryStream {
 public:
  using executor_type = asio::any_io_executor;

  // A connected pair on `ex`: first the initiator's end, then the responder's.
  // `initiator_address` is what the responder sees as peer address
  // (Connection::peer_address), `responder_name` what the initiator sees.
  static std::pair<MemoryStream, MemoryStream> pair(const asio::any_io_executor& ex,
                                                    std::string initiator_address,
                                                    std::string responder_name);

  MemoryStream(MemoryStream&&) noexcept = default;
  MemoryStream& operator=(MemoryStream&&) noexcept = default;
  ~MemoryStream() { close(); }

  executor_type get_executor() const { return state_->ex; }
  MemoryLink link() const { return MemoryLink(state_); }
  // The other end as a peer description and address.
  const std::string& peer_name() const { return peer_name_; }
  const std::string& peer_address() const { return peer_address_; }

  // Takes all of `buffers` without waiting, or what fits under the link's
  // capacity. Errors: broken_pipe once closed or cut; would_block when
  // nothing fits.
  template <typename ConstBufferSequence>
  size_t write_some(const ConstBufferSequence& buffers, asio::error_code& ec) {
    ec = {};
    if (!state_ || out().reset || out().closed || closed_) {
      ec = asio::error::broken_pipe;
      return 0;
    }
    size_t n = asio::buffer_size(buffers);
    detail::MemoryPipe& p = out();
    if (p.drop_writes > 0) {
      --p.drop_writes;
      return n;
    }
    if (p.capacity > 0 && n > 0) {
      n = std::min(n, p.capacity > p.unread() ? p.capacity - p.unread() : 0);
      if (n == 0) {
        ec = asio::error::would_block;
        return 0;
      }
    }
    auto& into = p.held ? p.held_bytes : p.bytes;
    const size_t at = into.size();
    into.resize(at + n);
    asio::buffer_copy(asio::buffer(into.data() + at, n), buffers, n);
    p.written += n;
    if (!p.held) p.wake();
    return n;
  }

  template <typename ConstBufferSequence, typename Token>
  auto async_write_some(const ConstBufferSequence& buffers, Token&& token) {
    return asio::async_compose<Token, void(asio::error_code, size_t)>(
        [this, buffers, posted = false](auto& self, asio::error_code = {}) mutable {
          if (!posted) {  // never complete inside the initiating call
            posted = true;
            return asio::post(state_->ex, std::move(self));
          }
          asio::error_code ec;
          const size_t n = write_some(buffers, ec);
          if (ec == asio::error::would_block) return out().room.async_wait(std::move(self));  // then again
          self.complete(ec, n);
        },
        token, state_->ex);
  }

  // Reads what has arrived, waiting until something has. Errors: eof once
  // the other end closed and everything was read; connection_reset once cut
  // or closed here.
  template <typename MutableBufferSequence, typename Token>
  auto async_read_some(const MutableBufferSequence& buffers, Token&& token) {
    return asio::async_compose<Token, void(asio::error_code, size_t)>(
        [this, state = state_, buffers, posted = false](auto& self, asio::error_code = {}) mutable {
          if (!posted) {
            posted = true;
            return asio::post(state->ex, std::move(self));
          }
          if (closed_) return self.complete(asio::error::connection_reset, 0);
          detail::MemoryPipe& p = in();
          if (p.reset) return self.complete(asio::error::connection_reset, 0);
          if (asio::buffer_size(buffers) == 0) return self.complete({}, 0);
          if (p.read_at < p.bytes.size()) {
            const size_t n =
                asio::buffer_copy(buffers, asio::buffer(p.bytes.data() + p.read_at, p.bytes.size() - p.read_at));
            p.read_at += n;
            ++p.reads;
            if (p.read_at == p.bytes.size()) {
              p.bytes.clear();
              p.read_at = 0;
            }
            if (p.capacity > 0) p.room.cancel();
            return self.complete({}, n);
          }
          if (p.closed) return self.complete(asio::error::eof, 0);
          p.signal.async_wait(std::move(self));
        },
        token, state_->ex);
  }

  // Closes this end: the other end reads eof after what was written, and
  // reads waiting here fail.
  void close();

 private:
  MemoryStream(std::shared_ptr<detail::MemoryLinkState> state, int side, std::string peer_name,
               std::string peer_address)
      : state_(std::move(state)), side_(side), peer_name_(std::move(peer_name)),
        peer_address_(std::move(peer_address)) {}
  detail::MemoryPipe& out() { return state_->pipes[side_]; }
  detail::MemoryPipe& in() { return state_->pipes[1 - side_]; }

  std::shared_ptr<detail::MemoryLinkState> state_;
  int side_ = 0;  // 0: initiator
  bool closed_ = false;
  std::string peer_name_;
  std::string peer_address_;
};

}  // namespace pvfs::rpc
