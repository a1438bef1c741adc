// When a job with a QoS goal is done: the coordinator, once a period,
// tells this what it has counted of the job, and it decides whether the
// job has served the bytes it declared and, if so, when it finished (so
// that its elapsed time stops there and a goal it met stays met).
//
// Done when the count reaches the declared bytes; or when it reaches
// kNearlyAll of them and the job then does no I/O for kIdlePeriods
// periods: a few bytes served before the storage servers learned of the
// goal (a job started just as the goal or the policy was set) are never
// counted, and without this such a job would never be done. Its finish
// is then the end of its last period with I/O, and I/O after that makes
// it not done again. Pure: no clock, no I/O. Not thread-safe.
#pragma once

#include <cstdint>

namespace pvfs::qos {

class JobFinish {
 public:
  static constexpr double kNearlyAll = 0.99;
  static constexpr int kIdlePeriods = 2;

  // One period's end, `elapsed_ms` after the job's start: `counted` bytes
  // of `declared` (0: unknown, never done) so far, `active` whether the
  // job did I/O this period.
  void period(uint64_t declared, uint64_t counted, bool active, uint64_t elapsed_ms) {
    if (declared == 0) return;
    if (active) {
      last_active_ms_ = elapsed_ms;
      idle_periods_ = 0;
      if (done_ms_ > 0 && !all_) done_ms_ = 0;  // it was not done after all
    } else {
      ++idle_periods_;
    }
    if (done_ms_ > 0) return;
    if (counted >= declared) {
      done_ms_ = elapsed_ms > 0 ? elapsed_ms : 1;
      all_ = true;
    } else if (static_cast<double>(counted) >= kNearlyAll * static_cast<double>(declared) &&
               idle_periods_ >= kIdlePeriods && last_active_ms_ > 0) {
      done_ms_ = last_active_ms_;
    }
  }

  // When it finished, since its start; 0: not done.
  uint64_t done_ms() const { return done_ms_; }

 private:
  uint64_t done_ms_ = 0;
  bool all_ = false;  // done by the full count: later I/O does not undo it
  uint64_t last_active_ms_ = 0;
  int idle_periods_ = 0;
};

}  // namespace pvfs::qos
