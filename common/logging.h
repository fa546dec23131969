#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "spdlog/spdlog.h"

// Debian's Abseil has its own string_view (Status::message() returns one): let fmt print it.
template <>
struct fmt::formatter<absl::string_view> : fmt::formatter<fmt::string_view> {
  template <typename Context>
  auto format(absl::string_view s, Context& ctx) const {
    return fmt::formatter<fmt::string_view>::format(fmt::string_view(s.data(), s.size()), ctx);
  }
};

namespace railwatch {

// Sets up the process-wide logger on stderr: "2026-11-21T10:00:00.123Z I railwatchd] ...".
// `level` is one of trace, debug, info, warn, error.
absl::Status InitLogging(absl::string_view program, absl::string_view level);

}  // namespace railwatch
