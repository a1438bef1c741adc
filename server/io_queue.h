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
// hand-off, and the same elevator decisions. Time (deadlines, service
// times) comes from the injected Clock; only the emulated disk's modelled
// time is slept for real on the disk pool. With a QoS policy other than
// off, the elevator serves only the jobs the current service window of
// the installed plan lets in (policy/qos's WindowGate), waits for the next
// window when none of those has work, and never runs an operation inline.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <asio.hpp>

#include "policy/elevator/elevator.h"
#include "policy/elevator/emulated_disk.h"
#include "policy/elevator/inline_gate.h"
#include "server/object_store.h"
#include "policy/qos/gate.h"
#include "shared/clock.h"

namespace pvfs {

struct IoQueueOptions {
  elevator::ElevatorOptions elevator;
  unsigned depth = 4;  // operations on the disk at once (> 0)
  std::optional<elevator::EmulatedDiskOptions> emulated_disk;
  // Which operations may run on the network thread (never with an emulated
  // disk, whose modelled time would stall it).
  elevator::InlineOptions inline_ops;
  qos::QosPolicy qos = qos::QosPolicy::off;  // [qos] policy
};

class IoQueue {
 public:
  // `clock` must outlive the queue.
  IoQueue(asio::any_io_executor ex, asio::thread_pool& pool, IoQueueOptions options,
          elevator::BandwidthTable bandwidth, const Clock& clock = real_clock());

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
    // The request's job id; "" when none (pull-backs, tools), which windows
    // treat as best effort. A job's redirected write or read of a fragment
    // carries the job like any other. Read only with QoS on.
    std::string job;
    // The sending pvfsmount and the job's I/O time on it (rpc::Origin); 0: none.
    uint64_t client = 0;
    uint64_t client_io_ns = 0;
    // Whether the bytes count as the job's (QosAgent). A read of a fragment
    // does not: the read's home server counted the whole range.
    bool counted = true;
  };
  // Queues `op` and waits until it is done: bytes written, or bytes read
  // into op.out (fewer at the end of the object). Errors as ObjectStore's.
  asio::awaitable<Result<size_t>> submit(Op op);

  void set_policy(elevator::Policy policy) { elevator_.set_policy(policy); }

  // Switches the QoS policy; off also drops the plan, so every request is
  // served as without QoS from now on. Requests already queued keep the
  // job they were queued with.
  void set_qos_policy(qos::QosPolicy policy);
  qos::QosPolicy qos_policy() const { return qos_; }
  // Installs a plan of service windows for `repeat` periods from `start`
  // (this host's steady clock, as now()); ignored while QoS is off. Then
  // pumps: requests the new window lets in go at once.
  void install_plan(qos::Plan plan, elevator::Nanos start, int repeat = 1);
  // Drops the plan: every job is let in again.
  void clear_plan();
  // A request served while QoS is on, for the QoS agent (server/qos_agent.h)
  // to measure locality and window use. `window_bytes`: the part of
  // `length` served in the window its plan gives it (its own, or the shared
  // one it is in), in proportion to the time its operation spent there.
  struct Served {
    std::string_view job;
    ObjectId object;  // the elevator's key
    uint64_t offset = 0;
    uint64_t length = 0;
    elevator::Nanos arrival{0};
    elevator::Nanos done{0};  // not decreasing from one call to the next
    uint64_t window_bytes = 0;
    uint64_t client = 0;        // Op::client
    uint64_t client_io_ns = 0;  // Op::client_io_ns
  };
  // Called on this queue's executor for each request served with QoS on;
  // replaces the one set before.
  void on_served(std::function<void(const Served&)> observer) { observer_ = std::move(observer); }
  // Requests queued now, by job id ("" for none); empty while QoS is off.
  std::map<std::string, uint64_t, std::less<>> queued_by_job() const;
  // The window in force now.
  qos::WindowGate::Current window() const { return windows_.current(now()); }
  elevator::Nanos now() const;
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
    elevator::Nanos arrival{0};
  };
  void report_served(const Op& op, uint64_t length, elevator::Nanos arrival, uint64_t window_bytes);
  void pump();
  // The elevator's next dispatch under the window in force.
  std::optional<elevator::Dispatch> next_dispatch();
  // With work queued that no window lets in now: pump again when the
  // window ends.
  void arm_window_timer();
  uint32_t job_number(const std::string& job);
  asio::awaitable<void> execute(elevator::Dispatch d);
  // Runs the lone dispatch `d` of `op` on this thread, if the elevator
  // dispatches `id` at once and the gate allows; nullopt otherwise (the
  // request then stays queued for pump()).
  std::optional<Result<size_t>> try_inline(const Op& op, uint64_t id, uint64_t length);

  asio::any_io_executor ex_;
  asio::thread_pool& pool_;
  const Clock& clock_;
  unsigned depth_;
  elevator::Elevator elevator_;
  std::optional<elevator::EmulatedDisk> disk_;
  elevator::InlineGate gate_;
  std::map<uint64_t, Pending*> pending_;
  uint64_t next_id_ = 1;
  unsigned in_flight_ = 0;
  qos::QosPolicy qos_;
  qos::WindowGate windows_;
  // Job ids as the elevator numbers them; 0 is "no job". Bounded: past
  // kMaxJobs distinct ids, new ones count as no job.
  static constexpr size_t kMaxJobs = 65536;
  std::map<std::string, uint32_t, std::less<>> job_numbers_;
  std::vector<std::string> job_names_{std::string()};
  std::function<void(const Served&)> observer_;
  asio::steady_timer window_timer_;
  bool window_timer_armed_ = false;
};

}  // namespace pvfs
