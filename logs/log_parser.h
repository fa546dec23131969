#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

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
  };

  explicit LogParser(std::string source);
  ~LogParser();
  LogParser(LogParser&&) noexcept;
  LogParser& operator=(LogParser&&) noexcept;

  // Appends the events that are complete after this line to `out`.
  void Feed(std::string_view line, std::vector<LogEvent>& out);
  // End of input: emits whatever is still pending.
  void Finish(std::vector<LogEvent>& out);

  const Stats& stats() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace railwatch::logs
