#pragma once

// A playbook test file (docs/PLAYBOOKS.md, "Testing playbooks"), as read from YAML: input
// series and events, and the diagnoses expected at given times. Reading it reports every
// problem with file:line:column; running it is engine/rule_test.h.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/labels.h"
#include "engine/playbook.h"
#include "railwatch/v1/query.pb.h"

namespace railwatch {

// Where something was written in the test file (1-based).
struct TestFilePos {
  int line = 0;
  int column = 0;
};

struct TestInputSeries {
  TestFilePos pos;
  std::string name;
  Labels labels;
  std::vector<std::optional<double>> values;  // one per test interval; nullopt: no sample
};

struct TestInputEvent {
  TestFilePos pos;
  absl::Duration time;  // from the test's start
  std::string kind;
  Labels labels;
  std::vector<std::pair<std::string, std::string>> attributes;
  std::string raw;
};

// What one active diagnosis must look like; every field that is set must hold.
struct ExpectedDiagnosis {
  TestFilePos pos;
  std::optional<std::string> playbook;  // when the expectation names none
  v1::DiagnosisState state = v1::DIAGNOSIS_STATE_FIRING;
  Labels culprit;  // subset of the diagnosis' culprit
  std::optional<std::string> summary;
  std::optional<std::string> summary_contains;
  std::optional<std::string> location_contains;
  std::vector<std::string> evidence_contains;  // each in some evidence's series or raw text
  std::vector<std::string> commands_contain;   // each in some runbook command
  std::optional<int64_t> explains_at_least;
  std::optional<int64_t> previous_incidents;
  struct Blast {
    std::optional<std::string> scope;
    std::optional<int64_t> gpus;
    std::optional<std::vector<std::string>> jobs;   // exactly these job names, any order
    std::optional<std::vector<std::string>> hosts;  // exactly these hosts, any order
    std::optional<double> cost_per_minute;
  };
  std::optional<Blast> blast_radius;
};

// The active (pending or firing) diagnoses of one playbook at one time: exactly these.
struct DiagnosisExpectation {
  TestFilePos pos;
  absl::Duration eval_time;
  std::string playbook;  // empty: every playbook
  TestFilePos playbook_pos;
  std::vector<ExpectedDiagnosis> diagnoses;
};

struct RuleTestCase {
  TestFilePos pos;
  std::string name;
  absl::Duration interval;  // spacing of input values
  std::vector<TestInputSeries> input_series;
  std::vector<TestInputEvent> input_events;
  std::vector<DiagnosisExpectation> expectations;
};

struct RuleTestFile {
  std::string path;
  std::vector<std::string> rule_files;  // resolved against the test file's directory
  std::string topology;                 // resolved; empty: none
  absl::Duration evaluation_interval = absl::Seconds(1);
  std::optional<double> gpu_hour_cost;
  std::vector<RuleTestCase> tests;
};

// Reads a test file's text; `path` names it in problems and anchors relative paths. Every
// problem is appended to `problems` (level error unless said otherwise); the result is only
// meaningful when none is an error.
RuleTestFile ParseRuleTestFile(const std::string& text, const std::string& path,
                               std::vector<LoadProblem>& problems);

}  // namespace railwatch
