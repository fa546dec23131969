#pragma once

// SONiC's CLI output (optics/readers.h): what a block's fields mean. Internal to
// railwatch_optics.

#include <vector>

#include "optics/readers.h"

namespace railwatch::optics::reader {

// `show interfaces transceiver eeprom [--dom]`: identity (Identifier, CMIS Rev, Vendor *,
// the first Application Advertisement's media), ChannelMonitorValues (RXnPower, TXnBias,
// TXnPower; SFP: RXPower ...), ModuleMonitorValues, and both ThresholdValues blocks.
void BuildSonicEeprom(ToolReading& r, std::vector<ToolProblem>& problems);
// `show interfaces transceiver status`: the CMIS state and the flags set ("True") per lane.
void BuildSonicStatus(ToolReading& r, std::vector<ToolProblem>& problems);
// One row of `show interfaces counters fec-stats` (fields keyed by column header).
void BuildSonicFecRow(ToolReading& r, std::vector<ToolProblem>& problems);

}  // namespace railwatch::optics::reader
