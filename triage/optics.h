#pragma once

// `railwatch triage` on pasted optics, FEC and PHY tool output (optics/readers.h: ethtool -m,
// ethtool [-I] --show-fec, ethtool -S --groups eth-phy, mlxlink text and --json, SONiC
// `show interfaces transceiver eeprom|status`, `show interfaces counters fec-stats`;
// docs/LINK_HEALTH.md "Pasted tool output"). Per port: the module's identity and readings,
// receive or transmit power below the module's own warning or alarm threshold (per lane, with
// the margin in dB), bias out of range, a module within 5 °C of its temperature alarm, the
// flags it set, Rx loss of signal per lane, pre-FEC BER above 2.4e-5, errors that FEC did not
// correct, link downs and recoveries; the likely part where the readings say; the commands
// that confirm it.

#include <string>
#include <string_view>
#include <vector>

#include "logs/log_event.h"
#include "optics/readers.h"
#include "triage/findings.h"

namespace railwatch {

// Pre-FEC (raw) BER above this is a warning: a decade under the 2.4e-4 that RS(544,514)
// (KP4, 200G/400G/800G Ethernet and NDR) corrects to a post-FEC BER of about 1e-15.
inline constexpr double kOpticsRawBerWarning = 2.4e-5;
// Above this, FEC is at or past its limit: uncorrectable codewords follow.
inline constexpr double kOpticsRawBerLimit = 2.4e-4;
// A module this close to its own high-temperature alarm (degrees C) is a warning.
inline constexpr double kOpticsHotMarginC = 5;

// The events of `output`'s readings, one per part a reading has: "optics.module" (identity,
// DOM per lane, thresholds, flags), "optics.fec" (encodings, FEC counters, histogram) and
// "optics.phy" (state, speed, BER, error and link counters). Fields: device, tool, command,
// reading ("SOURCE:LINE" of the reading, shared by its parts), then the part's own (see
// OpticsFieldTypeOf); per-lane values comma-separated, a lane not read left empty.
std::vector<logs::LogEvent> OpticsToolEvents(const optics::ToolOutput& output,
                                             const std::string& source);

// Findings from the optics.* events among `events`, appended to `findings`; one line for
// `context` saying what was read.
void AnalyzeOptics(const std::vector<logs::LogEvent>& events, std::vector<TriageFinding>& findings,
                   std::vector<std::string>& context);

// How `railwatch triage --json` prints an optics.* event's field.
enum class OpticsFieldType { kText, kNumber, kNumberList };
OpticsFieldType OpticsFieldTypeOf(std::string_view key);

}  // namespace railwatch
