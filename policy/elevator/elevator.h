// Orders one storage server's pending I/O requests: the object-based
// round-robin scheduler of Qian et al. (the Lustre NRS) with its dynamic and
// mandatory deadlines, adjacent requests merged into one backend operation,
// background (maintainer) traffic only when no client request waits, and a
// plain FCFS policy for comparison. Pure: events and `now` in, decisions out
// as values; no I/O, no clock of its own. Driven by the storage service and
// by pvfs-sim. Not thread-safe: owned by one executor.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "policy/elevator/deadline_estimator.h"
#include "policy/elevator/histogram.h"
#include "shared/ids.h"
#include "shared/status.h"

namespace pvfs::elevator {

// Service class of a request.
//  normal:     client I/O; gets a dynamic deadline.
//  urgent:     client I/O flagged urgent (fsync, close-flush, O_SYNC, ...);
//              carries a maximum service time (mandatory deadline).
//  background: maintainer pull-back traffic; no deadline, never urgent,
//              served only while no normal or urgent request is queued
//              (or when a later client request overlapping it must wait
//              for it).
enum class Class : uint8_t { normal, urgent, background };
inline constexpr size_t kClasses = 3;
std::string_view class_name(Class cls);

enum class Policy : uint8_t { fcfs, obrr };
// Every policy, in the order error messages list them.
inline constexpr std::array<Policy, 2> kPolicies = {Policy::obrr, Policy::fcfs};
// "fcfs" / "obrr", as in the config key `elevator.policy` and pvfs-ctl.
std::string_view policy_name(Policy policy);
// Inverse of policy_name(); nullopt for any other text.
std::optional<Policy> parse_policy(std::string_view text);

// What an object queue's quantum per round counts.
enum class QuantumUnit : uint8_t { requests, bytes };
inline constexpr std::array<QuantumUnit, 2> kQuantumUnits = {QuantumUnit::requests, QuantumUnit::bytes};
// "requests" / "bytes", as in the config key `elevator.quantum_unit`.
std::string_view quantum_unit_name(QuantumUnit unit);
// Inverse of quantum_unit_name(); nullopt for any other text.
std::optional<QuantumUnit> parse_quantum_unit(std::string_view text);

// Why dispatch() chose an operation.
enum class Reason : uint8_t {
  round_robin,         // OBRR order (or background traffic under obrr)
  arrival_order,       // FCFS order
  dynamic_deadline,    // a normal request's dynamic deadline expired
  mandatory_deadline,  // urgent requests had to start to meet their maximum service time
};

// One I/O request as the storage service receives it.
struct Request {
  uint64_t id = 0;  // chosen by the caller; unique among queued and in-service requests
  ObjectId object;
  bool write = false;
  uint64_t offset = 0;
  uint64_t length = 0;  // bytes, > 0
  Class cls = Class::normal;
  Nanos arrival{0};      // stamped by enqueue() with its `now`; input ignored
  Nanos max_service{0};  // urgent only: the client's maximum service time, > 0
  // The job it is for, as the driver numbers jobs (0: none known). Only a
  // JobFilter reads it; requests of different jobs never merge.
  uint32_t job = 0;
};

// Whether a job's normal requests may be dispatched now (QoS service
// windows, policy/qos): yes; only when no request of a `yes` job can be
// dispatched; or not at all.
enum class Admit : uint8_t { yes, if_idle, no };
using JobFilter = std::function<Admit(uint32_t job)>;

// One backend operation: requests of one object and one direction whose
// byte ranges are adjacent, to be done as a single (vectored) I/O of
// [offset, offset + length). `ids` are in offset order; request k's bytes
// are at its own offset within that range.
struct Dispatch {
  ObjectId object;
  bool write = false;
  uint64_t offset = 0;
  uint64_t length = 0;
  std::vector<uint64_t> ids;
  Reason reason = Reason::round_robin;
};

struct ElevatorOptions {
  Policy policy = Policy::obrr;
  // Service per object queue per round; the paper's experiment uses 8
  // requests. In bytes, a round takes requests while they fit, and always
  // at least one.
  QuantumUnit quantum_unit = QuantumUnit::requests;
  uint64_t quantum = 8;  // > 0
  // Largest merged operation; a single larger request is still dispatched
  // alone.
  uint64_t max_merge_bytes = uint64_t{4} << 20;  // > 0
  // λ of the dynamic deadline, >= 1.
  double lambda = DeadlineEstimator::kDefaultLambda;
  // Time kept in reserve before urgent requests must start: one operation
  // the elevator may dispatch instead (it cannot preempt it), plus headroom
  // for calibration error and the driver's own delays. nullopt: twice the
  // bandwidth table's estimate for a max_merge_bytes operation, for a
  // driver that keeps one operation on the disk at a time; a driver with
  // more in flight needs more. >= 0.
  std::optional<Nanos> urgent_margin;
};

// ok, or invalid_argument naming the first bad field.
Status validate(const ElevatorOptions& options);

struct ClassStats {
  uint64_t queued = 0;      // waiting, not yet dispatched
  uint64_t in_service = 0;  // dispatched, not yet completed
  uint64_t completed = 0;
  Nanos p50{0};  // service time (arrival to complete()), see LatencyHistogram
  Nanos p99{0};
};

// A snapshot for pvfs-ctl.
struct ElevatorStats {
  Policy policy = Policy::obrr;
  std::array<ClassStats, kClasses> by_class{};  // indexed by Class
  uint64_t objects_queued = 0;  // distinct objects with a queued request
  uint64_t dispatches = 0;
  // Dispatches not starting where the previous one ended on the same
  // object (the first dispatch counts as a seek).
  uint64_t seeks = 0;
  // Dispatches made for a deadline: a normal request's dynamic deadline
  // had expired, or urgent requests were due (see Elevator::dispatch()).
  uint64_t dynamic_expiries = 0;
  uint64_t mandatory_expiries = 0;
  Nanos expiration{0};  // the dynamic expiration a request would get now
  std::array<uint64_t, SizeHistogram::kBuckets> dispatched_sizes{};  // 2^k buckets, after merging
};

class Elevator {
 public:
  // Checks validate(options) (a failure is a bug: validate configuration
  // first). `bandwidth` is the backend's calibration for dynamic deadlines.
  Elevator(ElevatorOptions options, BandwidthTable bandwidth);

  // Queues `request`, arriving at `now`. A normal request gets its dynamic
  // deadline now (its own bytes counted as outstanding); an urgent one the
  // mandatory deadline now + max_service. invalid_argument, and nothing
  // queued, for a zero length, a range past 2^64, an urgent request
  // without max_service, or an id already queued or in service.
  Status enqueue(const Request& request, Nanos now);

  // The next backend operation, or nullopt when nothing can be dispatched
  // now: nothing is queued, or every queued request waits for an
  // overlapping earlier one still in service. The returned requests are in
  // service until complete().
  //
  // obrr, in this order:
  //  1. Urgent requests, when due: if, served one after another in deadline
  //     order after one more operation (urgent_margin), each costing its
  //     length at the calibrated bandwidth, one of them would finish after
  //     its mandatory deadline. So a burst starts early enough for its last
  //     request, where the paper (§3.2) waits for the first to expire. A due
  //     urgent request merges only with adjacent urgent ones.
  //  2. The normal request with the earliest expired dynamic deadline.
  //  3. Round-robin order: the head object queue gets a quantum, served
  //     upward in offset order from where it last stopped, adjacent
  //     requests merged up to max_merge_bytes.
  // fcfs: arrival order, one request per operation, deadlines ignored (the
  // paper's baseline, and what a server without an elevator does).
  // Both: background requests only when no normal or urgent one is queued;
  // and a request never overtakes an earlier-arrived one on the same object
  // whose range overlaps it when either is a write: that one goes first.
  std::optional<Dispatch> dispatch(Nanos now);
  // The same, with normal requests admitted per job by `filter` (QoS
  // windows): urgent requests that are due go first whatever their job
  // (their deadline is mandatory); then, among requests of jobs admitted
  // `yes`, expired dynamic deadlines and the policy's order; then the same
  // among jobs admitted `if_idle`; a job admitted `no` waits, its dynamic
  // deadline too. Background requests are filtered like normal ones and
  // still go only when no normal or urgent request is queued. A request a
  // dispatched one must not overtake (overlapping, earlier) goes first
  // whatever its job. nullopt also when every queued request waits for its
  // window.
  std::optional<Dispatch> dispatch(Nanos now, const JobFilter& filter);

  // The requests `ids` (all from dispatch()es, each once) finished at
  // `now`, successfully or not: records their service times, stops
  // counting their bytes as outstanding and lets requests overlapping them
  // go. An id not in service is a bug (checked).
  void complete(std::span<const uint64_t> ids, Nanos now);

  // Switches policy; queued requests, deadlines and rounds are kept.
  void set_policy(Policy policy) { options_.policy = policy; }
  Policy policy() const { return options_.policy; }

  // Requests waiting, in total and of one class; requests in service.
  size_t queued() const { return entries_.size() - in_service_total_; }
  size_t queued(Class cls) const { return queued_[index(cls)]; }
  size_t in_service() const { return in_service_total_; }
  // The deadline of a queued normal or urgent request; nullopt for a
  // background request or an id not queued.
  std::optional<Nanos> deadline_of(uint64_t id) const;

  ElevatorStats stats() const;
  const DeadlineEstimator& estimator() const { return estimator_; }
  // The urgent margin in effect (see ElevatorOptions::urgent_margin).
  Nanos urgent_margin() const { return urgent_margin_; }

 private:
  static constexpr int kForeground = 0;  // normal and urgent
  static constexpr int kBackground = 1;
  using Span = std::pair<uint64_t, uint64_t>;     // (offset, seq)
  using Timed = std::pair<Nanos, uint64_t>;       // (deadline, seq)

  struct Entry {
    Request request;
    std::optional<Nanos> deadline;
    bool in_service = false;
  };
  // An object queue: one direction of one object, in one tier (the paper's
  // Figure 4 puts read and write queues in the global FIFO separately).
  struct QueueKey {
    ObjectId object;
    bool write = false;
    int tier = kForeground;
    uint32_t job = 0;
    auto operator<=>(const QueueKey&) const = default;
  };
  struct Queue {
    std::set<Span> by_offset;  // queued requests only
    uint64_t position = 0;     // where the last dispatch from here ended
    bool scheduled = false;    // in the round-robin FIFO or the current turn
  };
  struct Turn {
    QueueKey key;
    uint64_t remaining = 0;  // quantum left
  };
  // Every queued or in-service request of an object, for conflict checks.
  struct ObjectSpans {
    std::set<Span> reads;
    std::set<Span> writes;
    uint64_t max_length = 0;
  };
  struct Limit {
    uint64_t max_requests = UINT64_MAX;
    uint64_t max_bytes = UINT64_MAX;  // a first request larger is still taken
    bool urgent_only = false;         // merge only with urgent requests
  };
  struct Position {
    ObjectId object;
    uint64_t end = 0;
  };

  static size_t index(Class cls) { return static_cast<size_t>(cls); }
  static int tier_of(Class cls) { return cls == Class::background ? kBackground : kForeground; }
  static QueueKey key_of(const Request& r) { return {r.object, r.write, tier_of(r.cls), r.job}; }
  // Whether `filter` lets job `job` go in pass `pass` (no filter: all in `yes`).
  static bool passes(const JobFilter* filter, uint32_t job, Admit pass) {
    return filter ? (*filter)(job) == pass : pass == Admit::yes;
  }
  std::optional<Dispatch> dispatch_filtered(Nanos now, const JobFilter* filter);

  std::optional<uint64_t> earliest_conflict(uint64_t seq) const;
  std::optional<uint64_t> resolve(uint64_t seq) const;
  std::optional<Dispatch> serve_urgent(Nanos now);
  std::optional<Dispatch> serve_expired(Nanos now, const JobFilter* filter, Admit pass);
  std::optional<Dispatch> serve_round(int tier, const JobFilter* filter, Admit pass);
  std::optional<Dispatch> serve_arrival(int tier, const JobFilter* filter, Admit pass);
  std::optional<uint64_t> follower(uint64_t seq) const;
  Dispatch take(uint64_t first, Reason reason, Limit limit);
  void end_turn(int tier);

  ElevatorOptions options_;
  DeadlineEstimator estimator_;
  Nanos urgent_margin_;
  uint64_t next_seq_ = 0;
  std::map<uint64_t, Entry> entries_;    // by seq (arrival order): queued and in service
  std::map<uint64_t, uint64_t> seq_of_;  // request id -> seq
  std::map<QueueKey, Queue> queues_;
  std::array<std::deque<QueueKey>, 2> round_robin_;  // the paper's global FIFO Q, per tier
  std::array<std::optional<Turn>, 2> turn_;          // the current work queue, per tier
  std::array<std::set<uint64_t>, 2> arrival_;        // queued seqs, per tier
  std::set<Timed> dynamic_;                          // normal requests
  std::set<Timed> mandatory_;                        // urgent requests
  std::map<ObjectId, ObjectSpans> spans_;
  std::optional<Position> last_;

  std::array<uint64_t, kClasses> queued_{};
  std::array<uint64_t, kClasses> in_service_{};
  size_t in_service_total_ = 0;
  std::array<LatencyHistogram, kClasses> service_time_;
  SizeHistogram sizes_;
  uint64_t dispatches_ = 0;
  uint64_t seeks_ = 0;
  uint64_t dynamic_expiries_ = 0;
  uint64_t mandatory_expiries_ = 0;
};

}  // namespace pvfs::elevator
