// Runs one coroutine to completion on a private io_context of the calling
// thread: for tools (pvfs-ctl, pvfs-cluster) that make a few calls and then
// exit. An exception escaping the coroutine becomes Status(io, "internal
// error"). Not for use inside another io_context's thread.
#pragma once

#include <exception>
#include <optional>
#include <utility>

#include <asio.hpp>

#include "shared/status.h"

namespace pvfs::rpc {

// T must be constructible from a Status (a Result<...> or Status).
template <typename T>
T run_sync(asio::awaitable<T> task) {
  asio::io_context io(1);
  std::optional<T> out;
  asio::co_spawn(io, std::move(task), [&](std::exception_ptr e, T value) {
    if (e) out.emplace(Status(Errc::io, "internal error"));
    else out.emplace(std::move(value));
    io.stop();
  });
  io.run();
  return std::move(*out);
}

}  // namespace pvfs::rpc
