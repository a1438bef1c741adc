#include "server/straggler.h"

namespace pvfs {

void Straggler::set(double factor, std::chrono::milliseconds duration) {
  factor_ = factor > 1.0 ? factor : 1.0;
  until_ = duration.count() > 0 ? Clock::now() + duration : Clock::time_point::max();
}

double Straggler::factor() const { return Clock::now() < until_ ? factor_ : 1.0; }

std::chrono::milliseconds Straggler::remaining() const {
  if (factor() <= 1.0 || until_ == Clock::time_point::max()) return std::chrono::milliseconds(0);
  return std::chrono::duration_cast<std::chrono::milliseconds>(until_ - Clock::now());
}

asio::awaitable<Straggler::Ticket> Straggler::enter() {
  if (factor() <= 1.0 && !busy_) co_return Ticket{};
  while (busy_) {
    auto timer = std::make_shared<asio::steady_timer>(ex_, Clock::time_point::max());
    waiters_.push_back(timer);
    asio::error_code ec;
    co_await timer->async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  if (factor() <= 1.0) co_return Ticket{};
  busy_ = true;
  co_return Ticket{true, Clock::now()};
}

asio::awaitable<void> Straggler::leave(Ticket ticket, Clock::duration received) {
  if (!ticket.in_lane) co_return;
  const auto served = Clock::now() - ticket.start;
  const double extra = factor() - 1.0;
  if (extra > 0) {
    asio::steady_timer hold(ex_, std::chrono::duration_cast<Clock::duration>((received + served) * extra));
    asio::error_code ec;
    co_await hold.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  busy_ = false;
  if (!waiters_.empty()) {
    waiters_.front()->cancel();
    waiters_.pop_front();
  }
}

}  // namespace pvfs
