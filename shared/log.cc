#include "shared/log.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace pvfs {

namespace {

// Whether stderr is the systemd journal's stream: systemd sets
// JOURNAL_STREAM=<device>:<inode> for the stream it connects (sd-daemon(3)).
bool stderr_is_journal() {
  const char* env = std::getenv("JOURNAL_STREAM");
  if (!env) return false;
  unsigned long long dev = 0, ino = 0;
  if (std::sscanf(env, "%llu:%llu", &dev, &ino) != 2) return false;
  struct stat st {};
  if (fstat(2, &st) != 0) return false;
  return st.st_dev == dev && st.st_ino == ino;
}

// "<N>" with the syslog priority of the message's level, which journald
// reads from the start of a line (sd-daemon(3)): so `journalctl -p warning`
// and colours work for the daemons' own lines.
class JournalPriority : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    static constexpr const char* kPriority[] = {"<7>", "<7>", "<6>", "<4>", "<3>", "<2>", "<6>"};
    const auto level = static_cast<size_t>(msg.level);
    const char* p = kPriority[level < std::size(kPriority) ? level : 6];
    dest.append(p, p + 3);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<JournalPriority>();
  }
};

}  // namespace

void init_logging(std::string_view name, bool verbose) {
  auto logger = spdlog::stderr_logger_mt(std::string(name));
  if (stderr_is_journal()) {
    // The journal stamps time and unit itself.
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<JournalPriority>('*').set_pattern("%*%n %l: %v");
    logger->set_formatter(std::move(formatter));
  } else {
    logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %n %l: %v");
  }
  logger->set_level(verbose ? spdlog::level::debug : spdlog::level::info);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

}  // namespace pvfs
