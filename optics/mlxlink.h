#pragma once

// mlxlink's output, text or --json (optics/readers.h): what a reading's fields mean. Internal
// to railwatch_optics; ReadMlxlinkJson (readers.h) is the JSON reader.

#include <string_view>
#include <vector>

#include "optics/readers.h"

namespace railwatch::optics::reader {

// mlxlink's section titles ("Operational Info", "Module Info", "Physical Counters and BER Info"
// ...): a text block starts at one.
bool IsMlxlinkTitle(std::string_view line);

// The fields (section, key, value), from text or JSON alike, into r.module (Module Info: DOM
// with its "[lo..hi]" alarm thresholds, identity, per-lane flags), r.phy (operational,
// troubleshooting, tool and counter sections, PCIe) and r.fec (the FEC histogram).
void BuildMlxlink(ToolReading& r, std::vector<ToolProblem>& problems);

}  // namespace railwatch::optics::reader
