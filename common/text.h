#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace railwatch {

// "line:column" (both from 1) of byte `offset` of `text`; past the end: the end.
std::string TextPosition(std::string_view text, size_t offset);

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

// Edits between two words, a swap of two neighbours counting as one (optimal string
// alignment).
size_t EditDistance(absl::string_view a, absl::string_view b);

// The known word nearest `word` when `word` looks like a typo of it (one letter off in a word
// of up to 3 letters, else up to a third of the word, at least 2); "" when none is that close.
// What "did you mean" suggests for a misspelt key or name.
std::string ClosestWord(absl::string_view word, const std::vector<std::string>& known);

}  // namespace railwatch
