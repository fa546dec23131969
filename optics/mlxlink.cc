#include "optics/mlxlink.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "nlohmann/json.hpp"
#include "optics/reader_util.h"

namespace railwatch::optics {
namespace reader {
// Named, not anonymous: the unity build puts the readers in one unit.
namespace mlxlink_impl {

constexpr std::string_view kTitles[] = {
    "Operational Info",
    "Supported Info",
    "Troubleshooting Info",
    "Tool Information",
    "Module Info",
    "Physical Counters and BER Info",
    "Histogram of FEC Errors",
    "EYE Opening Info",
    "EYE Opening Info (PCIe)",
    "Serdes Tuning Transmitter Info",
    "Serdes Tuning Receiver Info",
    "Test Mode Info",
    "PCIe Operational (Enabled) Info",
    "Module Counters Info",
    "FEC Capability Info",
    "Port Information",
};

// "61 [-10..80]" -> "61" and the range; "0,0,0,0 [0..0]"; "N/A".
struct RangedValue {
  std::string_view list;
  bool has_range = false;
  double lo = 0, hi = 0;
};

bool SplitRange(std::string_view value, RangedValue* out) {
  value = Trim(value);
  out->list = value;
  out->has_range = false;
  if (value.empty() || value.back() != ']') return true;
  const size_t open = value.rfind('[');
  if (open == std::string_view::npos) return true;
  const std::string_view inside = value.substr(open + 1, value.size() - open - 2);
  const size_t dots = inside.find("..");
  if (dots == std::string_view::npos) return false;
  if (!ParseNumber(inside.substr(0, dots), &out->lo) ||
      !ParseNumber(inside.substr(dots + 2), &out->hi) || !std::isfinite(out->lo) ||
      !std::isfinite(out->hi)) {
    return false;
  }
  out->has_range = true;
  out->list = Trim(value.substr(0, open));
  return true;
}

// Lane flags "1,0,1,1" (or N/A) into `flag`:laneN.
void LaneFlags(ModuleReading& m, const ToolField& f, std::string_view flag,
               std::vector<ToolProblem>& problems) {
  if (IsNotAvailable(f.value)) return;
  int lane = 0;
  for (const std::string& item : SplitList(f.value)) {
    ++lane;
    if (item == "1") {
      AddFlag(m, LaneFlag(flag, lane));
    } else if (item != "0" && !IsNotAvailable(item)) {
      AddProblem(problems, f, NotANumber(f, "a list of 0 and 1 per lane"));
      return;
    }
  }
}

// One DOM quantity: its lanes (or single value) and its "[lo..hi]" alarm range. A reading of
// all zeros with a [0..0] range is a cable that measures nothing (passive copper).
void Dom(ModuleReading& m, const ToolField& f, std::string_view quantity, double scale,
         std::vector<ToolProblem>& problems) {
  if (IsNotAvailable(f.value)) return;
  RangedValue rv;
  if (!SplitRange(f.value, &rv)) {
    AddProblem(problems, f, NotANumber(f, "a reading with a [low..high] range"));
    return;
  }
  std::vector<double> values;
  for (const std::string& item : SplitList(rv.list)) {
    double v = 0;
    if (IsNotAvailable(item)) {
      values.push_back(std::nan(""));
      continue;
    }
    if (!ParseNumber(item, &v) || !std::isfinite(v)) {
      AddProblem(problems, f, NotANumber(f, "a reading (a number per lane)"));
      return;
    }
    values.push_back(v * scale);
  }
  const bool all_zero = std::all_of(values.begin(), values.end(), [](double v) { return v == 0; });
  if (rv.has_range && rv.lo == 0 && rv.hi == 0 && all_zero) return;
  if (quantity == "temperature" || quantity == "voltage") {
    if (!values.empty() && !std::isnan(values[0])) {
      (quantity == "temperature" ? m.temperature_c : m.supply_voltage_v) = values[0];
    }
  } else {
    std::vector<std::optional<double>>& lanes = quantity == "tx_bias"    ? m.tx_bias_ma
                                                : quantity == "tx_power" ? m.tx_power_dbm
                                                                         : m.rx_power_dbm;
    for (size_t i = 0; i < values.size(); ++i) {
      if (!std::isnan(values[i])) SetLane(lanes, static_cast<int>(i) + 1, values[i]);
    }
  }
  if (rv.has_range && !(rv.lo == 0 && rv.hi == 0)) {
    Thresholds& t = *ThresholdsFor(m, quantity);
    t.alarm_low = rv.lo * scale;
    t.alarm_high = rv.hi * scale;
  }
}

bool Count(const ToolField& f, std::optional<uint64_t>* out, std::vector<ToolProblem>& problems) {
  if (IsNotAvailable(f.value)) return false;
  uint64_t v = 0;
  if (!ParseCount(f.value, &v)) {
    AddProblem(problems, f, NotANumber(f, "an unsigned count"));
    return false;
  }
  *out = v;
  return true;
}

bool Ber(const ToolField& f, std::optional<double>* out, std::vector<ToolProblem>& problems) {
  if (IsNotAvailable(f.value)) return false;
  double v = 0;
  if (!ParseNumber(f.value, &v) || v < 0 || !std::isfinite(v)) {
    AddProblem(problems, f, NotANumber(f, "a bit error rate such as 5E-10"));
    return false;
  }
  *out = BerValue(v);
  return true;
}

void Module(ToolReading& r, ModuleReading& m, const ToolField& f,
            std::vector<ToolProblem>& problems) {
  const std::string& k = f.key;
  std::string_view v = f.value;
  if (StartsWith(k, "Temperature")) return Dom(m, f, "temperature", 1, problems);
  if (StartsWith(k, "Voltage")) {
    return Dom(m, f, "voltage", k.find("[mV]") != std::string::npos ? 0.001 : 1, problems);
  }
  if (StartsWith(k, "Bias Current")) return Dom(m, f, "tx_bias", 1, problems);
  if (StartsWith(k, "Rx Power Current")) return Dom(m, f, "rx_power", 1, problems);
  if (StartsWith(k, "Tx Power Current")) return Dom(m, f, "tx_power", 1, problems);
  if (IsNotAvailable(v)) return;
  if (k == "Identifier") {
    m.form_factor = FormFactorOf(v);
    m.spec = SpecOf(m.form_factor, v);
  } else if (k == "Vendor Name") {
    m.vendor = std::string(v);
  } else if (k == "Vendor Part Number") {
    m.part_number = std::string(v);
  } else if (k == "Vendor Serial Number") {
    m.serial = std::string(v);
  } else if (k == "Rev") {
    m.revision = std::string(v);
  } else if (k == "Active Set Media Compliance Code") {
    m.media = std::string(v);
  } else if (k == "Compliance") {
    if (m.media.empty()) m.media = std::string(v);
  } else if (StartsWith(k, "Wavelength [nm]")) {
    double nm = 0;
    if (LeadingNumber(v, &nm, nullptr) && nm > 0) m.wavelength_nm = nm;
  } else if (k == "Cable Type") {
    r.cable = std::string(v);
  } else if (k == "Module State") {
    r.module_state = std::string(v);
  } else if (StartsWith(k, "Rx LOS")) {
    LaneFlags(m, f, "rx_los", problems);
  } else if (StartsWith(k, "Tx LOS")) {
    LaneFlags(m, f, "tx_los", problems);
  } else if (StartsWith(k, "Tx Fault")) {
    LaneFlags(m, f, "tx_fault", problems);
  } else if (StartsWith(k, "Rx CDR LOL")) {
    LaneFlags(m, f, "rx_lol", problems);
  } else if (StartsWith(k, "Tx CDR LOL")) {
    LaneFlags(m, f, "tx_lol", problems);
  } else if (StartsWith(k, "Tx Adaptive EQ Fault")) {
    LaneFlags(m, f, "tx_adaptive_eq_fault", problems);
  } else if (k == "Module FW Fault" || k == "DataPath FW Fault") {
    if (v == "1") AddFlag(m, k == "Module FW Fault" ? "module_fw_fault" : "datapath_fw_fault");
  }
}

void Counters(PhyCounters& p, const ToolField& f, std::vector<ToolProblem>& problems) {
  const std::string& k = f.key;
  if (StartsWith(k, "Time Since Last Clear")) {
    double minutes = 0;
    if (IsNotAvailable(f.value)) return;
    if (!ParseNumber(f.value, &minutes) || minutes < 0 || !std::isfinite(minutes)) {
      AddProblem(problems, f, NotANumber(f, "minutes"));
      return;
    }
    p.minutes_since_clear = minutes;
  } else if (k == "Effective Physical Errors") {
    Count(f, &p.effective_errors, problems);
  } else if (k == "Effective Physical BER") {
    Ber(f, &p.effective_ber, problems);
  } else if (k == "Raw Physical BER") {
    Ber(f, &p.raw_ber, problems);
  } else if (k == "Symbol BER") {
    Ber(f, &p.symbol_ber, problems);
  } else if (k == "Symbol Errors") {
    Count(f, &p.symbol_errors, problems);
  } else if (k == "Link Down Counter") {
    Count(f, &p.link_down, problems);
  } else if (k == "Link Error Recovery Counter") {
    Count(f, &p.link_error_recovery, problems);
  } else if (k == "Raw Physical Errors Per Lane") {
    if (IsNotAvailable(f.value)) return;
    std::vector<std::optional<uint64_t>> lanes;
    for (const std::string& item : SplitList(f.value)) {
      uint64_t v = 0;
      if (IsNotAvailable(item)) {
        lanes.emplace_back();
      } else if (ParseCount(item, &v)) {
        lanes.emplace_back(v);
      } else {
        AddProblem(problems, f, NotANumber(f, "a count per lane"));
        return;
      }
    }
    p.raw_errors_lanes = std::move(lanes);
  } else if (k == "Raw Physical BER Per Lane") {
    if (IsNotAvailable(f.value)) return;
    std::vector<std::optional<double>> lanes;
    for (const std::string& item : SplitList(f.value)) {
      double v = 0;
      if (IsNotAvailable(item)) {
        lanes.emplace_back();
      } else if (ParseNumber(item, &v) && v >= 0 && std::isfinite(v)) {
        lanes.emplace_back(BerValue(v));
      } else {
        AddProblem(problems, f, NotANumber(f, "a bit error rate per lane"));
        return;
      }
    }
    p.raw_ber_lanes = std::move(lanes);
  }
}

// "Bin 12" with "[12]  0" (text) or "[12],0" (JSON values).
void HistogramBin(FecReading& fec, const ToolField& f, std::vector<ToolProblem>& problems) {
  uint64_t bin = 0;
  if (!StartsWith(f.key, "Bin ") || !ParseCount(f.key.substr(4), &bin) || bin > 1000) return;
  std::string value = f.value;
  std::replace(value.begin(), value.end(), ',', ' ');
  std::vector<std::string> tokens;
  for (const std::string& t : SplitList(value, ' ')) {
    if (!t.empty()) tokens.push_back(t);
  }
  uint64_t count = 0;
  if (tokens.empty() || !ParseCount(tokens.back(), &count)) {
    AddProblem(problems, f, NotANumber(f, "a range and a count"));
    return;
  }
  fec.histogram.push_back(
      {static_cast<int>(bin), tokens.size() > 1 ? tokens.front() : std::string(), count});
}

}  // namespace mlxlink_impl

bool IsMlxlinkTitle(std::string_view line) {
  using mlxlink_impl::kTitles;
  line = Trim(line);
  return std::find(std::begin(kTitles), std::end(kTitles), line) != std::end(kTitles);
}

void BuildMlxlink(ToolReading& r, std::vector<ToolProblem>& problems) {
  using namespace mlxlink_impl;  // NOLINT(build/namespaces)
  ModuleReading m;
  PhyCounters p;
  FecReading fec;
  bool has_module = false, has_phy = false;
  for (const ToolField& f : r.fields) {
    const std::string& s = f.section;
    const std::string& k = f.key;
    std::string_view v = f.value;
    if (s == "Module Info") {
      has_module = true;
      Module(r, m, f, problems);
    } else if (s == "Operational Info") {
      has_phy = true;
      if (k == "State") p.state = std::string(v);
      if (k == "Physical state") p.physical_state = std::string(v);
      if (k == "Speed") p.speed = std::string(v);
      if (k == "Width") p.width = std::string(v);
      if (k == "FEC") p.fec = fec.mode = std::string(v);
    } else if (s == "PCIe Operational (Enabled) Info") {
      has_phy = true;
      if (StartsWith(k, "Link Speed Active")) p.speed = std::string(v);
      if (StartsWith(k, "Link Width Active")) p.width = std::string(v);
    } else if (s == "Supported Info") {
      if (StartsWith(k, "Enabled Link Speed")) p.enabled_speeds = std::string(v);
      if (StartsWith(k, "Supported Cable Speed")) p.supported_speeds = std::string(v);
    } else if (s == "Troubleshooting Info") {
      has_phy = true;
      if (k == "Status Opcode" && !IsNotAvailable(v)) {
        double code = 0;
        if (ParseNumber(v, &code) && code == std::floor(code) && std::fabs(code) < 1e15) {
          p.status_opcode = static_cast<int64_t>(code);
        } else {
          AddProblem(problems, f, NotANumber(f, "an opcode number"));
        }
      }
      if (k == "Recommendation") p.recommendation = std::string(v);
    } else if (s == "Tool Information") {
      if (k == "Firmware Version") p.firmware = std::string(v);
      if (k == "MFT Version") p.mft_version = std::string(v);
    } else if (s == "Physical Counters and BER Info") {
      has_phy = true;
      Counters(p, f, problems);
    } else if (s == "Histogram of FEC Errors") {
      HistogramBin(fec, f, problems);
    }
  }
  std::stable_sort(
      fec.histogram.begin(), fec.histogram.end(),
      [](const FecReading::Bin& a, const FecReading::Bin& b) { return a.bin < b.bin; });
  if (has_module) r.module = std::move(m);
  if (has_phy) r.phy = std::move(p);
  if (!fec.histogram.empty()) r.fec = std::move(fec);
}

}  // namespace reader

namespace mlxlink_json {

using reader::Trim;

// Where each line starts, for line:column of a byte offset.
struct Lines {
  explicit Lines(std::string_view text) {
    starts.push_back(0);
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') starts.push_back(i + 1);
    }
  }
  std::pair<int, int> At(size_t offset) const {
    const auto it = std::upper_bound(starts.begin(), starts.end(), offset);
    const size_t line = static_cast<size_t>(it - starts.begin());
    return {static_cast<int>(line), static_cast<int>(offset - starts[line - 1] + 1)};
  }
  std::vector<size_t> starts;
};

// The end (one past the closing brace) of the JSON object starting at `start`, and its
// deepest nesting; npos when it does not close.
size_t ObjectEnd(std::string_view text, size_t start, int* depth_max) {
  int depth = 0;
  bool in_string = false, escape = false;
  *depth_max = 0;
  for (size_t i = start; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escape) {
        escape = false;
      } else if (c == '\\') {
        escape = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      *depth_max = std::max(*depth_max, ++depth);
    } else if (c == '}' || c == ']') {
      if (--depth == 0) return i + 1;
    }
  }
  return std::string_view::npos;
}

// The first line that starts with '{' (after blanks), and the prompt lines before it.
size_t DocumentStart(std::string_view text) {
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = Trim(text.substr(at, end - at));
    if (!line.empty() && line.front() == '{') return at + text.substr(at).find('{');
    at = end + 1;
  }
  return std::string_view::npos;
}

std::string JsonText(const nlohmann::ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    std::vector<std::string> items;
    for (const auto& item : v) items.push_back(JsonText(item));
    return absl::StrJoin(items, ",");
  }
  if (v.is_object() && v.contains("values")) {
    std::string values = JsonText(v["values"]);
    if (v.contains("mask") && v["mask"].is_string()) {
      return absl::StrCat(v["mask"].get<std::string>(), " (", values, ")");
    }
    return values;
  }
  return v.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

constexpr std::string_view kJsonSections[] = {
    "\"Operational Info\"",        "\"Module Info\"",    "\"Physical Counters and BER Info\"",
    "\"Histogram of FEC Errors\"", "\"EYE Opening Info", "\"PCIe Operational",
    "\"Troubleshooting Info\"",    "\"Supported Info\"", "\"Tool Information\""};

}  // namespace mlxlink_json

bool LooksLikeMlxlinkJson(std::string_view head) {
  using namespace mlxlink_json;  // NOLINT(build/namespaces)
  const size_t start = DocumentStart(head);
  if (start == std::string_view::npos) return false;
  // Only prompt lines (or nothing) before the document.
  size_t at = 0;
  while (at < start) {
    size_t end = head.find('\n', at);
    if (end == std::string_view::npos || end > start) break;
    reader::CommandLine cmd;
    const std::string_view line = Trim(head.substr(at, end - at));
    if (!line.empty() && !reader::ParseCommandLine(line, &cmd)) return false;
    at = end + 1;
  }
  const std::string_view doc = head.substr(start);
  if (doc.find("\"result\"") == std::string_view::npos ||
      doc.find("\"output\"") == std::string_view::npos) {
    return false;
  }
  return std::any_of(std::begin(kJsonSections), std::end(kJsonSections),
                     [&](std::string_view s) { return doc.find(s) != std::string_view::npos; });
}

ToolOutput ReadMlxlinkJson(std::string_view text) {
  using namespace mlxlink_json;  // NOLINT(build/namespaces)
  using reader::Trim;
  ToolOutput out;
  const Lines lines(text);
  const size_t start = DocumentStart(text);
  if (start == std::string_view::npos) {
    out.problems.push_back({1, 0, "mlxlink --json: no JSON object in the input"});
    return out;
  }
  ToolReading r;
  r.format = ToolFormat::kMlxlinkJson;
  r.line = lines.At(start).first;
  // A prompt line before it names the device.
  for (size_t at = 0; at < start;) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    reader::CommandLine cmd;
    if (reader::ParseCommandLine(Trim(text.substr(at, end - at)), &cmd) &&
        (cmd.format == ToolFormat::kMlxlinkJson || cmd.format == ToolFormat::kMlxlink)) {
      r.device = cmd.device;
      r.port = cmd.port;
      r.command = cmd.text;
    }
    at = end + 1;
  }
  int depth = 0;
  const size_t end = ObjectEnd(text, start, &depth);
  if (end == std::string_view::npos) {
    const auto [l, c] = lines.At(text.size() > 0 ? text.size() - 1 : 0);
    out.problems.push_back({l, c, "mlxlink --json: the JSON object does not close"});
    return out;
  }
  if (depth > 32) {
    const auto [l, c] = lines.At(start);
    out.problems.push_back({l, c, "mlxlink --json: nested deeper than 32"});
    return out;
  }
  const std::string_view doc = text.substr(start, end - start);
  out.lines += lines.At(end - 1).first - r.line + 1;
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(doc.begin(), doc.end());
  } catch (const nlohmann::ordered_json::parse_error& e) {
    const auto [l, c] = lines.At(start + (e.byte > 0 ? e.byte - 1 : 0));
    std::string what = e.what();
    if (const size_t at = what.find("parse error"); at != std::string::npos) what = what.substr(at);
    out.problems.push_back({l, c, absl::StrCat("mlxlink --json: invalid JSON: ", what)});
    return out;
  }
  const nlohmann::ordered_json* output = nullptr;
  if (j.is_object() && j.contains("result") && j["result"].is_object() &&
      j["result"].contains("output") && j["result"]["output"].is_object()) {
    output = &j["result"]["output"];
  }
  if (j.is_object() && j.contains("status") && j["status"].is_object()) {
    const nlohmann::ordered_json& status = j["status"];
    std::string code = status.contains("code") ? JsonText(status["code"]) : "";
    std::string message = status.contains("message") ? JsonText(status["message"]) : "";
    r.fields.push_back({"status", "code", code, r.line, 1});
    r.fields.push_back({"status", "message", message, r.line, 1});
    if (!code.empty() && code != "0") {
      const auto [l, c] = lines.At(start + doc.find("\"status\""));
      out.problems.push_back({l, c, absl::StrCat("mlxlink --json: status ", code, ": ", message)});
    }
  }
  if (output == nullptr) {
    const auto [l, c] = lines.At(start);
    out.problems.push_back({l, c, "mlxlink --json: no \"result\".\"output\" object"});
    return out;
  }
  for (const auto& [section, keys] : output->items()) {
    const std::string quoted_section = absl::StrCat("\"", section, "\"");
    size_t section_at = doc.find(quoted_section);
    if (section_at == std::string_view::npos) section_at = 0;
    if (!keys.is_object()) {
      const auto [l, c] = lines.At(start + section_at);
      r.fields.push_back({"", section, JsonText(keys), l, c});
      continue;
    }
    for (const auto& [key, value] : keys.items()) {
      size_t key_at = doc.find(absl::StrCat("\"", key, "\""), section_at);
      if (key_at == std::string_view::npos) key_at = section_at;
      const auto [l, c] = lines.At(start + key_at);
      r.fields.push_back({section, key, std::string(Trim(JsonText(value))), l, c});
    }
  }
  reader::BuildMlxlink(r, out.problems);
  out.readings.push_back(std::move(r));
  return out;
}

}  // namespace railwatch::optics
