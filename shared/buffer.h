// Aligned, pooled data buffers for file contents. Every data buffer in the
// client, the RPC layer and the servers is 4 KiB-aligned (the kernel copies
// aligned buffers 3-5x faster here) and reused from a pool, because fresh
// pages are slow on our hypervisors (docs/machines.md).
// A Buffer is move-only and owned by one thread at a time; the pool behind
// it is thread-safe (one leaf mutex per size class).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace pvfs {

class Buffer {
 public:
  static constexpr size_t kAlignment = 4096;
  // The largest buffer the pool keeps; larger ones are freed on release.
  static constexpr size_t kMaxPooled = size_t{16} << 20;

  Buffer() = default;
  // A buffer of `size` bytes (contents unspecified), aligned to kAlignment.
  explicit Buffer(size_t size);
  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  // Shrinks or grows within capacity(); growing past it reallocates (contents kept).
  void resize(size_t size);
  std::span<std::byte> span() { return {data_, size_}; }
  std::span<const std::byte> span() const { return {data_, size_}; }

 private:
  void release();
  std::byte* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace pvfs
