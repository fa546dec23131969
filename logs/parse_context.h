#pragma once

// What the format parsers share inside one LogParser: the line being parsed (with launcher
// prefixes already stripped) and a context that builds events and records problems.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "common/clock.h"
#include "logs/log_event.h"
#include "logs/log_parser.h"

namespace railwatch::logs::internal {

struct Line {
  absl::string_view raw;   // as fed (cut at kMaxLineBytes)
  absl::string_view text;  // launcher prefixes and leading timestamps removed
  int number = 0;
  int64_t time_unix_nano = 0;      // from a leading timestamp, else 0
  absl::string_view mpi_rank;      // Open MPI --tag-output "[1,3]<stdout>:" -> "3"
  absl::string_view launcher_tag;  // "[155] ", "[default0]:", srun "12: "
  absl::string_view global_rank;   // torch "[rank3]:" -> "3"
};

// How a format parser took a line.
enum class Outcome {
  kNotMine,    // not this format: try the next parser
  kEvent,      // contributed to an event (now or to one still pending)
  kKnown,      // this format, but nothing worth an event
  kMalformed,  // looked like this format but did not parse; Context::Problem says why
};

// Longest line parsed; the rest of a longer line is ignored (and counted).
inline constexpr size_t kMaxLineBytes = 64 * 1024;
// LogEvent::raw keeps at most this much of the line.
inline constexpr size_t kMaxRawBytes = 4096;
// Stats::problems keeps the first this many problems.
inline constexpr size_t kMaxProblems = 32;

class Context {
 public:
  Context(std::string source, const Clock& clock) : source_(std::move(source)), clock_(clock) {}

  // A new event of `kind` anchored at `line`: source, line number, time and raw text set.
  LogEvent Begin(absl::string_view kind, const Line& line) const {
    LogEvent e;
    e.kind = std::string(kind);
    e.source = source_;
    e.line = line.number;
    e.time_unix_nano = line.time_unix_nano;
    e.raw = std::string(line.raw.substr(0, kMaxRawBytes));
    return e;
  }

  // Adds who printed the line, as the launcher told us (appended last, so the format's own
  // fields come first).
  static void AddLauncher(LogEvent& e, const Line& line) {
    if (!line.mpi_rank.empty()) e.Set("mpi_rank", std::string(line.mpi_rank));
    if (!line.launcher_tag.empty()) e.Set("launcher_tag", std::string(line.launcher_tag));
  }

  void Emit(LogEvent e) {
    ++stats_.events;
    out_->push_back(std::move(e));
  }

  void Problem(int line, std::string reason) {
    if (stats_.problems.size() < kMaxProblems) {
      stats_.problems.push_back({line, std::move(reason)});
    }
  }

  void set_out(std::vector<LogEvent>* out) { out_ = out; }
  LogParser::Stats& stats() { return stats_; }
  const std::string& source() const { return source_; }
  const Clock& clock() const { return clock_; }

 private:
  std::string source_;
  const Clock& clock_;
  std::vector<LogEvent>* out_ = nullptr;
  LogParser::Stats stats_;
};

// Sets `key` to `value` when `value` is not empty.
inline void SetIf(LogEvent& e, absl::string_view key, absl::string_view value) {
  if (!value.empty()) e.Set(std::string_view(key.data(), key.size()), std::string(value));
}

inline void Set(LogEvent& e, absl::string_view key, absl::string_view value) {
  e.Set(std::string_view(key.data(), key.size()), std::string(value));
}

}  // namespace railwatch::logs::internal
