#include "shared/log_level.h"

#include <array>
#include <utility>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace pvfs {

Status set_log_level(std::string_view name) {
  using spdlog::level::level_enum;
  static constexpr std::array<std::pair<std::string_view, level_enum>, 6> kLevels = {{
      {"trace", level_enum::trace},
      {"debug", level_enum::debug},
      {"info", level_enum::info},
      {"warn", level_enum::warn},
      {"error", level_enum::err},
      {"off", level_enum::off},
  }};
  for (const auto& [text, level] : kLevels) {
    if (text != name) continue;
    auto logger = spdlog::default_logger();
    std::string_view old = "critical";
    for (const auto& [other, other_level] : kLevels)
      if (other_level == logger->level()) old = other;
    if (level <= level_enum::warn) logger->set_level(level);
    spdlog::warn("log level changed from {} to {} at run time", old, name);
    logger->set_level(level);
    logger->flush();
    return {};
  }
  return Status(Errc::invalid_argument,
                fmt::format("unknown log level '{}': use one of {}", name, kLogLevelNames));
}

}  // namespace pvfs
