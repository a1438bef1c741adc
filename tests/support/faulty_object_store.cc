#include "tests/support/faulty_object_store.h"

#include <fmt/format.h>

namespace pvfs::test {

void FaultyObjectStore::fail(Op op, Errc code, unsigned count) {
  std::lock_guard lock(mu_);
  rules_[op].code = code;
  rules_[op].left = count;
}

void FaultyObjectStore::space_left(uint64_t bytes) {
  std::lock_guard lock(mu_);
  limited_ = true;
  space_left_ = bytes;
}

void FaultyObjectStore::stall(Op op) {
  std::lock_guard lock(mu_);
  rules_[op].stalled = true;
}

void FaultyObjectStore::release(Op op) {
  std::lock_guard lock(mu_);
  rules_[op].stalled = false;
  released_.notify_all();
}

size_t FaultyObjectStore::stalled(Op op) const {
  std::lock_guard lock(mu_);
  auto it = rules_.find(op);
  return it == rules_.end() ? 0 : it->second.waiting;
}

void FaultyObjectStore::crash_at(Op op, unsigned nth) {
  std::lock_guard lock(mu_);
  rules_[op].crash_in = std::max(1u, nth);
}

bool FaultyObjectStore::crashed() const {
  std::lock_guard lock(mu_);
  return crashed_;
}

void FaultyObjectStore::heal() {
  std::lock_guard lock(mu_);
  for (auto& [op, rule] : rules_) {
    rule.code = Errc::ok;
    rule.left = 0;
    rule.stalled = false;
    rule.crash_in = 0;
  }
  crashed_ = false;
  limited_ = false;
  released_.notify_all();
}

uint64_t FaultyObjectStore::calls(Op op) const {
  std::lock_guard lock(mu_);
  auto it = rules_.find(op);
  return it == rules_.end() ? 0 : it->second.calls;
}

Status FaultyObjectStore::enter(Op op) {
  std::unique_lock lock(mu_);
  Rule& rule = rules_[op];
  if (rule.stalled) {
    ++rule.waiting;
    released_.wait(lock, [&] { return !rule.stalled; });
    --rule.waiting;
  }
  if (rule.crash_in > 0 && --rule.crash_in == 0) crashed_ = true;
  if (crashed_) return Status(Errc::io, "injected: the store crashed");
  if (rule.code != Errc::ok) {
    const Errc code = rule.code;
    if (rule.left > 0 && --rule.left == 0) rule.code = Errc::ok;
    return Status(code, "injected fault");
  }
  ++rule.calls;
  return {};
}

uint64_t FaultyObjectStore::take_space(uint64_t want) {
  std::lock_guard lock(mu_);
  if (!limited_) return want;
  const uint64_t got = std::min(want, space_left_);
  space_left_ -= got;
  return got;
}

Result<size_t> FaultyObjectStore::write(ObjectId id, uint64_t offset, std::span<const std::byte> data, bool sync) {
  const std::span<const std::byte> parts[] = {data};
  return writev(id, offset, parts, sync);
}

Result<size_t> FaultyObjectStore::writev(ObjectId id, uint64_t offset,
                                         std::span<const std::span<const std::byte>> parts, bool sync) {
  if (Status st = enter(Op::write); !st.ok()) return st;
  uint64_t want = 0;
  for (const auto& p : parts) want += p.size();
  const uint64_t fits = take_space(want);
  if (fits == want) return inner_.writev(id, offset, parts, sync);
  // The short write a full file system makes: what fit, then ENOSPC.
  std::vector<std::span<const std::byte>> head;
  uint64_t left = fits;
  for (const auto& p : parts) {
    if (left == 0) break;
    head.push_back(p.first(std::min<uint64_t>(left, p.size())));
    left -= head.back().size();
  }
  if (!head.empty()) {
    auto done = inner_.writev(id, offset, head, sync);
    if (!done) return done;
  }
  return Status(Errc::no_space, fmt::format("injected: no space left for object {:x}.{} ({} of {} bytes written)",
                                            id.ino.value, id.index, fits, want));
}

Result<size_t> FaultyObjectStore::read(ObjectId id, uint64_t offset, std::span<std::byte> out) {
  if (Status st = enter(Op::read); !st.ok()) return st;
  return inner_.read(id, offset, out);
}

Result<size_t> FaultyObjectStore::readv(ObjectId id, uint64_t offset, std::span<const std::span<std::byte>> parts) {
  if (Status st = enter(Op::read); !st.ok()) return st;
  return inner_.readv(id, offset, parts);
}

Status FaultyObjectStore::truncate(ObjectId id, uint64_t size) {
  if (Status st = enter(Op::truncate); !st.ok()) return st;
  return inner_.truncate(id, size);
}

Status FaultyObjectStore::allocate(ObjectId id, uint64_t offset, uint64_t length, bool punch) {
  if (Status st = enter(Op::allocate); !st.ok()) return st;
  return inner_.allocate(id, offset, length, punch);
}

Result<std::optional<uint64_t>> FaultyObjectStore::seek(ObjectId id, uint64_t offset, bool hole) {
  if (Status st = enter(Op::seek); !st.ok()) return st;
  return inner_.seek(id, offset, hole);
}

Status FaultyObjectStore::remove(ObjectId id) {
  if (Status st = enter(Op::remove); !st.ok()) return st;
  return inner_.remove(id);
}

Status FaultyObjectStore::fsync(ObjectId id) {
  if (Status st = enter(Op::fsync); !st.ok()) return st;
  return inner_.fsync(id);
}

Result<ObjectStat> FaultyObjectStore::stat(ObjectId id) {
  if (Status st = enter(Op::stat); !st.ok()) return st;
  return inner_.stat(id);
}

Result<StoreSpace> FaultyObjectStore::space() {
  if (Status st = enter(Op::space); !st.ok()) return st;
  auto s = inner_.space();
  std::lock_guard lock(mu_);
  if (s && limited_) s->free_bytes = std::min(s->free_bytes, space_left_);
  return s;
}

Result<std::vector<ObjectId>> FaultyObjectStore::list() {
  if (Status st = enter(Op::list); !st.ok()) return st;
  return inner_.list();
}

}  // namespace pvfs::test
