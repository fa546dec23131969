#pragma once

// The engine's active diagnoses on disk, so that a restarted railwatchd neither pages again
// for an incident it had already announced nor forgets it (docs/OPERATIONS.md, "State").
//
// One JSON file, written whole and atomically (a temporary file, fsync, rename, fsync of the
// directory): a crash leaves the previous version or the new one, never half of one. Each
// diagnosis is the Query API's Diagnosis message (protobuf JSON) plus what the engine needs to
// carry it on: its group key and labels, when its condition last held and the symptoms folded
// into it; beside them, the times of earlier incidents (repeat offenders).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/labels.h"
#include "railwatch/v1/query.pb.h"

namespace railwatch {

struct SavedSymptom {
  std::string playbook;
  std::string key;
  Labels labels;
  double value = 0;
  std::string series;
  std::string raw;
  int64_t first_seen_unix_nano = 0;
  int64_t last_seen_unix_nano = 0;
};

struct SavedDiagnosis {
  std::string key;  // the group key, without the playbook
  Labels labels;    // the labels it was first seen with (topology-enriched)
  int64_t last_true_unix_nano = 0;
  v1::Diagnosis diagnosis;  // pending or firing
  std::vector<SavedSymptom> symptoms;
};

struct SavedIncidents {
  std::string playbook;
  std::string key;
  std::vector<int64_t> resolved_unix_nano;  // oldest first
};

struct EngineState {
  int64_t saved_at_unix_nano = 0;
  std::vector<SavedDiagnosis> diagnoses;
  std::vector<SavedIncidents> incidents;
};

// The file's text, and back. Errors say what is wrong and where ("line 3, column 7: ...",
// "diagnoses[2].key: not a string").
std::string StateToJson(const EngineState& state);
absl::StatusOr<EngineState> StateFromJson(absl::string_view text);

// Writes `path` atomically (path.tmp, fsync, rename, fsync of the directory).
absl::Status WriteStateFile(const std::string& path, const EngineState& state);

// NotFoundError when there is no file; any other error names the file and what is wrong.
absl::StatusOr<EngineState> ReadStateFile(const std::string& path);

// Renames a bad state file to <path>.corrupt-<UTC time>, keeping it for a post-mortem; returns
// the new name.
absl::StatusOr<std::string> MoveStateFileAside(const std::string& path, absl::Time now);

}  // namespace railwatch
