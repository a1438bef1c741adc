// Straggler injection: makes this storage server serve data requests F
// times slower for a while, which is how short-term stragglers (a server
// slowed by interference for seconds) are reproduced on one machine.
//
// While a delay is in force, data requests go through one lane, one at a
// time, like a single slowed device: each does its work, then holds the
// lane for (F - 1) x the time the request took to arrive (its bulk data
// read off the socket) and to be served. Its reply waits too, and it stays
// counted as outstanding load, so probes see the queue build up. Requests
// already past the lane when the delay starts are not slowed.
// Belongs to the service's network thread.
#pragma once

#include <chrono>
#include <deque>
#include <memory>

#include <asio.hpp>

namespace pvfs {

class Straggler {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Straggler(asio::any_io_executor ex) : ex_(std::move(ex)) {}

  // Serve `factor` times slower for `duration` (zero: until changed).
  // factor <= 1 ends a delay.
  void set(double factor, std::chrono::milliseconds duration);
  // The factor in force now (1 when none).
  double factor() const;
  // Time left of a timed delay (zero when none or untimed).
  std::chrono::milliseconds remaining() const;

  // A request's place in the lane; released by leave().
  struct Ticket {
    bool in_lane = false;
    Clock::time_point start;
  };
  // Waits for the lane when a delay is in force; returns at once otherwise.
  asio::awaitable<Ticket> enter();
  // Holds the lane for (F - 1) x (received + time since enter returned),
  // then lets the next request in.
  asio::awaitable<void> leave(Ticket ticket, Clock::duration received);

 private:
  asio::any_io_executor ex_;
  double factor_ = 1.0;
  Clock::time_point until_ = Clock::time_point::max();
  bool busy_ = false;
  std::deque<std::shared_ptr<asio::steady_timer>> waiters_;
};

}  // namespace pvfs
