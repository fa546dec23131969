#include "common/logging.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "spdlog/sinks/stdout_sinks.h"

namespace railwatch {

absl::Status InitLogging(absl::string_view program, absl::string_view level) {
  spdlog::level::level_enum lvl = spdlog::level::from_str(std::string(level));
  if (lvl == spdlog::level::off && level != "off") {
    return absl::InvalidArgumentError(absl::StrCat("unknown log level \"", level,
                                                   "\" (use trace, debug, info, warn, error)"));
  }
  auto logger = spdlog::stderr_logger_mt(std::string(program));
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %L %n] %v", spdlog::pattern_time_type::utc);
  logger->set_level(lvl);
  // Logs are few; flush each so that nothing is lost when a process is killed.
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
  return absl::OkStatus();
}

}  // namespace railwatch
