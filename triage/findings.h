#pragma once

// What `railwatch triage` makes of parsed log events: findings (what the log says failed,
// where, how often, with the log's own detail) and context (versions, network, communicators).
// The diagnosis (what is wrong, the likely cause, the runbook and its commands) is not decided
// here: it comes from the playbooks the events fire (triage/playbook_replay.h), attached to the
// findings whose events they read.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "logs/log_event.h"

namespace railwatch {

// A playbook diagnosis that the replayed events fired.
struct TriageDiagnosis {
  std::string playbook;  // "nccl_failure"
  std::string severity;  // "critical"
  std::string summary;
  std::string culprit;  // "host=gpu-node-7, job=train"
  std::string host;     // the culprit's host, "" when it names none
  std::string runbook;  // the runbook's path (or URL)
  std::string runbook_text;
  std::vector<std::string> commands;  // the runbook's commands, the culprit filled in
  // Event kinds its playbook reads, and those of the symptom playbooks it explained.
  std::vector<std::string> event_kinds;

  bool Reads(absl::string_view kind) const;
};

struct TriageFinding {
  enum class Level { kFailure, kWarning, kInfo };
  Level level = Level::kInfo;
  std::string kind;        // the event kind it summarises, e.g. "nccl.ib_completion_error"
  std::string title;       // one line: what happened, how often
  std::string first_seen;  // "file:line"
  int64_t first_time_unix_nano = 0;
  int count = 0;  // events behind it
  // Labelled lines, in order: where, peers, result (the return-code chain), evidence ...
  std::vector<std::pair<std::string, std::string>> details;
  // Log detail: what these lines mean (an IB completion status, a verbs call's errno, a RAS
  // operation count), in words. Not a diagnosis: that is in `diagnoses`.
  std::string meaning;
  // Commands that follow from the lines themselves (their GIDs, device, pids, peer), each with
  // a "# why". The runbook's commands are in `diagnoses`.
  std::vector<std::string> next;
  // The playbook diagnoses whose culprit host logged these events and whose playbook reads
  // their kind (or explained a playbook that does).
  std::vector<TriageDiagnosis> diagnoses;
  // The replay's host label of each event behind it (TriageHostLabel).
  std::vector<std::string> hosts;
};

struct TriageReport {
  std::vector<TriageFinding> findings;  // failures first, then warnings, then information
  std::vector<std::string> context;     // NCCL versions, network in use, communicators ...
  // Every diagnosis the replay fired, whether or not a finding names it.
  std::vector<TriageDiagnosis> diagnoses;
};

std::string LevelName(TriageFinding::Level level);

// Groups related events (one IB error repeated on every rank is one finding), adds what the
// lines mean, and attaches the `diagnoses` (ReplayThroughPlaybooks on the same events) to the
// findings they cover.
TriageReport AnalyzeEvents(const std::vector<logs::LogEvent>& events,
                           const std::vector<TriageDiagnosis>& diagnoses = {});

}  // namespace railwatch
