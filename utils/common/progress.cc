// Progress lines: the text (pure), when to show it (ProgressMeter, time
// passed in) and writing it to a FILE (Progress). See progress.h.
#include "utils/common/progress.h"

#include <unistd.h>

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

namespace pvfs {

std::string progress_bar(uint64_t done, uint64_t total, unsigned width) {
  const uint64_t filled =
      total == 0 ? 0
                 : static_cast<uint64_t>(static_cast<double>(std::min(done, total)) / static_cast<double>(total) *
                                         width);
  return "[" + std::string(filled, '#') + std::string(width - filled, '-') + "]";
}

std::string format_amount(uint64_t amount, ProgressUnit unit) {
  if (unit == ProgressUnit::items) return fmt::format("{}", amount);
  if (amount < 1024) return fmt::format("{} B", amount);
  static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(amount) / 1024;
  size_t u = 0;
  while (value >= 1024 && u + 1 < std::size(kUnits)) {
    value /= 1024;
    ++u;
  }
  return fmt::format("{:.1f} {}", value, kUnits[u]);
}

std::string format_rate(double per_second, ProgressUnit unit) {
  if (unit == ProgressUnit::bytes) return fmt::format("{:.1f} MiB/s", per_second / (1024.0 * 1024.0));
  return per_second < 10 ? fmt::format("{:.1f}/s", per_second) : fmt::format("{:.0f}/s", per_second);
}

std::string format_eta(std::chrono::seconds left) {
  const int64_t s = std::max<int64_t>(0, left.count());
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
}

std::string progress_line(const ProgressOptions& options, uint64_t done, std::optional<uint64_t> total,
                          std::chrono::nanoseconds elapsed) {
  std::string line = options.label;
  if (total && options.terminal) line += " " + progress_bar(done, *total, options.bar_width);
  line += " " + format_amount(done, options.unit);
  if (total) {
    line += "/" + format_amount(*total, options.unit);
    if (!options.terminal) {
      const double percent = *total ? 100.0 * static_cast<double>(std::min(done, *total)) / static_cast<double>(*total)
                                    : 100.0;
      line += fmt::format(" ({:.0f}%)", percent);
    }
  }
  const double seconds = std::chrono::duration<double>(elapsed).count();
  if (seconds <= 0) return line;
  const double rate = static_cast<double>(done) / seconds;
  line += "  " + format_rate(rate, options.unit);
  if (total) {
    if (done >= *total) line += "  ETA 0s";
    else if (rate > 0)
      line += "  ETA " + format_eta(std::chrono::seconds(
                             static_cast<int64_t>(static_cast<double>(*total - done) / rate + 0.5)));
    else line += "  ETA ?";
  }
  return line;
}

void ProgressMeter::start(std::optional<uint64_t> total, ProgressClock::time_point now) {
  total_ = total;
  start_ = last_ = now;
  shown_ = false;
  quarter_ = 0;
  last_done_ = 0;
}

std::optional<std::string> ProgressMeter::show(uint64_t done, ProgressClock::time_point now) {
  shown_ = true;
  last_ = now;
  last_done_ = done;
  return progress_line(options_, done, total_, now - start_);
}

std::optional<std::string> ProgressMeter::update(uint64_t done, ProgressClock::time_point now) {
  if (now - start_ < options_.show_after) return std::nullopt;
  if (options_.terminal) {
    if (shown_ && now - last_ < options_.redraw) return std::nullopt;
    return show(done, now);
  }
  // Plain: each quarter once (25, 50, 75, 100 %), and a line at least every
  // plain_every in between.
  int quarter = quarter_;
  if (total_ && *total_) quarter = static_cast<int>(std::min<uint64_t>(done, *total_) * 4 / *total_);
  const bool new_quarter = quarter > quarter_;
  quarter_ = std::max(quarter_, quarter);
  if (new_quarter || now - last_ >= options_.plain_every) return show(done, now);
  return std::nullopt;
}

std::optional<std::string> ProgressMeter::finish(uint64_t done, ProgressClock::time_point now) {
  if (!shown_ || options_.terminal) return std::nullopt;
  if (last_done_ == done && (!total_ || done >= *total_)) return std::nullopt;
  return show(done, now);
}

void Progress::start(std::optional<uint64_t> total) { meter_.start(total, ProgressClock::now()); }

void Progress::update(uint64_t done) {
  if (!enabled_) return;
  if (auto line = meter_.update(done, ProgressClock::now())) write(*line);
}

void Progress::finish(uint64_t done) {
  if (!enabled_) return;
  const bool shown = meter_.shown();
  if (auto line = meter_.finish(done, ProgressClock::now())) write(*line);
  if (terminal_ && shown) {
    std::fputs("\r\033[K", out_);
    std::fflush(out_);
  }
}

void Progress::write(const std::string& line) {
  if (terminal_) std::fprintf(out_, "\r\033[K%s", line.c_str());
  else std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

bool Progress::stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

}  // namespace pvfs
