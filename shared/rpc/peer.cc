#include "shared/rpc/peer.h"

namespace pvfs::rpc {

Peer::Peer(asio::any_io_executor ex, Endpoint address, const Auth& auth, milliseconds connect_timeout,
           Network& network)
    : ex_(std::move(ex)),
      address_(std::move(address)),
      auth_(auth),
      connect_timeout_(connect_timeout),
      network_(network) {}

asio::awaitable<Result<std::shared_ptr<Connection>>> Peer::connection() {
  if (connecting_) {
    // Someone is connecting: take that attempt's outcome. Starting another
    // after it failed would queue every caller behind its own connect
    // timeout, one after the other, against a peer that does not answer.
    const uint64_t attempt = attempts_;
    auto waiter = std::make_shared<asio::steady_timer>(ex_, Clock::time_point::max());
    waiters_.push_back(waiter);
    asio::error_code ec;
    co_await waiter->async_wait(asio::redirect_error(asio::use_awaitable, ec));
    if (attempts_ == attempt + 1 && !last_failure_.ok()) co_return last_failure_;
    if (connecting_) co_return co_await connection();
  }
  if (conn_ && conn_->is_open()) co_return conn_;
  connecting_ = true;
  auto result = co_await network_.connect(address_, auth_, connect_timeout_);
  connecting_ = false;
  ++attempts_;
  last_failure_ = result ? Status{} : result.status();
  for (auto& w : waiters_) w->cancel();
  waiters_.clear();
  if (!result) co_return result.status();
  conn_ = *result;
  conn_->start(on_request_, on_close_);
  co_return conn_;
}

asio::awaitable<Result<std::unique_ptr<InMessage>>> Peer::call(OutMessage& request,
                                                               std::span<const std::byte> data,
                                                               milliseconds timeout,
                                                               milliseconds busy_limit) {
  auto conn = co_await connection();
  if (!conn) co_return conn.status();
  co_return co_await (*conn)->call(request, data, timeout, busy_limit);
}

void Peer::close() {
  if (conn_) conn_->close();
  conn_.reset();
}

}  // namespace pvfs::rpc
