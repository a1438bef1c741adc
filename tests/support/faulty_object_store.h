// Test support: an ObjectStore that passes every call to another store
// except where the test told it to fail, run out of space, stall or crash.
// The faults a real disk has, reproduced on demand and without timing:
// a stalled call blocks its disk-pool thread until the test releases it,
// so a test can run other requests while one is "on the disk".
// Thread-safe: calls come from the service's disk pool and network thread,
// controls from the test thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>

#include "server/object_store.h"

namespace pvfs::test {

class FaultyObjectStore final : public ObjectStore {
 public:
  // What a fault applies to (writev counts as write, readv as read).
  enum class Op : uint8_t { write, read, truncate, allocate, seek, remove, fsync, stat, space, list };

  // `inner` must outlive this store.
  explicit FaultyObjectStore(ObjectStore& inner) : inner_(inner) {}

  // The next `count` calls of `op` fail with `code` and change nothing
  // (count 0: every call until heal()).
  void fail(Op op, Errc code, unsigned count = 0);
  // A disk with `bytes` left: writes take what fits of their data (a short
  // write, as pwrite does) and fail with no_space when not all of it fit.
  void space_left(uint64_t bytes);
  // Calls of `op` from now on wait before reaching the inner store until
  // release(op). stalled(op): how many wait now.
  void stall(Op op);
  void release(Op op);
  size_t stalled(Op op) const;
  // The store dies at the `nth` call of `op` from now on: that call and
  // every later one fail with io and change nothing (as after a crash).
  void crash_at(Op op, unsigned nth = 1);
  bool crashed() const;
  // Ends every fault (stalls released; a crash too).
  void heal();
  // Calls of `op` that reached the inner store.
  uint64_t calls(Op op) const;

  Result<size_t> write(ObjectId id, uint64_t offset, std::span<const std::byte> data, bool sync) override;
  Result<size_t> read(ObjectId id, uint64_t offset, std::span<std::byte> out) override;
  Result<size_t> writev(ObjectId id, uint64_t offset, std::span<const std::span<const std::byte>> parts,
                        bool sync) override;
  Result<size_t> readv(ObjectId id, uint64_t offset, std::span<const std::span<std::byte>> parts) override;
  Status truncate(ObjectId id, uint64_t size) override;
  Status allocate(ObjectId id, uint64_t offset, uint64_t length, bool punch) override;
  Result<std::optional<uint64_t>> seek(ObjectId id, uint64_t offset, bool hole) override;
  Status remove(ObjectId id) override;
  Status fsync(ObjectId id) override;
  Result<ObjectStat> stat(ObjectId id) override;
  Result<StoreSpace> space() override;
  Result<std::vector<ObjectId>> list() override;

 private:
  struct Rule {
    Errc code = Errc::ok;
    unsigned left = 0;  // 0 with a code: for ever
    bool stalled = false;
    size_t waiting = 0;
    unsigned crash_in = 0;  // counts down to the crashing call
    uint64_t calls = 0;
  };
  // Applies the faults of `op` to one call: waits out a stall, then the
  // status it must fail with (ok: go on to the inner store).
  Status enter(Op op);
  // Bytes of a `want`-byte write that still fit (all when no budget).
  uint64_t take_space(uint64_t want);

  ObjectStore& inner_;
  mutable std::mutex mu_;  // guards everything below; a leaf lock
  std::condition_variable released_;
  std::map<Op, Rule> rules_;
  bool crashed_ = false;
  bool limited_ = false;
  uint64_t space_left_ = 0;
};

}  // namespace pvfs::test
