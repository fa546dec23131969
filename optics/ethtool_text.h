#pragma once

// ethtool's text output (optics/readers.h): what a block's fields mean. Internal to
// railwatch_optics; the block itself is cut by ToolOutputReader.

#include <vector>

#include "optics/readers.h"

namespace railwatch::optics::reader {

// `ethtool -m`: identity, DOM per lane ("(Channel N)" keys, or SFP single values), thresholds,
// alarm and warning flags ("On"), lane status lists ("[ Yes, No, ... ]") into r.module.
void BuildEthtoolModule(ToolReading& r, std::vector<ToolProblem>& problems);
// `ethtool [-I] --show-fec`: encodings and statistics into r.fec.
void BuildEthtoolFec(ToolReading& r, std::vector<ToolProblem>& problems);
// `ethtool -S DEV --groups ...`: eth-phy counters into r.phy.
void BuildEthtoolStats(ToolReading& r, std::vector<ToolProblem>& problems);

// Value parsers the other readers share (units as module.h wants them). Each returns false
// when the text is no such value; N/A is for the caller to check first.
bool ParseTemperatureC(std::string_view text, double* celsius);  // "39.18 degrees C / ...", "54C"
bool ParseVolts(std::string_view text, double* volts);           // "3.3544 V", "3.2824Volts"
bool ParseMilliamps(std::string_view text, double* ma);          // "6.090 mA", "6.75mA"
bool ParseDbm(std::string_view text, double* dbm);  // "0.6367 mW / -1.96 dBm", "-2.5dBm", "0.5 mW"

}  // namespace railwatch::optics::reader
