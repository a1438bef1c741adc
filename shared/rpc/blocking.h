// Runs a blocking function (disk, fsync) on a thread pool and resumes the
// calling coroutine on its own executor with the result. Keeps the network
// thread from ever waiting on a disk.
#pragma once

#include <type_traits>
#include <utility>

#include <asio.hpp>

namespace pvfs::rpc {

// `fn` (and whatever it captures: shared_ptrs, buffers) stays in this
// coroutine's frame, on the caller's thread; the pool runs it through a
// pointer. The coroutine asio spawns on the pool is torn down on a pool
// thread after the caller may already have resumed, so it must own nothing
// whose destruction could race with the caller: with a shared_ptr captured
// there, the MDS corrupted its heap under load.
template <typename F>
asio::awaitable<std::invoke_result_t<F>> run_blocking(asio::thread_pool& pool, F fn) {
  using R = std::invoke_result_t<F>;
  F* run = &fn;
  co_return co_await asio::co_spawn(
      pool, [run]() -> asio::awaitable<R> { co_return (*run)(); }, asio::use_awaitable);
}

}  // namespace pvfs::rpc
