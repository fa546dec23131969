#pragma once

// The engine's own record of a diagnosis (an alert, in Prometheus' words): what a playbook's
// state machine keeps from one evaluation to the next, and what the engine hands out (List,
// Get, listeners). The engine knows no proto: the Query API, the watch streams, Alertmanager
// and the state file build their v1::Diagnosis from a record with ToDiagnosis
// (alert_proto.h).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "common/labels.h"
#include "engine/condition.h"
#include "topology/fabric_map.h"

namespace railwatch {

enum class AlertState { kPending, kFiring, kResolved };

// One line of evidence as a diagnosis shows it: a series with the readings that show what
// happened, an event (a log line), or a symptom folded into this diagnosis.
struct AlertEvidence {
  enum class Kind { kSeries, kEvent, kSymptom };
  Kind kind = Kind::kSeries;
  std::string series;  // formatted: name{labels}
  std::string name;    // metric or event kind; "" for a symptom
  Labels labels;
  std::string summary;
  double value = 0;
  int64_t time_unix_nano = 0;
  std::string raw;       // an event's (or symptom's newest event's) log line
  std::string playbook;  // a symptom's playbook
  std::vector<Sample> points;
};

// A symptom result folded into a cause (correlator.h).
struct Symptom {
  std::string playbook;
  Labels labels;
  double value = 0;
  std::string series;  // the first evidence series (or event), formatted
  std::string raw;     // the newest event's raw line, when the symptom came from events
  int64_t first_seen = 0;
  int64_t last_seen = 0;
};

struct AlertRecord {
  // Identity; fixed when the alert starts.
  std::string id;
  std::string playbook;
  std::string key;  // group key (without the playbook)
  Labels labels;    // the first element's labels, topology-enriched
  Labels culprit;
  int severity = 0;     // v1::Severity
  std::string runbook;  // path or URL
  std::string description;
  std::string source;
  std::vector<std::string> tags;
  uint32_t previous_incidents = 0;

  AlertState state = AlertState::kPending;
  int64_t active_since = 0;
  int64_t fired_at = 0;
  int64_t resolved_at = 0;
  int64_t last_evaluated = 0;
  int64_t last_true = 0;  // the last evaluation where its condition held
  // The condition's largest value (in magnitude) while it held, for {{peak}}.
  double peak = 0;
  // The element's labels and value when it last held, for the summary once it is quiet.
  Labels words;
  double last_value = 0;
  // Restored: held (not resolved for lack of data) until then.
  int64_t hold_until = 0;

  // What the enricher (enricher.h) wrote.
  std::string summary;
  std::string location;
  std::string runbook_text;
  std::vector<std::string> commands;
  bool has_blast = false;  // a fabric map was there to work it out
  uint64_t fabric_generation = 0;  // FabricMap::generation() the blast radius was worked out on
  BlastRadius blast;
  double cost_per_minute = 0;
  std::vector<AlertEvidence> evidence;  // series and events; symptoms are listed by ToDiagnosis

  // Correlation: symptoms folded into it by playbook + '\0' + key, the keys it explains in the
  // order they came ("playbook key"), and the cause that explained it away.
  absl::flat_hash_map<std::string, Symptom> symptoms;
  std::vector<std::string> explains;
  std::string explained_by;

  bool firing() const { return state == AlertState::kFiring; }
};

}  // namespace railwatch
