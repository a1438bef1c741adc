#include "fs/fuse_loop.h"

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <linux/fuse.h>

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
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

// FUSE_HANDLE_KILLPRIV_V2 (see privileges_left_to_us): libfuse 3.14 neither
// knows nor passes the flag, so the loop sets it in libfuse's reply to the
// kernel's INIT when the kernel offered it. Replies may also be written by
// the invalidator's thread (notifications), hence atomics.
std::atomic<uint64_t> init_unique{0};  // the INIT being answered, 0 when none
std::atomic<bool> killpriv_v2{false};

ssize_t write_reply(int fd, iovec* iov, int count, void*) {
  const uint64_t init = init_unique.load(std::memory_order_acquire);
  if (init != 0 && count >= 2 && iov[0].iov_len >= sizeof(fuse_out_header) &&
      iov[1].iov_len >= offsetof(fuse_init_out, flags) + sizeof(uint32_t)) {
    auto* header = static_cast<fuse_out_header*>(iov[0].iov_base);
    if (header->unique == init) {
      init_unique.store(0, std::memory_order_release);
      if (header->error == 0) {
        static_cast<fuse_init_out*>(iov[1].iov_base)->flags |= FUSE_HANDLE_KILLPRIV_V2;
        killpriv_v2.store(true, std::memory_order_release);
      }
    }
  }
  return ::writev(fd, iov, count);
}

ssize_t read_request(int fd, void* buf, size_t size, void*) { return ::read(fd, buf, size); }

// Before libfuse answers an INIT that offers FUSE_HANDLE_KILLPRIV_V2, marks
// it so write_reply accepts the offer.
void note_init(const std::byte* request, size_t size) {
  if (size < sizeof(fuse_in_header) + offsetof(fuse_init_in, flags) + sizeof(uint32_t)) return;
  const auto* header = reinterpret_cast<const fuse_in_header*>(request);
  if (header->opcode != FUSE_INIT) return;
  const auto* init = reinterpret_cast<const fuse_init_in*>(header + 1);
  if (init->flags & FUSE_HANDLE_KILLPRIV_V2) init_unique.store(header->unique, std::memory_order_release);
}

std::shared_ptr<Buffer> fresh_buffer() { return std::make_shared<Buffer>(kLead + kReadBytes); }

}  // namespace

std::shared_ptr<Buffer> keep_request_buffer() {
  return current_buffer ? *current_buffer : nullptr;
}

bool current_write_kills_setid() {
  if (!current_buffer) return false;
  const auto* header = reinterpret_cast<const fuse_in_header*>((*current_buffer)->data() + kLead);
  if (header->opcode != FUSE_WRITE) return false;
  return (reinterpret_cast<const fuse_write_in*>(header + 1)->write_flags & FUSE_WRITE_KILL_SUIDGID) != 0;
}

bool privileges_left_to_us() { return killpriv_v2.load(std::memory_order_acquire); }

asio::awaitable<Status> serve_requests(fuse_session* session) {
  auto executor = co_await asio::this_coro::executor;
  const int fd = fuse_session_fd(session);
  if (int flags = ::fcntl(fd, F_GETFL); flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
    co_return Status::from_errno(errno, "making /dev/fuse non-blocking");

  const fuse_custom_io io{.writev = write_reply, .read = read_request, .splice_receive = nullptr,
                          .splice_send = nullptr};
  if (int rc = fuse_session_custom_io(session, &io, fd); rc != 0)
    co_return Status::from_errno(-rc, "setting the FUSE reply writer");

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
    note_init(buffer->data() + kLead, static_cast<size_t>(n));
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
