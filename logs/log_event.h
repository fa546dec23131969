#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace railwatch::logs {

// One structured fact parsed from a log: an NCCL communicator init, an IB completion error, a
// PyTorch watchdog timeout, a RAS report, one nccl-tests result row ...
//
// Fields are plain values (numbers as their decimal text, exactly as the log wrote them where
// that is a number) in a stable order, so `railwatch triage --json` and the agent's events
// carry the same keys.
struct LogEvent {
  // Dotted kind, e.g. "nccl.ib_completion_error", "pytorch.watchdog_timeout".
  std::string kind;
  // Where it came from: file name (or "-") and the 1-based number of its first line.
  std::string source;
  int line = 0;
  // From the line's own timestamp where it has one, else 0.
  int64_t time_unix_nano = 0;
  std::vector<std::pair<std::string, std::string>> fields;
  // The line it was parsed from (the first line for a multi-line event), prefixes included.
  std::string raw;

  // Sets (or replaces) a field, keeping first-set order.
  void Set(std::string_view key, std::string value);
  // nullptr when the field is absent.
  const std::string* Get(std::string_view key) const;
  // The field's value, "" when it is absent.
  std::string Value(std::string_view key) const;
};

}  // namespace railwatch::logs
