// Test support for in-process driver tests: the test thread runs the
// io_context the drivers live on, a step at a time, until what the test
// waits for has happened. No test here waits for time to pass: time is a
// ManualClock the test advances; the deadline below only turns a hang
// into a failure.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <thread>

#include <asio.hpp>
#include <doctest/doctest.h>

namespace pvfs::test {

class Loop {
 public:
  Loop() : guard_(asio::make_work_guard(io)) {}
  ~Loop() {
    guard_.reset();
    io.stop();
  }

  asio::io_context io{1};

  // Runs handlers until `done()` holds. Fails the test when it still does
  // not after 30 s (a hang: nothing here takes that long).
  void run_until(const std::function<bool()>& done) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!done()) {
      if (io.poll_one() == 0) {
        // Nothing ready here: work is on the disk pool.
        std::this_thread::yield();
        if (std::chrono::steady_clock::now() > give_up) FAIL("the loop hung");
      }
    }
  }
  // Runs every handler that is ready now or becomes ready from the disk
  // pool's work in flight, until there is nothing to do for a while.
  void settle() {
    for (int quiet = 0; quiet < 200;) {
      if (io.poll() > 0) quiet = 0;
      else {
        ++quiet;
        std::this_thread::yield();
      }
    }
  }

  // Starts `a` on the loop; the returned slot is filled when it finishes.
  template <typename T>
  std::shared_ptr<std::optional<T>> spawn(asio::awaitable<T> a) {
    auto slot = std::make_shared<std::optional<T>>();
    asio::co_spawn(io, std::move(a), [slot](std::exception_ptr e, T value) {
      if (e) std::rethrow_exception(e);
      slot->emplace(std::move(value));
    });
    return slot;
  }
  std::shared_ptr<bool> spawn(asio::awaitable<void> a) {
    auto done = std::make_shared<bool>(false);
    asio::co_spawn(io, std::move(a), [done](std::exception_ptr e) {
      if (e) std::rethrow_exception(e);
      *done = true;
    });
    return done;
  }
  // Runs `a` to completion and returns its result.
  template <typename T>
  T run(asio::awaitable<T> a) {
    auto slot = spawn(std::move(a));
    run_until([&] { return slot->has_value(); });
    return std::move(**slot);
  }
  void run(asio::awaitable<void> a) {
    auto done = spawn(std::move(a));
    run_until([&] { return *done; });
  }

 private:
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
};

}  // namespace pvfs::test
