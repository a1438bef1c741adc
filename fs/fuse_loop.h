// The loop that serves /dev/fuse on the client's io thread. Each request is
// read into a pooled buffer and handed to libfuse, whose callbacks start the
// work on the same thread, so a request is read, sent to the daemons,
// answered and replied to without changing threads, and write data is sent
// from the buffer the kernel copied it into.
#pragma once

#include <cstdint>
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

// Whether the WRITE being dispatched asks for set-id bits to be cleared
// (FUSE_WRITE_KILL_SUIDGID: the writer lacks CAP_FSETID); false for any
// other request or outside dispatch.
bool current_write_kills_setid();

// Whether the kernel leaves dropping privileges on write and truncation to
// pvfsmount (FUSE_HANDLE_KILLPRIV_V2, accepted at INIT when the kernel
// offers it, Linux 5.11 and later). The kernel then stops asking for
// security.capability before every write, half the requests of a small
// write; fs/fuse_bridge_privileges.cc does what it did.
bool privileges_left_to_us();

}  // namespace pvfs::fuse
