#include "shared/log.h"

#include <spdlog/sinks/stdout_sinks.h>

namespace pvfs {

void init_logging(std::string_view name, bool verbose) {
  auto logger = spdlog::stderr_logger_mt(std::string(name));
  logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %n %l: %v");
  logger->set_level(verbose ? spdlog::level::debug : spdlog::level::info);
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

}  // namespace pvfs
