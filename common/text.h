#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace railwatch {

// Reads a whole (small) file; the error names the path.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// Parses the first whitespace-delimited token as an unsigned decimal; nullopt for anything
// else ("N/A (no PMA)", empty, overflow).
std::optional<uint64_t> ParseCounterText(absl::string_view text);

// First line without trailing whitespace.
absl::string_view FirstLine(absl::string_view text);

// Prometheus-style durations: 250ms, 1s, 5m, 1h30m, 2d, 1w.
absl::StatusOr<absl::Duration> ParseDuration(absl::string_view text);

// The shortest of the same forms: 1m30s, 250ms, 2h.
std::string HumanDuration(absl::Duration d);

// RFC 3339 in UTC with milliseconds.
std::string FormatTime(int64_t unix_nanos);

}  // namespace railwatch
