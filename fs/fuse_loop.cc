#include "fs/fuse_loop.h"

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <linux/fuse.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

#include <spdlog/spdlog.h>

namespace pvfs::fuse {

namespace {

// A WRITE request is a fuse_in_header and a fuse_write_in, then the data.
// Reading requests at this offset of a page-aligned buffer puts write data
// on a page boundary, where the socket's copy of it is fastest.
constexpr size_t kWriteHeaderBytes = sizeof(fuse_in_header) + sizeof(fuse_write_in);
static_assert(kWriteHeaderBytes == 80);
constexpr size_t kLead = Buffer::kAlignment - kWriteHeaderBytes;
// The kernel refuses a read that could not hold a header and max_write bytes
// (fuse_bridge.cc asks for 1 MiB); one page of room covers every header.
constexpr size_t kReadBytes = (size_t{1} << 20) + Buffer::kAlignment;
// Requests dispatched before the loop lets replies and timers run.
constexpr int kBurst = 16;

// The buffer of the request libfuse is dispatching (io thread only).
thread_local std::shared_ptr<Buffer>* current_buffer = nullptr;

std::shared_ptr<Buffer> fresh_buffer() { return std::make_shared<Buffer>(kLead + kReadBytes); }

}  // namespace

std::shared_ptr<Buffer> keep_request_buffer() {
  return current_buffer ? *current_buffer : nullptr;
}

asio::awaitable<Status> serve_requests(fuse_session* session) {
  auto executor = co_await asio::this_coro::executor;
  const int fd = fuse_session_fd(session);
  if (int flags = ::fcntl(fd, F_GETFL); flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
    co_return Status::from_errno(errno, "making /dev/fuse non-blocking");

  // The session owns the descriptor: release() it before this object goes.
  asio::posix::stream_descriptor device(executor, fd);
  asio::signal_set signals(executor, SIGINT, SIGTERM, SIGHUP);
  bool stopping = false;
  signals.async_wait([&](const std::error_code& ec, int signal) {
    if (ec) return;
    spdlog::info("signal {}: unmounting", signal);
    stopping = true;
    device.cancel();
  });

  auto buffer = fresh_buffer();
  Status result;
  int burst = 0;
  while (!stopping && !fuse_session_exited(session)) {
    ssize_t n = ::read(fd, buffer->data() + kLead, kReadBytes);
    if (n < 0) {
      const int err = errno;
      // ENOENT: the request was interrupted before it was read.
      if (err == EINTR || err == ENOENT) continue;
      if (err == ENODEV) break;  // unmounted
      if (err != EAGAIN) {
        result = Status::from_errno(err, "reading FUSE requests");
        break;
      }
      burst = 0;
      std::error_code ec;
      co_await device.async_wait(asio::posix::descriptor_base::wait_read,
                                 asio::redirect_error(asio::use_awaitable, ec));
      if (ec && ec != asio::error::operation_aborted) {
        result = Status(Errc::io, "waiting for FUSE requests: " + ec.message());
        break;
      }
      continue;
    }
    if (n == 0) break;  // the kernel closed the connection
    fuse_buf request{};
    request.size = static_cast<size_t>(n);
    request.mem = buffer->data() + kLead;
    current_buffer = &buffer;
    fuse_session_process_buf(session, &request);
    current_buffer = nullptr;
    if (buffer.use_count() > 1) buffer = fresh_buffer();
    if (++burst == kBurst) {
      burst = 0;
      co_await asio::post(executor, asio::use_awaitable);
    }
  }
  signals.cancel();
  device.release();
  co_return result;
}

}  // namespace pvfs::fuse
