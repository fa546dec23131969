// libFuzzer target for KernelMessageParser (logs/kernel_messages.h): any bytes, as pasted
// lines and as one /dev/kmsg record, must parse without a crash, a sanitizer report or counts
// that do not add up. Seed corpus: tests/fixtures/kmsg.
//
//   scripts/fuzz kernel_messages_fuzz     (FUZZ_SECONDS=600 for longer; docs/FUZZING.md)

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "logs/kernel_messages.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const railwatch::FakeClock clock;
  railwatch::logs::KernelMessageParser parser("fuzz", clock);
  std::vector<railwatch::logs::LogEvent> events;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  int line = 0;
  while (start <= input.size()) {
    size_t nl = input.find('\n', start);
    if (nl == std::string_view::npos) nl = input.size();
    parser.FeedLine(input.substr(start, nl - start), ++line, events);
    start = nl + 1;
  }
  // The same bytes as a record of /dev/kmsg (the collector's path).
  std::optional<railwatch::logs::KmsgRecord> record =
      railwatch::logs::ParseKmsgRecord(absl::string_view(input.data(), input.size()));
  if (record.has_value()) parser.FeedRecord(*record, 1, events);
  parser.Flush(events);
  const railwatch::logs::KernelMessageParser::Stats& s = parser.stats();
  if (s.recognized + s.known + s.blank + s.unknown + s.malformed != s.lines) __builtin_trap();
  if (s.events != events.size()) __builtin_trap();
  for (const railwatch::logs::LogEvent& e : events) {
    if (e.kind.rfind("kernel.", 0) != 0) __builtin_trap();
  }
  return 0;
}
