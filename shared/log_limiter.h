// A rate limit for log lines that peers can cause at will (failed
// handshakes): at most one line per interval for each reason; the lines
// held back are counted and reported with the reason's next line, or by
// drain() once the interval is over. Tracks at most kMaxReasons reasons
// (others share one). Pure: the caller passes the time and does the
// logging. Not thread-safe: owned by one executor.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace pvfs {

class LogLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr size_t kMaxReasons = 64;

  explicit LogLimiter(Clock::duration interval = std::chrono::seconds(1)) : interval_(interval) {}

  struct Verdict {
    bool log = false;         // log this line now
    uint64_t suppressed = 0;  // lines of this reason held back before it (when log)
  };
  // Called for each event of `reason` at `now` (times never go back).
  Verdict admit(std::string_view reason, Clock::time_point now);

  struct Held {
    std::string reason;
    uint64_t count = 0;       // lines held back since the reason's last line
  };
  // The reasons whose interval has passed with lines held back, each once
  // (their counts start again from zero and the summary counts as the
  // reason's line for the next interval).
  std::vector<Held> drain(Clock::time_point now);
  // Whether any line is held back (a drain() will have something to say).
  bool holding() const { return holding_ > 0; }

 private:
  struct Reason {
    Clock::time_point last{};
    uint64_t held = 0;
  };
  Clock::duration interval_;
  std::map<std::string, Reason, std::less<>> reasons_;
  uint64_t holding_ = 0;
};

}  // namespace pvfs
