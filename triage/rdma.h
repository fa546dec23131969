#pragma once

// `railwatch triage` on pasted `rdma statistic show` / `rdma link show` / `rdma -j` / ibstatus
// output (collectors/rdma_tool_output.h): per device/port, the retries and timeouts, completion
// (CQE) errors, out_of_buffer drops and links not ACTIVE/LINK_UP, with advice, cross-checked
// with the NICs an NCCL log in the same triage names.

#include <string>
#include <vector>

#include "collectors/rdma_tool_output.h"
#include "logs/log_event.h"
#include "triage/findings.h"

namespace railwatch {

// One event per port record: kind "rdma.statistic" (counters) or "rdma.link" (a state: `rdma
// link show`, ibstatus), fields device, port, the attributes, then the counters by their rdma
// names; `raw` the record as one line.
std::vector<logs::LogEvent> RdmaToolEvents(const RdmaToolOutput& output, const std::string& source);

// Findings from the rdma.* events among `events` (the NCCL events there give the cross-check),
// appended to `findings`; one line per port for `context`.
void AnalyzeRdmaTool(const std::vector<logs::LogEvent>& events,
                     std::vector<TriageFinding>& findings, std::vector<std::string>& context);

}  // namespace railwatch
