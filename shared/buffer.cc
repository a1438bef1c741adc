#include "shared/buffer.h"

#include <array>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#include "shared/status.h"

namespace pvfs {

namespace {

// Size classes are powers of two from 4 KiB to kMaxPooled.
constexpr size_t kMinClass = 12;
constexpr size_t kMaxClass = 24;
constexpr size_t kKeepPerClass = 64;

struct SizeClass {
  std::mutex mu;  // guards free; leaf lock
  std::vector<std::byte*> free;
};

// The process-wide pool: a deliberate leaf singleton (memory is process-wide).
std::array<SizeClass, kMaxClass + 1>& pool() {
  static auto* classes = new std::array<SizeClass, kMaxClass + 1>();
  return *classes;
}

size_t class_of(size_t size) {
  size_t c = std::bit_width(std::max(size, size_t{1} << kMinClass) - 1);
  return std::max(c, kMinClass);
}

std::byte* take(size_t cls) {
  if (cls <= kMaxClass) {
    auto& sc = pool()[cls];
    std::lock_guard lock(sc.mu);
    if (!sc.free.empty()) {
      std::byte* p = sc.free.back();
      sc.free.pop_back();
      return p;
    }
  }
  void* p = std::aligned_alloc(Buffer::kAlignment, size_t{1} << cls);
  if (!p) throw std::bad_alloc();
  return static_cast<std::byte*>(p);
}

void give(std::byte* p, size_t cls) {
  if (cls <= kMaxClass) {
    auto& sc = pool()[cls];
    std::lock_guard lock(sc.mu);
    if (sc.free.size() < kKeepPerClass) {
      sc.free.push_back(p);
      return;
    }
  }
  std::free(p);
}

}  // namespace

Buffer::Buffer(size_t size) {
  if (size == 0) return;
  size_t cls = class_of(size);
  data_ = take(cls);
  capacity_ = size_t{1} << cls;
  size_ = size;
}

Buffer::Buffer(Buffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)) {}

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

Buffer::~Buffer() { release(); }

void Buffer::resize(size_t size) {
  if (size <= capacity_) {
    size_ = size;
    return;
  }
  Buffer bigger(size);
  if (size_) std::memcpy(bigger.data_, data_, size_);
  *this = std::move(bigger);
}

void Buffer::release() {
  if (data_) give(data_, std::countr_zero(capacity_));
  data_ = nullptr;
  size_ = capacity_ = 0;
}

}  // namespace pvfs
