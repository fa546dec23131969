#pragma once

// Helpers for the log parser tests: run a LogParser over a fixture or inline lines and pick
// events and fields out of the result.

#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "logs/log_event.h"
#include "logs/log_parser.h"

namespace railwatch::logs::testing {

struct Parsed {
  std::vector<LogEvent> events;
  LogParser::Stats stats;

  // Events of `kind`, in emission order.
  std::vector<const LogEvent*> OfKind(std::string_view kind) const;
  // The only event of `kind`; fails the test (and returns an empty event) otherwise.
  const LogEvent& One(std::string_view kind) const;
};

// Parses tests/fixtures/logs/<name> line by line (newlines removed), then Finish().
Parsed ParseFixture(const std::string& name, const Clock& clock = RealClock::Get());

// Parses `lines` as if they were a file named "inline.log".
Parsed ParseLines(const std::vector<std::string>& lines, const Clock& clock = RealClock::Get());

// The field's value, or "<absent>".
std::string F(const LogEvent& e, std::string_view key);

}  // namespace railwatch::logs::testing
