#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "logs/log_event.h"

namespace railwatch::logs {

// Streaming parser for the logs an engineer pastes at 3 AM and the agent tails: NCCL_DEBUG
// output (2.5 .. 2.27, with launcher prefixes), PyTorch ProcessGroupNCCL watchdog errors, NCCL
// RAS status reports and nccl-tests result tables, all possibly interleaved in one file.
//
// Lines are fed one at a time, without their newline; multi-line constructs (return-code
// chains, RAS reports, nccl-tests tables) are emitted when they end, or at Finish(). A line
// that is not understood is counted and skipped: no input is fatal.
class LogParser {
 public:
  struct Stats {
    uint64_t lines = 0;
    // Lines that contributed to some event.
    uint64_t recognized = 0;
    // Lines that looked like one of the formats (an NCCL prefix, a table row) but did not parse.
    uint64_t malformed = 0;
    // Lines of a known format that carry nothing worth an event (most NCCL INFO chatter,
    // table captions, RAS underlines).
    uint64_t known = 0;
    // Empty or whitespace-only lines (after launcher prefixes).
    uint64_t blank = 0;
    // Lines no parser understood: skipped.
    uint64_t unknown = 0;
    // Lines longer than the parser reads (the rest of such a line is ignored).
    uint64_t truncated = 0;
    uint64_t events = 0;

    struct Problem {
      int line = 0;
      std::string reason;
    };
    // The first few malformed lines and why, for "file:line: reason" messages.
    std::vector<Problem> problems;

    // Lines read but not turned into anything: unknown + malformed.
    uint64_t skipped() const { return unknown + malformed; }
  };

  explicit LogParser(std::string source);
  // `clock` supplies the year for timestamps that have none (glog's "E0321 02:07:08"); it must
  // outlive the parser.
  LogParser(std::string source, const Clock& clock);
  ~LogParser();
  LogParser(LogParser&&) noexcept;
  LogParser& operator=(LogParser&&) noexcept;

  // Appends the events that are complete after this line to `out`.
  void Feed(std::string_view line, std::vector<LogEvent>& out);
  // End of input: emits whatever is still pending.
  void Finish(std::vector<LogEvent>& out);

  const Stats& stats() const;

  // Number given to the next line fed (1 by default): a tailer that resumes a file mid-way
  // keeps line numbers true to the file.
  void SetNextLineNumber(int line);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace railwatch::logs
