// An io_context that can unwind the coroutines still suspended in it.
#pragma once

#include <asio.hpp>

namespace pvfs::rpc {

// When run() has returned, the coroutines still suspended in an io_context
// (requests waiting on a gate, a timer, a peer or a disk pool) hold guards
// and references into the objects that spawned them. Destroying the
// io_context after those objects, as declaration order usually does, would
// unwind the coroutines into freed memory. drop_suspended() unwinds them at
// once: call it after run() returned (its thread joined) and while those
// objects are still alive. Sockets and timers destroyed later are safe:
// asio keeps its services until the io_context itself goes. Calling it more
// than once is harmless.
class IoContext : public asio::io_context {
 public:
  using asio::io_context::io_context;
  void drop_suspended() { shutdown(); }
};

}  // namespace pvfs::rpc
