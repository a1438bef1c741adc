// Runs one coroutine to completion on the calling thread: for tools
// (pvfs-ctl, pvfs-cluster) and tests that make a few calls and then go on
// without an event loop of their own. The one such helper of the project.
//
// An exception escaping the coroutine (a bug, or a library's exception that
// nobody caught, such as Cap'n Proto's on a malformed message) becomes
// Status(Errc::io, "internal error: <what>"): the caller prints one error
// line and exits, instead of the exception crossing our headers and
// aborting the tool (a test sees the message in its failed CHECK).
#pragma once

#include <exception>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include <asio.hpp>

#include "shared/status.h"

namespace pvfs::rpc {

// What run_sync returns for an exception `e` that escaped a coroutine.
Status internal_error(std::exception_ptr e);

// Runs `task` on `io` until it finishes; `io` must not be running on another
// thread. Work the task left behind on `io` (a connection reading in the
// background) stays there and resumes at the next run_sync on the same `io`.
// T must be constructible from a Status (a Result<...> or Status).
template <typename T>
T run_sync(asio::io_context& io, asio::awaitable<T> task) {
  static_assert(std::is_constructible_v<T, Status>, "run_sync needs a Status or Result<...> task");
  std::optional<T> out;
  asio::co_spawn(io, std::move(task), [&](std::exception_ptr e, T value) {
    if (e) out.emplace(internal_error(e));
    else out.emplace(std::move(value));
    io.stop();
  });
  io.restart();
  io.run();
  return std::move(*out);
}

// The same on a private io_context, gone (with whatever the task left on
// it) when this returns.
template <typename T>
T run_sync(asio::awaitable<T> task) {
  asio::io_context io(1);
  return run_sync(io, std::move(task));
}

}  // namespace pvfs::rpc
