// libFuzzer target for the `rdma` tool output parser (collectors/rdma_tool_output.h): any bytes
// as a whole paste, and line by line with other text around it, must parse without a crash, a
// sanitizer report or output that does not hold together (problems and records that name a line
// of the input, bounded problems, canonical names from the vocabulary). Seeds:
// tests/fixtures/rdma (the real-world samples).
//
//   scripts/fuzz rdma_tool_output_fuzz     (docs/FUZZING.md)

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collectors/rdma_tool_output.h"

namespace {

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

void CheckOutput(const railwatch::RdmaToolOutput& out, int lines) {
  Check(out.lines >= 0 && out.lines <= lines);
  Check(out.problems.size() <= 201);  // 100 kept by the parser (+1 "more"), 100 other lines
  for (const railwatch::RdmaToolProblem& p : out.problems) {
    Check(p.line >= 1 && p.line <= lines);
    Check(!p.reason.empty());
  }
  for (const railwatch::RdmaToolPort& port : out.ports) {
    Check(!port.device.empty());
    Check(port.line >= 1 && port.line <= lines);
    for (const railwatch::RdmaToolCounter& c : port.counters) {
      Check(!c.name.empty());
      Check(c.canonical == railwatch::RdmaCounterCanonicalName(c.name));
      Check(port.Counter(c.name) != nullptr);
    }
    for (const auto& [key, value] : port.attributes) Check(port.Attribute(key) != nullptr);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const int lines = 1 + static_cast<int>(std::count(input.begin(), input.end(), '\n'));

  const railwatch::RdmaToolOutput whole = railwatch::ParseRdmaToolOutput(input);
  CheckOutput(whole, lines);

  // Line by line, as `railwatch triage` feeds it: the same records.
  railwatch::RdmaToolParser parser;
  size_t start = 0;
  int n = 0;
  while (start <= input.size()) {
    size_t nl = input.find('\n', start);
    if (nl == std::string_view::npos) nl = input.size();
    parser.Feed(input.substr(start, nl - start), ++n);
    start = nl + 1;
  }
  parser.Finish();
  CheckOutput(parser.output(), lines);
  Check(parser.output().ports.size() == whole.ports.size());
  return 0;
}
