// The simulator's clock and agenda: actions scheduled at points of virtual
// time, run in time order, ties in the order they were scheduled, so a run
// is a deterministic function of its inputs. Owns no model state; the
// scenarios schedule closures over their own objects. Not thread-safe: one
// simulation per queue.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <vector>

namespace pvfs::sim {

using Nanos = std::chrono::nanoseconds;

class EventQueue {
 public:
  using Action = std::function<void()>;

  // Virtual time: zero at the start, then the time of the event running or
  // last run.
  Nanos now() const { return now_; }

  // Runs `action` at `when`, which must not be in the past (checked).
  void at(Nanos when, Action action);
  // Runs `action` `delay` (>= 0) after now().
  void after(Nanos delay, Action action) { at(now_ + delay, std::move(action)); }

  // Runs the earliest event; false when none is left.
  bool run_next();
  // Runs events until none is left.
  void run() {
    while (run_next()) {
    }
  }

  size_t pending() const { return heap_.size(); }
  // Events run so far.
  uint64_t executed() const { return executed_; }

 private:
  struct Event {
    Nanos when;
    uint64_t seq;  // scheduling order breaks ties
    Action action;
  };
  // Heap order: the earliest (then first scheduled) event on top.
  static bool later(const Event& a, const Event& b) {
    return a.when != b.when ? a.when > b.when : a.seq > b.seq;
  }

  std::vector<Event> heap_;
  Nanos now_{0};
  uint64_t next_seq_ = 0;
  uint64_t executed_ = 0;
};

}  // namespace pvfs::sim
