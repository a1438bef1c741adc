// Which jobs a storage server may serve now, from the plan of the current
// scheduling period (U-Shape paper, Zhang, Davis, Jiang, §3.2.1): in a
// job's dedicated window only that job's requests; in the shared window
// only its members' (a job served there while a member's next request is
// on its way costs the member two seeks); in best effort's window the jobs
// without a goal first, the others when none of those waits; outside any
// window (no plan yet, the plan's unplanned tail, or a
// period the coordinator has not planned: it is late or gone) everyone.
// Windows line up across servers because every server is handed the same
// plan and period start; that assumes their clocks agree (NTP or chrony),
// and a skew of s shifts each window by s at that server. Urgent requests
// with a mandatory deadline are not the gate's business: the elevator
// serves them first whatever the window. Pure; not thread-safe: owned by
// the elevator's executor.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "policy/qos/planner.h"

namespace pvfs::qos {

// The `[qos] policy` of pvfs.toml(5). off: no windows, the elevator as
// without QoS. average: constant bounds (the paper's baseline). ushape:
// bounds from each job's model. A storage server only enforces the plans
// it is handed; the two differ in how the coordinator plans.
enum class QosPolicy : uint8_t { off, average, ushape };
inline constexpr std::array<QosPolicy, 3> kQosPolicies = {QosPolicy::off, QosPolicy::average, QosPolicy::ushape};
std::string_view qos_policy_name(QosPolicy policy);
// Inverse of qos_policy_name(); nullopt for any other text.
std::optional<QosPolicy> parse_qos_policy(std::string_view text);

enum class Admission : uint8_t {
  yes,      // serve it
  if_idle,  // serve it only when no request admitted `yes` is queued
  no,       // wait for a later window
};

class WindowGate {
 public:
  // Installs `plan` for periods starting at `start`: the plan repeats for
  // `repeat` periods (>= 1) after which the gate opens to everyone until
  // the next install(). Replaces the plan in force.
  void install(Plan plan, Nanos start, int repeat = 1);
  // Back to open: every job admitted (policy off).
  void clear();

  struct Current {
    enum class Kind : uint8_t { open, dedicated, shared, best_effort } kind = Kind::open;
    std::string job;  // the window's owner (dedicated only)
    Nanos ends{0};    // when this window ends (open: Nanos::max() when no plan is in force later)
  };
  // The window in force at `now`.
  Current current(Nanos now) const;

  // Whether a request of `job` may be dispatched at `now`.
  Admission admit(std::string_view job, Nanos now) const;

  bool installed() const { return plan_.has_value(); }

  // How much of [from, to) lies in `job`'s own windows: its dedicated
  // window, or the shared one when it is a member. An operation that
  // started in its job's window and ran on into the next owner's counts
  // for its job's window only in the part that fell there, so the rate a
  // job gets in its window (§3.2.2's D_ushape / T_window) is not inflated
  // by windows shorter than one of its operations.
  Nanos own_time(std::string_view job, Nanos from, Nanos to) const;
  // Of `length` bytes served over [from, to), the part that counts for
  // `job`'s own windows: in proportion to own_time(); for an instant
  // (to <= from), all or nothing by the window in force at `from`. What
  // the storage servers and pvfs-sim report as a job's window bytes.
  uint64_t own_bytes(std::string_view job, uint64_t length, Nanos from, Nanos to) const;

 private:
  bool has_own_window(std::string_view job) const;
  bool shared_member(std::string_view job) const;

  std::optional<Plan> plan_;
  Nanos start_{0};
  int repeat_ = 1;
};

}  // namespace pvfs::qos
