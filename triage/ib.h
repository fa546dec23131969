#pragma once

// `railwatch triage` on InfiniBand tool output pasted from a terminal or given as files
// (docs/INFINIBAND.md): ibnetdiscover (and -p), perfquery, ibqueryerrors, iblinkinfo and
// ibdiagnet's db_csv, read with the readers of ib/. What a snapshot can say without a rate:
// ports that discarded packets on a lossless fabric, ports with link errors or link-downs,
// counters stuck at all ones, where credits ran out most (PortXmitWait), and links that trained
// below the fabric's usual width or speed.

#include <string>
#include <string_view>
#include <vector>

#include "logs/log_event.h"
#include "triage/findings.h"

namespace railwatch {

// The tool output in `text`, when it is one: events of kind "ib.port_counters" (fields node,
// guid, lid, port, each counter by its PMA name, saturated: the saturated ones, comma-separated)
// and "ib.link" (node, guid, lid, port, type, peer, peer_guid, peer_lid, peer_port, peer_type,
// width, speed); `raw` the record as one line. Problems (file:line:column) go to `problems`.
// Nothing for text no IB reader recognises.
std::vector<logs::LogEvent> IbToolEvents(std::string_view text, const std::string& source,
                                         std::vector<std::string>& problems);

// Whether the start of an input looks like IB tool output, so that the caller keeps the whole
// text for IbToolEvents.
bool LooksLikeIbToolOutput(std::string_view head);
// Which tool's output it is ("ibnetdiscover", "perfquery", ...), "" for none.
std::string IbToolKind(std::string_view text);

// Findings from the ib.* events among `events`, appended to `findings`; a line for `context`.
void AnalyzeIbTools(const std::vector<logs::LogEvent>& events,
                    std::vector<TriageFinding>& findings, std::vector<std::string>& context);

}  // namespace railwatch
