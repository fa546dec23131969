// libFuzzer target for the optics, FEC and PHY tool-output readers (optics/readers.h): any
// bytes as a whole paste (ReadToolOutput: mlxlink --json when it looks like it, else the line
// reader), as mlxlink --json regardless, and line by line through a ToolOutputReader, which must
// not crash or trip a sanitizer; and what comes back must hold together: the whole paste and its
// lines fed one by one give the same readings (when it is not JSON), every reading and problem
// names a line of the input, lanes stay within 64, thresholds and readings are finite, BERs are
// not negative, the FEC histogram is in bin order, and at most 100 problems (and one "and N
// more") are kept. Seeds: tests/fixtures/optics (the real-world samples).
//
//   scripts/fuzz optics_readers_fuzz     (docs/FUZZING.md)

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "optics/readers.h"

namespace {

using namespace railwatch::optics;  // NOLINT(build/namespaces): this file reads nothing else

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

void CheckValue(const std::optional<double>& v) { Check(!v || std::isfinite(*v)); }

void CheckLanes(const std::vector<std::optional<double>>& lanes) {
  Check(lanes.size() <= 64);
  for (const auto& v : lanes) CheckValue(v);
}

void CheckModule(const ModuleReading& m) {
  CheckValue(m.temperature_c);
  CheckValue(m.supply_voltage_v);
  CheckLanes(m.tx_bias_ma);
  CheckLanes(m.tx_power_dbm);
  CheckLanes(m.rx_power_dbm);
  for (const Thresholds& t : m.thresholds) {
    CheckValue(t.alarm_high);
    CheckValue(t.warning_high);
    CheckValue(t.warning_low);
    CheckValue(t.alarm_low);
  }
  for (const std::string& f : m.flags) Check(!f.empty());
}

void CheckBer(const std::optional<double>& v) { Check(!v || (std::isfinite(*v) && *v >= 0)); }

void CheckOutput(const ToolOutput& out, long lines) {
  Check(out.problems.size() <= 102);
  for (const ToolProblem& p : out.problems) {
    Check(!p.message.empty());
    Check(p.line >= 1 && p.line <= lines);
    Check(p.column >= 0);
  }
  for (const ToolReading& r : out.readings) {
    Check(r.line >= 1 && r.line <= lines);
    for (const ToolField& f : r.fields) Check(f.line >= 1 && f.line <= lines);
    if (r.module) CheckModule(*r.module);
    if (r.fec) {
      CheckBer(r.fec->pre_fec_ber);
      CheckBer(r.fec->post_fec_ber);
      Check(std::is_sorted(
          r.fec->histogram.begin(), r.fec->histogram.end(),
          [](const FecReading::Bin& a, const FecReading::Bin& b) { return a.bin < b.bin; }));
    }
    if (r.phy) {
      CheckBer(r.phy->effective_ber);
      CheckBer(r.phy->raw_ber);
      Check(r.phy->raw_ber_lanes.size() <= 1000000);
      for (const auto& v : r.phy->raw_ber_lanes) CheckBer(v);
    }
  }
}

void FuzzOne(std::string_view input) {
  const long lines = 1 + std::count(input.begin(), input.end(), '\n');
  const ToolOutput whole = ReadToolOutput(input);
  CheckOutput(whole, lines);
  CheckOutput(ReadMlxlinkJson(input), lines);

  ToolOutputReader reader;
  int n = 0;
  size_t at = 0;
  while (at <= input.size()) {
    size_t end = input.find('\n', at);
    if (end == std::string_view::npos) end = input.size();
    if (end == input.size() && at == end) break;
    reader.Feed(input.substr(at, end - at), ++n);
    at = end + 1;
  }
  reader.Finish();
  const ToolOutput by_line = reader.TakeOutput();
  CheckOutput(by_line, lines);
  if (!LooksLikeMlxlinkJson(input.substr(0, 64 * 1024))) {
    Check(by_line.readings.size() == whole.readings.size());
    Check(by_line.lines == whole.lines);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzOne(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
