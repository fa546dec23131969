#pragma once

// A parsed log line (logs::LogEvent) as the event the host agent sends for it: one conversion,
// used by the agent's LogCollector and by offline triage (triage/playbook_replay.h), so that a
// playbook sees the same event from a tailed log and from a pasted one.

#include <cstdint>
#include <string>

#include "collectors/collector.h"
#include "logs/log_event.h"

namespace railwatch {

// `log_label` is the log's label (the agent's tail pattern; triage: the input's name), `path`
// the file it was read from (an attribute unless the parser set one). `fallback_time` stands in
// for a line without a time. `line_known`: the event's line number is the file's (the tailer
// knew where it started), so it becomes the `line` attribute. A kernel.* event's pci, adapter,
// device, interface and severity fields are labels (logs::kKernelEventLabels), not attributes.
EventRecord LogEventRecord(logs::LogEvent event, const std::string& log_label,
                           const std::string& path, int64_t fallback_time, bool line_known);

}  // namespace railwatch
