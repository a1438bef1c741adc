// Progress of a long operation (pvfs-ctl fsck, pvfs-bench phases) on
// standard error: on a terminal one line redrawn in place with a bar,
// done/total, rate and ETA; elsewhere a plain line every few seconds and at
// each quarter. ProgressMeter decides what to show and when, with the time
// passed in (pure, unit-tested); Progress writes its lines to a FILE.
// Neither is thread-safe: one owner thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace pvfs {

enum class ProgressUnit {
  items,  // counted things: "1234/5678", "410/s"
  bytes,  // "1.2 GiB/4.0 GiB", "512.0 MiB/s"
};

struct ProgressOptions {
  std::string label;  // what is counted, first on the line ("fsck: files")
  ProgressUnit unit = ProgressUnit::items;
  bool terminal = false;  // redraw one line instead of printing lines
  std::chrono::milliseconds redraw{250};         // terminal: at most this often
  std::chrono::milliseconds plain_every{10000};  // not a terminal: at least this often (and each quarter)
  std::chrono::milliseconds show_after{0};       // nothing before this much time has passed
  unsigned bar_width = 24;
};

using ProgressClock = std::chrono::steady_clock;

// "[######------]": `width` cells filled in proportion to done/total
// (clamped to full; an empty bar when total is 0).
std::string progress_bar(uint64_t done, uint64_t total, unsigned width);
// "123" for items; "0 B", "512 B", "1.5 KiB" ... "2.0 TiB" for bytes.
std::string format_amount(uint64_t amount, ProgressUnit unit);
// "4.2/s", "410/s" for items; "512.0 MiB/s" for bytes.
std::string format_rate(double per_second, ProgressUnit unit);
// "42s", "2m05s", "1h02m" (hours past 99 still as hours).
std::string format_eta(std::chrono::seconds left);
// The line for `done` of `total` (nullopt: unknown, so no bar, percentage
// or ETA) after `elapsed`: with a bar when options.terminal, with the
// percentage otherwise. The rate is done/elapsed; no rate before any time
// has passed, "ETA ?" while nothing is done.
std::string progress_line(const ProgressOptions& options, uint64_t done, std::optional<uint64_t> total,
                          std::chrono::nanoseconds elapsed);

// When to show which line. Call start(), then update() as work is done and
// finish() at the end; each returns the line to show now, if any.
class ProgressMeter {
 public:
  explicit ProgressMeter(ProgressOptions options) : options_(std::move(options)) {}

  // Begins an operation of `total` units (nullopt: unknown) at `now`.
  void start(std::optional<uint64_t> total, ProgressClock::time_point now);
  // The line to show after `done` units at `now`, or nullopt when it is
  // not time yet (terminal: redraw interval; plain: interval or a new quarter).
  std::optional<std::string> update(uint64_t done, ProgressClock::time_point now);
  // The last line, when anything was shown: for a plain output the final
  // count (unless the last line already said it). On a terminal nullopt:
  // the caller wipes the line.
  std::optional<std::string> finish(uint64_t done, ProgressClock::time_point now);
  // Whether a line was shown since start().
  bool shown() const { return shown_; }

 private:
  std::optional<std::string> show(uint64_t done, ProgressClock::time_point now);

  ProgressOptions options_;
  std::optional<uint64_t> total_;
  ProgressClock::time_point start_{}, last_{};
  bool shown_ = false;
  int quarter_ = 0;             // plain: quarters reported so far
  uint64_t last_done_ = 0;
};

// A ProgressMeter writing to `out`: on a terminal "\r", erase to the end of
// the line, the line; otherwise the line and a newline. Disabled: silent.
class Progress {
 public:
  Progress(ProgressOptions options, bool enabled, std::FILE* out = stderr)
      : terminal_(options.terminal), enabled_(enabled), out_(out), meter_(std::move(options)) {}
  // See ProgressMeter; the clock is steady_clock::now().
  void start(std::optional<uint64_t> total);
  void update(uint64_t done);
  // Wipes the terminal line (so what follows starts on a clean line) or
  // prints the final plain line.
  void finish(uint64_t done);

  // Whether standard error is a terminal.
  static bool stderr_is_terminal();

 private:
  void write(const std::string& line);

  bool terminal_;
  bool enabled_;
  std::FILE* out_;
  ProgressMeter meter_;
};

}  // namespace pvfs
