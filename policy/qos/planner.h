// Plans each scheduling period's service windows from the jobs' bounds:
// the U-Shape paper's coordination (Zhang, Davis, Jiang, §3.2.1) and window
// sizing (§3.2.2). A job whose locality gains more from a window of its own
// than the idle waiting costs gets a dedicated window; the rest, and jobs
// without a goal (best effort), share one window; a member of the shared
// window that got less than its bound over a period gets a window of its
// own (§3.2.2) until it needs no more than the shortest window. Sizes
// start inversely proportional to each window's measured throughput, are
// adjusted by T_adjust towards each job's bound, are cut in overload in
// proportion to the time each job has left, record the loss that caused,
// make it up first when there is slack, and leave the rest to best effort.
// Pure: reports in, a plan out; no clock. Driven by the QoS coordinator
// and by pvfs-sim. Not thread-safe: owned by one executor.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "shared/status.h"

namespace pvfs::qos {

using Nanos = std::chrono::nanoseconds;

struct PlannerOptions {
  Nanos period = std::chrono::milliseconds(1000);  // T_period, > 0
  // No window is planned shorter than this (switching costs a seek per
  // server); an active job with a goal gets at least this. In [0, period / 4].
  Nanos min_window = std::chrono::milliseconds(20);
  // true (ushape): §3.2.1 decides between a dedicated and the shared
  // window. false (the `average` baseline): every job with a goal gets a
  // window of its own, as throughput-reservation schedulers do.
  bool share_by_locality = true;
  // true (ushape): overload is cut in proportion to the time each job has
  // left, the loss recorded and made up in later slack (§3.2.2). false (the
  // `average` baseline): the shortage is shared evenly and forgotten, as
  // the constant-throughput scheme of §4.3 and §4.5 does.
  bool track_loss = true;
};

// invalid_argument naming the first bad field.
Status validate(const PlannerOptions& options);

// What the coordinator knows of one job at the end of a period.
struct JobReport {
  std::string job;             // non-empty, unique in a plan() call (checked)
  bool goal = false;           // false: best effort
  // B_required: the bytes per second the job must get over the coming
  // period (goal only, >= 0): the servers' bounds added up (§3.2.2).
  double bound = 0;
  uint64_t bytes = 0;          // bytes served for it in the period just ended, all servers
  // D_ushape: of those, the bytes served in the window it was planned into
  // (its dedicated window, or the shared one); the rest it got in others'
  // windows when their owners had nothing queued.
  uint64_t window_bytes = 0;
  bool active = false;         // it had requests queued or served in the period
  Nanos left{0};               // time to its deadline (goal only); <= 0 when past it
  // §3.2.1's trade: the mean seek a request of this job pays when served
  // among other jobs' requests (what a dedicated window saves), and the
  // mean wait between the completion of one of its requests at a server
  // and the arrival of its next there when it is served alone (what a
  // dedicated window idles).
  Nanos seek_cost{0};
  Nanos idle_cost{0};
};

enum class WindowKind : uint8_t {
  dedicated,    // one job with a goal
  shared,       // the jobs with a goal and no window of their own (Plan::shared_members)
  best_effort,  // the jobs without a goal
};

struct Window {
  WindowKind kind = WindowKind::dedicated;
  std::string job;  // dedicated only
  Nanos length{0};
  auto operator<=>(const Window&) const = default;
};

// Windows in the order they are served from the period's start: the
// dedicated ones by job name, then the shared, then best effort's. Their
// lengths add up to at most the period; the rest, if any, is open to all.
struct Plan {
  Nanos period{0};
  std::vector<Window> windows;
  std::vector<std::string> shared_members;  // sorted
};

// A job as the last plan() left it, for status displays.
struct JobPlan {
  bool dedicated = false;
  Nanos window{0};      // its dedicated window in the plan (0 when shared)
  Nanos loss{0};        // T_loss recorded and not yet made up
  Nanos cut{0};         // T_cut taken from it in this plan (overload)
  double rate = 0;      // bytes/s it got in its window last period; 0 unknown
  // In a window of its own because it fell behind in the shared one
  // (§3.2.2), though its locality would share.
  bool promoted = false;
};

// The plan while `job` is profiled (pvfs-ctl qos profile) at `share_pct`
// of every period: the job gets a dedicated window of that share, placed
// among the dedicated windows by name, and the other jobs' windows keep
// their order and are scaled into the rest of the period, so goals and
// best effort go on at a reduced rate instead of stopping. The job's own
// planned window and its place among the shared members go. `planned`
// may be empty (no period yet); `period` is the period either way.
Plan with_profile(const Plan& planned, std::string_view job, Nanos period, uint32_t share_pct);

class WindowPlanner {
 public:
  // Checks validate(options).
  explicit WindowPlanner(PlannerOptions options);

  // The plan for the next period, from what the period just ended
  // measured. Jobs not in `reports` are forgotten (loss included).
  Plan plan(std::span<const JobReport> reports);

  // The job's state after the last plan(), or nullptr.
  const JobPlan* job(std::string_view job) const;
  // The shared window of the last plan.
  Nanos shared_window() const { return shared_; }
  const PlannerOptions& options() const { return options_; }

 private:
  struct State {
    JobPlan plan;
    bool shared_last = false;  // a member of the last plan's shared window
  };
  PlannerOptions options_;
  std::map<std::string, State, std::less<>> jobs_;
  Nanos shared_{0};
};

}  // namespace pvfs::qos
