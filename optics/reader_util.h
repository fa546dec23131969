#pragma once

// What the optics tool-output readers (optics/readers.h) share: trimming, ANSI codes, numbers
// with units and thousands separators, lane suffixes, form factors, problems. Internal to
// railwatch_optics.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "optics/module.h"
#include "optics/readers.h"

namespace railwatch::optics::reader {

std::string_view Trim(std::string_view s);
inline bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
inline bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
// The line without ANSI escape sequences (ESC [ ... letter) and without a trailing CR.
std::string StripAnsi(std::string_view line);

// The whole of `text` (trimmed) as a decimal number ("-1.96", "15E-255", "-inf"); no NaN.
bool ParseNumber(std::string_view text, double* out);
// The number `text` starts with, and the rest after it (trimmed): "6.090 mA" -> 6.09, "mA".
bool LeadingNumber(std::string_view text, double* out, std::string_view* rest);
// An unsigned count, thousands separators allowed: "136,403".
bool ParseCount(std::string_view text, uint64_t* out);
// "N/A", "n/a", "NA", "-", "": the tool had no value.
bool IsNotAvailable(std::string_view text);
// mlxlink prints a zero BER as 15E-255: anything below 1e-200 reads 0.
double BerValue(double ber);

// A key's lane suffix: "Laser tx bias current (Channel 2)", "... alarm   (Chan 2)",
// "Rcvr signal avg optical power(Channel 2)", "(Lane 2)": the base (trimmed, spaces collapsed)
// and the lane (1-based). False when the key has none (`base` is then the key, collapsed).
bool SplitLaneSuffix(std::string_view key, std::string* base, int* lane);
// Lower case with runs of spaces collapsed: "Laser bias current high alarm   " ->
// "laser bias current high alarm".
std::string Normalize(std::string_view s);
// Items of a list "a, b,c" (trimmed; empty items kept so that lanes keep their place).
std::vector<std::string> SplitList(std::string_view s, char separator = ',');

// The module's form factor from an identifier as the tools print it ("0x03 (SFP)", "OSFP",
// "QSFP-DD Double Density 8X Pluggable Transceiver", "QSFP28 or later"): "SFP", "QSFP+",
// "QSFP28", "QSFP-DD", "OSFP" ...; "" when none is named.
std::string FormFactorOf(std::string_view identifier);
// The management interface a form factor (or identifier text) implies.
ModuleSpec SpecOf(std::string_view form_factor, std::string_view identifier);

// lanes[lane - 1] = v, growing the vector.
template <typename T>
void SetLane(std::vector<std::optional<T>>& lanes, int lane, T v) {
  if (lane < 1 || lane > 64) return;
  if (lanes.size() < static_cast<size_t>(lane)) lanes.resize(lane);
  lanes[lane - 1] = v;
}

// "rx_power_low_warning", with ":lane2" when lane > 0.
std::string FlagName(std::string_view quantity, bool high, bool alarm, int lane = 0);
// "rx_los" + ":lane3" when lane > 0.
std::string LaneFlag(std::string_view flag, int lane);
void AddFlag(ModuleReading& m, std::string flag);  // once

// The module's thresholds for `quantity` ("temperature", "voltage", "tx_bias", "tx_power",
// "rx_power"), nullptr for another name.
Thresholds* ThresholdsFor(ModuleReading& m, std::string_view quantity);
// One of a quantity's four thresholds.
void SetThreshold(Thresholds& t, bool high, bool alarm, double v);

void AddProblem(std::vector<ToolProblem>& problems, const ToolField& f, std::string message);
void AddProblem(std::vector<ToolProblem>& problems, int line, int column, std::string message);
// "value \"lots\" of \"Laser bias current\" is not a number" and its like.
std::string NotANumber(const ToolField& f, std::string_view what = "a number");

// A shell prompt line with one of the tools the readers know (`]# ethtool -I --show-fec eth0`,
// `ubuntu@bf:~$ sudo mlxlink -d /dev/mst/mt41692_pciconf0 -p 1 -m -c`, `SW3$ show interfaces
// transceiver eeprom Ethernet144 --dom`), or the bare command.
struct CommandLine {
  ToolFormat format = ToolFormat::kEthtoolModule;
  std::string device, port;
  std::string text;  // from the tool's name on
};
bool ParseCommandLine(std::string_view line, CommandLine* out);

}  // namespace railwatch::optics::reader
