#pragma once

// What `railwatch triage` concludes from parsed log events: findings (what failed, where, the
// likely fabric cause, the next commands to run) and context (versions, network, communicators).

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "logs/log_event.h"

namespace railwatch {

struct TriageFinding {
  enum class Level { kFailure, kWarning, kInfo };
  Level level = Level::kInfo;
  std::string kind;        // the event kind it summarises, e.g. "nccl.ib_completion_error"
  std::string title;       // one line: what happened, how often
  std::string first_seen;  // "file:line"
  int64_t first_time_unix_nano = 0;
  int count = 0;  // events behind it
  // Labelled lines, in order: where, peers, result (the return-code chain), evidence ...
  std::vector<std::pair<std::string, std::string>> details;
  std::string cause;              // the likely cause, in words
  std::vector<std::string> next;  // commands to run next, each with a "# why"
};

struct TriageReport {
  std::vector<TriageFinding> findings;  // failures first, then warnings, then information
  std::vector<std::string> context;     // NCCL versions, network in use, communicators ...
};

std::string LevelName(TriageFinding::Level level);

// Groups related events (one IB error repeated on every rank is one finding) and explains them.
TriageReport AnalyzeEvents(const std::vector<logs::LogEvent>& events);

}  // namespace railwatch
