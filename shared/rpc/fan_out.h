// Runs several coroutines at once on the caller's executor and waits for
// all of them: how the client sends one request per object in parallel.
#pragma once

#include <memory>
#include <vector>

#include <asio.hpp>

#include "shared/status.h"

namespace pvfs::rpc {

// Waits for every task; returns the first failure (in completion order) or ok.
// Must be awaited on a single-threaded executor.
inline asio::awaitable<Status> run_all(std::vector<asio::awaitable<Status>> tasks) {
  if (tasks.empty()) co_return Status{};
  if (tasks.size() == 1) co_return co_await std::move(tasks.front());
  auto ex = co_await asio::this_coro::executor;
  struct State {
    explicit State(asio::any_io_executor e, size_t n) : left(n), timer(e) {}
    size_t left;
    Status first;
    asio::steady_timer timer;
  };
  auto state = std::make_shared<State>(ex, tasks.size());
  state->timer.expires_at(asio::steady_timer::time_point::max());
  for (auto& task : tasks) {
    asio::co_spawn(ex, std::move(task), [state](std::exception_ptr e, Status s) {
      if (e) s = Status(Errc::io, "internal error in a parallel request");
      if (!s.ok() && state->first.ok()) state->first = std::move(s);
      if (--state->left == 0) state->timer.cancel();
    });
  }
  // Single-threaded: no task can finish between this check and the wait.
  if (state->left > 0) {
    asio::error_code ec;
    co_await state->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
  co_return state->first;
}

}  // namespace pvfs::rpc
