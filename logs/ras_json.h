#pragma once

// NCCL RAS in JSON: the report of `ncclras -f json` (or `SET FORMAT json` then `STATUS` on the
// RAS port, NCCL 2.28.7+) and MONITOR-mode events (`ncclras -m -f json`, or `MONITOR` on the
// port, 2.29+; src/ras/client_support.cc rasClientsNotifyEvent). The same
// events as the text report (logs/ras_parser.h), so triage and the playbooks read one shape:
//
//   nccl_ras.report      one per report: versions, timestamp, communicators, errors, outliers
//   nccl_ras.comm_issue  one per communicator that has a problem: MISMATCH (collective counts
//                        or statuses differ; the ranks behind are named), INCOMPLETE (missing
//                        ranks, with whether each is unresponsive or considered dead), ERROR
//                        (an asynchronous error or an abort)
//   nccl_ras.event       one per MONITOR event (PEER_DEAD ...): `event`, `group`, `timestamp`,
//                        the peer's `pid`, `node`, `gpus` (or only `node` where NCCL knew the
//                        peer by its address: {"peer": {"addr": "10.0.0.7<41234>"}}), `details`
//
// NCCL 2.28.7 to 2.29.1 print a report with missing ranks as invalid JSON (a comma missing
// after "nvml_dev"); such a document is repaired, read, and the repair named in `problems`.

#include <map>
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

// The job's processes as a JSON report lists them (present and missing ranks), by
// "HOST/PID": the communicators (hashes without 0x) and ranks each one holds. What a MONITOR
// event, which names a process, is matched against. Empty when `report` does not parse.
struct RasProcess {
  std::string comm_hashes;  // comma list
  std::string ranks;        // comma list, in the order of comm_hashes
};
std::map<std::string, RasProcess> RasReportProcesses(std::string_view report);

}  // namespace railwatch::logs
