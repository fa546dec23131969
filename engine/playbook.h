#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/yaml_reader.h"
#include "engine/condition.h"
#include "railwatch/v1/query.pb.h"

namespace railwatch {

// How a root-cause playbook claims the results of a symptom playbook: a symptom whose
// element is related to an active diagnosis of this playbook becomes evidence of it instead
// of a diagnosis of its own (docs/PLAYBOOKS.md, "One incident, one diagnosis").
struct ExplainRule {
  std::vector<std::string> playbooks;  // symptom playbooks
  // same_node, same_host, same_link, same_rail, same_leaf, same_job, or fabric (within
  // `hops` cable hops of the culprit). Relations compare topology-enriched labels.
  std::string relation = "same_host";
  int hops = 2;
  // Labels that must also be equal on cause and symptom (Alertmanager's inhibit `equal`).
  std::vector<std::string> equal;
  // A symptom may have started up to this long before the cause (logs arrive late, counters
  // are sampled).
  absl::Duration lead = absl::Minutes(2);
  std::string source;  // file:line:column
};

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
  // Labels that key one incident when a result has all of them (e.g. [link], so both ends of
  // a cable are one diagnosis); otherwise the culprit labels key it.
  std::vector<std::string> group_by;
  // Blast radius scope: host, leaf, rail, job or fabric (FabricMap::Blast).
  std::string blast_radius = "host";
  std::vector<ExplainRule> explains;
  // One-line summary with {{label}}, {{value}} and {{peak}} placeholders (diagnosis_text.h).
  std::string summary;
  // The summary once the condition no longer holds but the diagnosis is kept firing
  // (keep_firing_for): what happened, in the past tense, with {{peak}} and {{quiet_since}}.
  // Empty: the summary as it last read, with "; quiet since <time>" after it.
  std::string summary_quiet;
  // Absolute path of the runbook (resolved against the rules file's directory) or a URL.
  std::string runbook;
  std::vector<std::string> tags;
  bool enabled = true;
  // Where it was defined, for messages: "rules/link-flap.yaml:3:3".
  std::string source;
};

struct LoadResult {
  std::vector<Playbook> playbooks;
  std::vector<LoadProblem> problems;
  bool ok() const;  // no errors (warnings allowed)
};

// Loads every *.yaml / *.yml file of each path (a file or a directory, non-recursive, in name
// order). All problems are collected; a broken item is skipped and the rest are loaded.
//
// Items: `list` (named values for `in` matchers), `macro` (named condition fragments) and
// `playbook`. A later item with `override:` changes an earlier one of the same name without
// editing its file: `override: {condition: append, tags: append, for: replace, ...}` (or an
// item that gives only `enabled:`). Lists and macros may be used by any file, before or after
// their definition; conditions are parsed once every file is read.
//
// A condition may only read series that agents send (common/vocabulary.h: SeriesNames()): a
// misspelt name is an error[unknown-metric] at its column, with the nearest name suggested.
struct PlaybookLoadOptions {
  // Off only for tests of the engine's mechanics that use made-up series names.
  bool check_metric_names = true;
};
LoadResult LoadPlaybooks(const std::vector<std::string>& paths,
                         const PlaybookLoadOptions& options = {});

// Loads one document given as text; `file` is used in messages and to resolve runbooks.
void LoadPlaybooksFromString(const std::string& text, const std::string& file, LoadResult& out,
                             const PlaybookLoadOptions& options = {});

}  // namespace railwatch
