// The loop that serves /dev/fuse on the client's io thread. Each request is
// read into a pooled buffer and handed to libfuse, whose callbacks start the
// work on the same thread, so a request is read, sent to the daemons,
// answered and replied to without changing threads, and write data is sent
// from the buffer the kernel copied it into.
#pragma once

#include <memory>

#include <asio.hpp>

#include "shared/buffer.h"
#include "shared/status.h"

struct fuse_session;

namespace pvfs::fuse {

// Reads and dispatches requests of `session` until the file system is
// unmounted or SIGINT, SIGTERM or SIGHUP arrives (both end it with ok), or
// reading the device fails (an io error). Run on the client's io_context,
// the only thread that may then touch the client or the session's replies.
asio::awaitable<Status> serve_requests(fuse_session* session);

// For a callback that keeps using the bytes of the request being dispatched
// after it returns (write): shares ownership of the buffer they are in, and
// the loop reads the next request into another one. Null outside dispatch.
std::shared_ptr<Buffer> keep_request_buffer();

}  // namespace pvfs::fuse
