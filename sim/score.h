#pragma once

// Scoring a run of a scenario (docs/SCENARIOS.md "Scoring"): the simulator's ground truth and
// the diagnoses of one system (railwatch, or the baseline) -> per fault: detected, delay, right
// culprit; the false diagnoses; pass or fail against the scenario's expect: block. Printed as a
// table for people and as JSON for scripts.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "railwatch/v1/query.pb.h"
#include "sim/scenario.h"

namespace railwatch::sim {

// One line of the ground truth: a fault ("fault": KIND) or noise ("noise": KIND).
struct TruthRecord {
  std::string kind;
  bool noise = false;
  std::map<std::string, std::string> fields;  // scalars as text: "host", "device", "caused_by"
  int64_t at_unix_nano = 0;                   // injected_at_unix_nano (noise: at_unix_nano)
  int line = 0;

  std::string Field(const std::string& name) const {
    auto it = fields.find(name);
    return it == fields.end() ? "" : it->second;
  }
  bool Has(const std::string& name) const { return fields.count(name) > 0; }
};

// JSON lines; `file` names them in errors (FILE:LINE: ...).
absl::StatusOr<std::vector<TruthRecord>> ParseGroundTruth(absl::string_view text,
                                                          const std::string& file);
// What `railwatch diagnoses --state=all --json` prints (ListDiagnosesResponse as JSON).
absl::StatusOr<v1::ListDiagnosesResponse> ParseDiagnosesJson(absl::string_view text,
                                                             const std::string& file);

struct FaultScore {
  std::string kind;  // the scenario's kind
  std::string at;    // its offset, as written: "20s"
  std::string playbook;
  std::vector<std::pair<std::string, std::string>> culprit;  // the labels it must carry
  bool injected = false;                                     // in the ground truth
  int64_t injected_at_unix_nano = 0;
  bool detected = false;
  int64_t delay_ms = 0;
  std::optional<int64_t> target_ms;
  bool right_culprit = false;
  std::string diagnosis_id;
  std::string diagnosis_culprit;  // "host=... device=..." of the diagnosis counted

  std::optional<bool> within_target() const {
    if (!target_ms || !detected) return std::nullopt;
    return delay_ms <= *target_ms;
  }
};

struct FalseDiagnosis {
  std::string id, playbook, summary;
  std::vector<std::pair<std::string, std::string>> culprit;
  int64_t fired_at_unix_nano = 0;
  std::string why;  // "before the first fault", "matches no fault"
};

struct ScenarioScore {
  std::string name;
  std::string system = "railwatch";
  int hosts = 0;
  double duration_s = 0;
  double setup_s = 0;               // sim start -> everything connected (runner only; 0: unknown)
  int64_t sim_start_unix_nano = 0;  // to print offsets; 0: estimated from the ground truth
  std::vector<FaultScore> faults;
  std::vector<FalseDiagnosis> false_diagnoses;
  double false_per_host_hour = 0;
  bool passed = false;
  std::vector<std::string> problems;
  std::string error;  // the run broke before it could be scored (runner only)
};

struct ScoreInput {
  const Scenario* scenario = nullptr;
  std::vector<TruthRecord> truth;
  v1::ListDiagnosesResponse diagnoses;
  std::string system = "railwatch";
  absl::Duration duration;  // what ran (the scenario's, plus the baseline's tail); 0: scenario's
  int64_t sim_start_unix_nano = 0;
};

ScenarioScore ScoreScenario(const ScoreInput& in);

// One row per fault and a summary line per scenario; two systems of one scenario side by side;
// a summary per system at the end.
std::string ScoreTable(const std::vector<ScenarioScore>& scores, bool with_summary = true);
// The last lines of ScoreTable: one summary line per system.
std::string ScoreSummary(const std::vector<ScenarioScore>& scores);
// {"scenarios": [...], "summary": {...}} (docs/SCENARIOS.md). The summary counts system
// railwatch's scenarios only; other systems' have their own under "summary_by_system".
std::string ScoreJson(const std::vector<ScenarioScore>& scores);

}  // namespace railwatch::sim
