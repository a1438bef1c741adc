// What a connection has read past the frame it was reading: the start of
// the frames after it. Each read of a connection also fills this buffer
// with whatever else the socket already holds, so a small frame (header,
// message, data and tag) comes whole in one system call instead of one for
// its header and one for the rest, and frames sent back to back cost one
// read between them. Bounded (kBytes), so a peer cannot make it grow.
// Pure: no I/O. Not thread-safe: owned by one connection's read loop.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>

namespace pvfs::rpc {

class ReadAhead {
 public:
  // Enough for a 4 KiB write or read reply with its message and tag; a
  // larger frame's data past it is read straight into its own buffer.
  static constexpr size_t kBytes = size_t{16} << 10;

  ReadAhead() : bytes_(std::make_unique<std::byte[]>(kBytes)) {}

  // Bytes held.
  size_t size() const { return end_ - begin_; }

  // Moves the first of the bytes held into `to`, as many as fit; returns
  // how many.
  size_t take(std::span<std::byte> to) {
    const size_t n = std::min(to.size(), size());
    if (n > 0) std::memcpy(to.data(), bytes_.get() + begin_, n);
    begin_ += n;
    if (begin_ == end_) begin_ = end_ = 0;
    return n;
  }

  // Where the next read may put bytes: all the room after what is held
  // (moved to the front first).
  std::span<std::byte> room() {
    if (begin_ > 0) {
      std::memmove(bytes_.get(), bytes_.get() + begin_, size());
      end_ -= begin_;
      begin_ = 0;
    }
    return {bytes_.get() + end_, kBytes - end_};
  }

  // `n` bytes were read into room().
  void filled(size_t n) { end_ += n; }

 private:
  std::unique_ptr<std::byte[]> bytes_;
  size_t begin_ = 0;
  size_t end_ = 0;
};

}  // namespace pvfs::rpc
