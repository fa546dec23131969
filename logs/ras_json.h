#pragma once

// NCCL RAS in JSON: the report of `ncclras -f json` (or `SET FORMAT json` then `STATUS` on the
// RAS port, NCCL 2.28.7+) and MONITOR-mode events (`ncclras -m -f json`, 2.29+). The same
// events as the text report (logs/ras_parser.h), so triage and the playbooks read one shape:
//
//   nccl_ras.report      one per report: versions, timestamp, communicators, errors, outliers
//   nccl_ras.comm_issue  one per communicator that has a problem: MISMATCH (collective counts
//                        or statuses differ; the ranks behind are named), INCOMPLETE (missing
//                        ranks, with whether each is unresponsive or considered dead), ERROR
//                        (an asynchronous error or an abort)
//   nccl_ras.event       one per MONITOR event (PEER_DEAD ...)
//
// NCCL 2.28.7 to 2.29.1 print a report with missing ranks as invalid JSON (a comma missing
// after "nvml_dev"); such a document is repaired, read, and the repair named in `problems`.

#include <string>
#include <string_view>
#include <vector>

#include "logs/log_event.h"

namespace railwatch::logs {

// Cheap: the first non-blank character is '{' and the first few KiB name RAS keys
// ("communicators_count" or a MONITOR "event" with a "peer").
bool LooksLikeRasJson(std::string_view text);

// Every top-level object of `text` (one report, or events one after another). `source` names
// the file in the events. A document that cannot be read is a problem ("LINE:COLUMN: why"),
// and the next one is still read.
std::vector<LogEvent> ParseRasJson(std::string_view text, const std::string& source,
                                   std::vector<std::string>& problems);

}  // namespace railwatch::logs
