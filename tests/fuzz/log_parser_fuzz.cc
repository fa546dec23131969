// libFuzzer target for LogParser: any bytes, split into lines, must parse without a crash, a
// sanitizer report or counters that do not add up. Seed corpus: tests/fixtures/logs.
//
//   scripts/fuzz log_parser_fuzz     (FUZZ_SECONDS=600 for longer; docs/FUZZING.md)

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "logs/log_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A fixed clock keeps runs reproducible (the year of glog timestamps comes from it).
  static const railwatch::FakeClock clock;
  railwatch::logs::LogParser parser("fuzz", clock);
  std::vector<railwatch::logs::LogEvent> events;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  while (start <= input.size()) {
    size_t nl = input.find('\n', start);
    if (nl == std::string_view::npos) nl = input.size();
    parser.Feed(input.substr(start, nl - start), events);
    start = nl + 1;
  }
  parser.Finish(events);
  const railwatch::logs::LogParser::Stats& s = parser.stats();
  if (s.recognized + s.known + s.blank + s.unknown + s.malformed != s.lines) __builtin_trap();
  if (s.events != events.size()) __builtin_trap();
  return 0;
}
