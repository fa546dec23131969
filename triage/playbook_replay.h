#pragma once

// Offline triage's diagnosis: the parsed log events played through the daemon's playbooks
// (rules/*.yaml, the same loader and Engine as railwatchd) on a fake clock, as `railwatch
// rules test` plays a playbook's test file. What is wrong, the likely cause and the next
// commands come from the playbooks that fire and their runbooks, never from triage's own code.

#include <cstdint>
#include <string>
#include <vector>

#include "engine/playbook.h"
#include "logs/log_event.h"
#include "triage/findings.h"

namespace railwatch {

// The `host` label a log event gets when it is replayed: the host its line names (NCCL's
// "host:pid:tid" prefix), or, when the line names none, a placeholder the runbook's commands
// then show for the engineer to fill in: "<host of rank3.log>" (the input's file name, so that
// two such files are two incidents, not one), "<host>" on standard input. On a real host the
// agent that tails the log adds its own host name instead.
std::string TriageHostLabel(const logs::LogEvent& event);

// Where no line of the input has a time: the replay's clock starts here (as rule tests do).
inline constexpr int64_t kTriageReplayStartUnixSeconds = 1'700'000'000;

struct ReplayStats {
  size_t events = 0;       // events stored
  size_t evaluations = 0;  // Engine::EvaluateOnce calls
};

// Converts every event as the agent would (collectors/log_event_record.h: the log's name as
// `log`, the fields as attributes with file and line) plus the host label, stores them in time
// order and evaluates the Engine over `playbooks` on a FakeClock (engine/replay.h, the rule
// tests' runner): at each event time (events closer than one step apart are one step: the
// daemon's 1 s tick, longer for a log that spans more than about 2,000 s, up to 30 s, so that a
// long log stays fast), then until the longest `for` of any playbook has passed after the last
// event.
// A line without a time takes the time of the line before it in the same input (the first time
// in the inputs when no line before it has one; kTriageReplayStartUnixSeconds when none has).
//
// Returns every diagnosis that fired and was not explained by another one (an explained
// symptom's events are evidence of its cause, which is returned), in firing order, with the
// event kinds each reads (its own condition's, and those of the symptoms it explained).
std::vector<TriageDiagnosis> ReplayThroughPlaybooks(const std::vector<logs::LogEvent>& events,
                                                    std::vector<Playbook> playbooks,
                                                    ReplayStats* stats = nullptr);

// The playbooks triage plays events through: `rules` (a directory or a file, as `railwatch
// rules` and railwatchd's --rules take them), or the shipped ones (ShippedPath("rules")) when
// empty. Every problem is in the result, file:line:column.
LoadResult LoadTriagePlaybooks(const std::string& rules);

// ReplayThroughPlaybooks, then AnalyzeEvents with the diagnoses that fired.
TriageReport TriageEvents(const std::vector<logs::LogEvent>& events,
                          std::vector<Playbook> playbooks, ReplayStats* stats = nullptr);

}  // namespace railwatch
