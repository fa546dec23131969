#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "engine/condition.h"
#include "railwatch/v1/query.pb.h"

namespace railwatch {

// One playbook item of a rules file, after validation.
struct Playbook {
  std::string name;
  std::string desc;
  std::string condition_text;
  std::unique_ptr<Condition> condition;
  absl::Duration for_duration = absl::ZeroDuration();
  absl::Duration keep_firing_for = absl::ZeroDuration();
  v1::Severity severity = v1::SEVERITY_WARNING;
  // Labels of a result that name the culprit; empty means all of them.
  std::vector<std::string> culprit;
  // One-line summary with {{label}} and {{value}} placeholders.
  std::string summary;
  // Absolute path of the runbook (resolved against the rules file's directory) or a URL.
  std::string runbook;
  std::vector<std::string> tags;
  bool enabled = true;
  // Where it was defined, for messages: "rules/link-flap.yaml:3:3".
  std::string source;
};

struct LoadProblem {
  enum class Level { kError, kWarning };
  Level level = Level::kError;
  std::string file;
  int line = 0;    // 1-based; 0 when the problem concerns the whole file
  int column = 0;  // 1-based
  std::string code;  // stable identifier, e.g. "unknown-key", "bad-condition"
  std::string message;

  // file:line:column: error[code]: message
  std::string ToString() const;
};

struct LoadResult {
  std::vector<Playbook> playbooks;
  std::vector<LoadProblem> problems;
  bool ok() const;  // no errors (warnings allowed)
};

// Loads every *.yaml / *.yml file of each path (a file or a directory, non-recursive, in name
// order). All problems are collected; a broken item is skipped and the rest are loaded.
LoadResult LoadPlaybooks(const std::vector<std::string>& paths);

// Loads one document given as text; `file` is used in messages and to resolve runbooks.
void LoadPlaybooksFromString(const std::string& text, const std::string& file, LoadResult& out);

}  // namespace railwatch
