// Runs a blocking function (disk, fsync) on a thread pool and resumes the
// calling coroutine on its own executor with the result. Keeps the network
// thread from ever waiting on a disk.
#pragma once

#include <type_traits>
#include <utility>

#include <asio.hpp>

namespace pvfs::rpc {

// `fn` must be trivially destructible: capture by reference or raw pointer,
// and keep owners (shared_ptrs, buffers) in the calling coroutine. GCC 12
// destroys a lambda's captures twice when the lambda is a temporary in a
// co_await expression, which is how this is called; a captured shared_ptr
// corrupted the MDS's heap. The pool runs `fn` through a pointer, so it is
// destroyed once, with this frame, on the caller's thread.
template <typename F>
asio::awaitable<std::invoke_result_t<F>> run_blocking(asio::thread_pool& pool, F fn) {
  static_assert(std::is_trivially_destructible_v<F>,
                "run_blocking: capture by reference or raw pointer (GCC 12 double-destroys "
                "temporaries in co_await expressions)");
  using R = std::invoke_result_t<F>;
  F* run = &fn;
  co_return co_await asio::co_spawn(
      pool, [run]() -> asio::awaitable<R> { co_return (*run)(); }, asio::use_awaitable);
}

}  // namespace pvfs::rpc
