#pragma once

// Playbook unit tests in the spirit of `promtool test rules`: a test file (YAML, read by
// engine/rule_test_file.h) gives input series in promtool's notation and input events, and the
// diagnoses expected at given times; the runner plays them into a fresh SeriesStore and
// EventStore, evaluates the real Engine step by step on a FakeClock and compares. The file
// format is in docs/PLAYBOOKS.md, "Testing playbooks".

#include <string>
#include <vector>

#include "engine/playbook.h"

namespace railwatch {

struct RuleTestReport {
  std::string file;
  // Problems that kept the file (or all of it) from running: its own syntax, the rules it
  // loads, the topology, unknown playbooks. file:line:column each.
  std::vector<LoadProblem> problems;
  int tests = 0;         // tests run
  int failed_tests = 0;  // tests with at least one failed expectation
  // One block of text per failed expectation: where, which test, what was expected, what was
  // found (every active diagnosis with its culprit).
  std::vector<std::string> failures;

  bool ok() const;
};

// Fixed start of every test: sample i of a series is at kRuleTestStart + i * interval.
inline constexpr int64_t kRuleTestStartUnixSeconds = 1'700'000'000;

// Reads and runs one test file. Relative paths in it (rule_files, topology) are resolved
// against its directory; without rule_files, every *.yaml in the directory above it is loaded
// (rules/tests/x.test.yaml tests rules/).
RuleTestReport RunRuleTestFile(const std::string& path);

// The same for a file's text; `path` names it in messages and anchors relative paths.
RuleTestReport RunRuleTestText(const std::string& text, const std::string& path);

// Test files named by `paths`: files as given, directories as every *.test.yaml in them
// (non-recursive, in name order). A path that does not exist is a problem.
std::vector<std::string> FindRuleTestFiles(const std::vector<std::string>& paths,
                                           std::vector<LoadProblem>& problems);

}  // namespace railwatch
