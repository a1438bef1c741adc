// Runs a blocking function (disk, fsync) on a thread pool and resumes the
// calling coroutine on its own executor with the result. Keeps the network
// thread from ever waiting on a disk.
#pragma once

#include <type_traits>
#include <utility>

#include <asio.hpp>

namespace pvfs::rpc {

template <typename F>
asio::awaitable<std::invoke_result_t<F>> run_blocking(asio::thread_pool& pool, F fn) {
  using R = std::invoke_result_t<F>;
  co_return co_await asio::co_spawn(
      pool, [fn = std::move(fn)]() mutable -> asio::awaitable<R> { co_return fn(); },
      asio::use_awaitable);
}

}  // namespace pvfs::rpc
