// The storage server's I/O queue: every data request (object and fragment
// reads and writes, client and maintainer) waits here until the elevator
// (policy/elevator, pure) dispatches it, possibly merged with adjacent
// requests into one vectored backend operation. At most `depth` operations
// are on the disk at a time, so the elevator, not the kernel, decides the
// order. With an emulated disk (for experiments on machines without
// spinning disks) each operation also takes the modelled seek + transfer
// time, and depth is 1, as one disk arm. Runs on the service's network
// thread; disk work runs on the blocking pool, except that an operation the
// elevator dispatches the moment it arrives (nothing else queued, room on
// the disk) runs right here on the network thread when the InlineGate says
// it is small and the store has proven fast for such operations: no
// hand-off, and the same elevator decisions.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>

#include <asio.hpp>

#include "policy/elevator/elevator.h"
#include "policy/elevator/emulated_disk.h"
#include "policy/elevator/inline_gate.h"
#include "server/object_store.h"

namespace pvfs {

struct IoQueueOptions {
  elevator::ElevatorOptions elevator;
  unsigned depth = 4;  // operations on the disk at once (> 0)
  std::optional<elevator::EmulatedDiskOptions> emulated_disk;
  // Which operations may run on the network thread (never with an emulated
  // disk, whose modelled time would stall it).
  elevator::InlineOptions inline_ops;
};

class IoQueue {
 public:
  IoQueue(asio::any_io_executor ex, asio::thread_pool& pool, IoQueueOptions options,
          elevator::BandwidthTable bandwidth);

  struct Op {
    ObjectStore* store = nullptr;
    ObjectId key;          // the file in `store`
    ObjectId elevator_key; // how the elevator tells objects apart (fragments differ from objects)
    bool write = false;
    uint64_t offset = 0;
    std::span<const std::byte> data;  // write
    std::span<std::byte> out;         // read
    bool sync = false;                // write: on stable storage before completion
    elevator::Class cls = elevator::Class::normal;
    std::chrono::nanoseconds max_service{0};  // urgent only
  };
  // Queues `op` and waits until it is done: bytes written, or bytes read
  // into op.out (fewer at the end of the object). Errors as ObjectStore's.
  asio::awaitable<Result<size_t>> submit(Op op);

  void set_policy(elevator::Policy policy) { elevator_.set_policy(policy); }
  elevator::ElevatorStats stats() const { return elevator_.stats(); }
  const elevator::BandwidthTable& bandwidth() const { return elevator_.estimator().table(); }
  // Seeks the emulated disk made (0 without one).
  uint64_t emulated_seeks() const { return disk_ ? disk_->seeks() : 0; }
  bool emulated() const { return disk_.has_value(); }
  unsigned depth() const { return depth_; }
  // Operations run on the network thread, and handed to the disk pool.
  uint64_t inlined() const { return gate_.inlined(); }
  uint64_t handed_off() const { return gate_.handed_off(); }
  const elevator::InlineGate& inline_gate() const { return gate_; }

 private:
  struct Pending {
    Op op;
    uint64_t length = 0;
    Result<size_t> result = size_t{0};
    bool done = false;
    std::shared_ptr<asio::steady_timer> wake;
  };
  void pump();
  asio::awaitable<void> execute(elevator::Dispatch d);
  elevator::Nanos now() const;
  // Runs the lone dispatch `d` of `op` on this thread, if the elevator
  // dispatches `id` at once and the gate allows; nullopt otherwise (the
  // request then stays queued for pump()).
  std::optional<Result<size_t>> try_inline(const Op& op, uint64_t id, uint64_t length);

  asio::any_io_executor ex_;
  asio::thread_pool& pool_;
  unsigned depth_;
  elevator::Elevator elevator_;
  std::optional<elevator::EmulatedDisk> disk_;
  elevator::InlineGate gate_;
  std::map<uint64_t, Pending*> pending_;
  uint64_t next_id_ = 1;
  unsigned in_flight_ = 0;
};

}  // namespace pvfs
