// The project's one time type (a steady-clock TimePoint) and the Clock the
// drivers (storage and metadata services, their queues and maintainers)
// read it from: the daemons pass real_clock(), in-process tests a
// ManualClock they advance by hand. Policies never hold a Clock: they take
// `now` as an argument. Asio timers a driver waits on still run on the
// steady clock; see each driver's header for what that leaves real.
// Both clocks are safe to read from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace pvfs {

using SteadyClock = std::chrono::steady_clock;
using TimePoint = SteadyClock::time_point;
using Duration = SteadyClock::duration;
using WallTime = std::chrono::system_clock::time_point;

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic time: intervals, deadlines, ages.
  virtual TimePoint now() const = 0;
  // Calendar time, for stamps people read (file times, logs of moves).
  virtual WallTime wall() const = 0;
  // wall() in milliseconds since the Unix epoch, as files and replies carry it.
  int64_t unix_ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(wall().time_since_epoch()).count();
  }
};

// The machine's clocks. Stateless: one instance serves every driver.
class RealClock final : public Clock {
 public:
  TimePoint now() const override { return SteadyClock::now(); }
  WallTime wall() const override { return std::chrono::system_clock::now(); }
};
const Clock& real_clock();

// A clock that moves only when told. Starts at an arbitrary steady time far
// from zero (so `now - 1 h` is still a valid time point) and at a fixed wall
// time; wall() moves with now().
class ManualClock final : public Clock {
 public:
  static constexpr TimePoint kStart{std::chrono::hours(24 * 365)};
  static constexpr WallTime kWallStart{std::chrono::seconds(1'700'000'000)};

  TimePoint now() const override { return TimePoint(Duration(ticks_.load())); }
  WallTime wall() const override {
    return kWallStart + std::chrono::duration_cast<WallTime::duration>(now() - kStart);
  }
  // Moves time forward by `d` (>= 0).
  void advance(Duration d) { ticks_ += d.count(); }

 private:
  std::atomic<Duration::rep> ticks_{kStart.time_since_epoch().count()};
};

}  // namespace pvfs
