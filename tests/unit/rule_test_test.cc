// The playbook test runner (engine/rule_test.h), its input notation (engine/series_notation.h)
// and the `railwatch rules validate|list|describe|test` commands, on the small rules and test
// files in tests/fixtures/rules.

#include "engine/rule_test.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/commands.h"
#include "engine/series_notation.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace railwatch {
namespace rule_test_test {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kRulesDir = RAILWATCH_FIXTURES_DIR "/rules";
const std::string kTestsDir = RAILWATCH_FIXTURES_DIR "/rules/tests";

std::vector<std::optional<double>> Values(std::initializer_list<std::optional<double>> v) {
  return v;
}

TEST(SeriesNotationTest, ExpandsPromtoolForms) {
  auto expand = [](std::string_view text) {
    absl::StatusOr<std::vector<std::optional<double>>> v = ExpandSeriesValues(text);
    EXPECT_TRUE(v.ok()) << text << ": " << v.status();
    return v.ok() ? *v : std::vector<std::optional<double>>{};
  };
  // The examples of Prometheus' unit-testing documentation.
  EXPECT_EQ(expand("-2+4x3"), Values({-2, 2, 6, 10}));
  EXPECT_EQ(expand(" 1-2x4"), Values({1, -1, -3, -5, -7}));
  EXPECT_EQ(expand(" 1x4"), Values({1, 1, 1, 1, 1}));
  EXPECT_EQ(expand(" 1 _x3 stale"),
            Values({1, std::nullopt, std::nullopt, std::nullopt, std::nullopt}));
  // Several terms; plain numbers; exponents; a counter that jumps.
  EXPECT_EQ(expand("0+2x2 20+20000x1 7 1e3 2.5"), Values({0, 2, 4, 20, 20020, 7, 1000, 2.5}));
  EXPECT_EQ(expand("_ 5"), Values({std::nullopt, 5}));
  EXPECT_EQ(expand("1e+3+1x1"), Values({1000, 1001}));
  // "0x5" is zero six times, not hexadecimal five.
  EXPECT_EQ(expand("0x5"), Values({0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(expand("1.5+0.5x2"), Values({1.5, 2, 2.5}));
  std::vector<std::optional<double>> special = expand("Inf -Inf NaN");
  ASSERT_EQ(special.size(), 3u);
  EXPECT_EQ(*special[0], std::numeric_limits<double>::infinity());
  EXPECT_EQ(*special[1], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(*special[2]));
}

TEST(SeriesNotationTest, ReportsWhereTheNotationIsWrong) {
  struct Case {
    std::string text;
    size_t offset;
    std::string message;
  };
  const Case cases[] = {
      {"0+2x", 4, "repetition count"},
      {"1+", 2, "expected a step"},
      {"1+2", 3, "expected \"x\""},
      {"abc", 0, "expected a number"},
      {"3y", 1, "unexpected character"},
      {"1 2 3x4z", 7, "after the repetition count"},
      {"_y", 1, "expected a blank after \"_\""},
      {"stalex", 5, "expected a blank after \"stale\""},
      {"   ", 0, "no values"},
  };
  for (const Case& c : cases) {
    NotationError err;
    absl::StatusOr<std::vector<std::optional<double>>> v = ExpandSeriesValues(c.text, &err);
    EXPECT_FALSE(v.ok()) << c.text;
    EXPECT_EQ(err.offset, c.offset) << c.text << ": " << err.message;
    EXPECT_THAT(err.message, HasSubstr(c.message)) << c.text;
  }
  NotationError err;
  EXPECT_FALSE(ExpandSeriesValues("0+1x2000000", &err).ok());
  EXPECT_THAT(err.message, HasSubstr("more than 1000000 samples"));
}

TEST(SeriesNotationTest, ParsesSeriesAsWrittenInPromQL) {
  absl::StatusOr<SeriesLiteral> s = ParseSeriesLiteral(
      R"(fabric_pfc_pause_frames_total{switch="leaf-r3", interface='Ethernet12',priority="3",})");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->name, "fabric_pfc_pause_frames_total");
  EXPECT_EQ(s->labels,
            (Labels{{"interface", "Ethernet12"}, {"priority", "3"}, {"switch", "leaf-r3"}}));

  s = ParseSeriesLiteral(R"({__name__="up", host="a\"b\\c", empty=""})");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->name, "up");
  EXPECT_EQ(s->labels, (Labels{{"host", "a\"b\\c"}})) << "an empty value is no label";

  s = ParseSeriesLiteral("railwatch:recorded_total");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->labels.empty());
}

TEST(SeriesNotationTest, ReportsWhereTheSeriesIsWrong) {
  struct Case {
    std::string text;
    size_t offset;
    std::string message;
  };
  const Case cases[] = {
      {R"(m{host=gpu})", 7, "quoted label value"},
      {R"(m{host="a",host="b"})", 11, "given twice"},
      {R"(m{host=~"a"})", 6, "not a regular expression"},
      {R"(m{host="a")", 10, "expected \",\" or \"}\""},
      {R"(m{host="a)", 7, "unterminated string"},
      {R"(m{1="a"})", 2, "label name"},
      {R"({host="a"})", 0, "metric name"},
      {R"(m{a="\q"})", 5, "unknown escape"},
      {R"(m x)", 2, "unexpected text"},
  };
  for (const Case& c : cases) {
    NotationError err;
    EXPECT_FALSE(ParseSeriesLiteral(c.text, &err).ok()) << c.text;
    EXPECT_EQ(err.offset, c.offset) << c.text << ": " << err.message;
    EXPECT_THAT(err.message, HasSubstr(c.message)) << c.text;
  }
}

std::vector<std::string> ProblemTexts(const RuleTestReport& r) {
  std::vector<std::string> out;
  for (const LoadProblem& p : r.problems) out.push_back(p.ToString());
  return out;
}

TEST(RuleTestFileTest, ReportsEveryMistakeWithLineAndColumn) {
  const std::string file = kTestsDir + "/bad.test.yaml";
  RuleTestReport r = RunRuleTestFile(file);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.tests, 0) << "a file with mistakes runs no test";
  const std::string f = file + ":";
  EXPECT_THAT(
      ProblemTexts(r),
      ElementsAre(
          AllOf(HasSubstr(f + "4:1: error[unknown-key]"), HasSubstr("`colour`")),
          AllOf(HasSubstr(f + "7:15: error[bad-value]"), HasSubstr("interval `fast`")),
          AllOf(HasSubstr(f + "9:53: error[bad-series]"), HasSubstr("quoted label value")),
          AllOf(HasSubstr(f + "12:22: error[bad-values]"), HasSubstr("repetition count")),
          AllOf(HasSubstr(f + "13:9: error[missing-key]"), HasSubstr("`series`")),
          AllOf(HasSubstr(f + "15:48: error[bad-value]"), HasSubstr("time `soon`")),
          AllOf(HasSubstr(f + "18:19: error[unknown-playbook]"),
                HasSubstr("no playbook \"no_such_playbook\""),
                HasSubstr("completion_errors, pause_flood")),
          AllOf(HasSubstr(f + "20:20: error[bad-state]"), HasSubstr("`resolved`")),
          AllOf(HasSubstr(f + "21:13: error[unknown-key]"),
                HasSubstr("`culprits` in an expected diagnosis (did you mean `culprit`?)")),
          AllOf(HasSubstr(f + "22:5: error[no-expectations]"), HasSubstr("expects nothing"))));
}

TEST(RuleTestFileTest, ReportsMissingRulesAndTopology) {
  const std::string path = kTestsDir + "/in-memory.test.yaml";
  RuleTestReport r = RunRuleTestText(
      "rule_files: [no-such-rules.yaml]\n"
      "topology: no-such-topology.yaml\n"
      "tests:\n"
      "  - name: t\n"
      "    expected_diagnoses:\n"
      "      - {eval_time: 0s, diagnoses: []}\n",
      path);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.tests, 0);
  EXPECT_THAT(
      ProblemTexts(r),
      ElementsAre(AllOf(HasSubstr(kTestsDir + "/no-such-rules.yaml: error[unreadable]")),
                  AllOf(HasSubstr(kTestsDir + "/no-such-topology.yaml: error[bad-topology]"))));

  r = RunRuleTestText("tests: [\n", path);
  EXPECT_THAT(ProblemTexts(r), ElementsAre(HasSubstr(path + ":2:1: error[yaml-syntax]")));
  r = RunRuleTestText("- just a list\n", path);
  EXPECT_THAT(ProblemTexts(r),
              ElementsAre(HasSubstr("error[bad-type]: a test file must be a mapping")));
}

TEST(RuleTestRunnerTest, PassingTestsPass) {
  RuleTestReport r = RunRuleTestFile(kTestsDir + "/pass.test.yaml");
  EXPECT_THAT(ProblemTexts(r), ::testing::IsEmpty());
  EXPECT_EQ(r.tests, 4);
  EXPECT_EQ(r.failed_tests, 0);
  EXPECT_THAT(r.failures, ::testing::IsEmpty());
  EXPECT_TRUE(r.ok());
}

TEST(RuleTestRunnerTest, FailingTestsFailWithWhatWasExpectedAndWhatWasFound) {
  const std::string file = kTestsDir + "/fail.test.yaml";
  RuleTestReport r = RunRuleTestFile(file);
  EXPECT_THAT(ProblemTexts(r), ::testing::IsEmpty());
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.tests, 4);
  EXPECT_EQ(r.failed_tests, 3) << "the first test passes";
  ASSERT_EQ(r.failures.size(), 4u) << absl::StrJoin(r.failures, "\n");

  const std::string found =
      R"(pause_flood firing {host="gpu-node-1",interface="eth0",priority="3"})";
  // The wrong host: where, which test, which field differs, and what is active.
  EXPECT_THAT(
      r.failures[0],
      AllOf(HasSubstr(file + ":19:9: test \"names the wrong host\": at 5s, pause_flood:"),
            HasSubstr("expected 1 active diagnosis, found 1"),
            HasSubstr("missing (line 22): firing, culprit {host=\"gpu-node-2\"}"),
            HasSubstr("culprit host is \"gpu-node-1\", not \"gpu-node-2\""),
            HasSubstr("unexpected: " + found), HasSubstr("active diagnoses at 5s:\n    " + found)));
  // Silence expected from every playbook while one fires.
  EXPECT_THAT(
      r.failures[1],
      AllOf(HasSubstr(file + ":29:9: test \"expects silence during a flood\": at 5s, "
                             "any playbook:"),
            HasSubstr("expected 0 active diagnoses, found 1"), HasSubstr("unexpected: " + found)));
  // Firing before `for:` has passed; evidence and commands that are not there.
  EXPECT_THAT(r.failures[2], AllOf(HasSubstr(file + ":39:9: test \"expects firing too early"),
                                   HasSubstr("at 2s"), HasSubstr("state is pending, not firing")));
  EXPECT_THAT(r.failures[3],
              AllOf(HasSubstr(file + ":44:9:"), HasSubstr("at 5s"),
                    HasSubstr("no evidence contains \"no_such_series\" (evidence: "
                              "fabric_pfc_pause_frames_total{"),
                    HasSubstr("no runbook command contains \"reboot\" (commands: ssh gpu-node-1 "
                              "ethtool -S eth0 | grep pause)"),
                    Not(HasSubstr("state is"))));
}

TEST(RuleTestRunnerTest, EvaluatesEveryIntervalAndAtEachEvalTime) {
  // Evaluations at 0s, 3s (an eval_time) and 10s: at 3s the flood is first seen (pending),
  // although it began at 1s; at 10s it has held for 7s > `for: 2s` and fires.
  const std::string text =
      "evaluation_interval: 10s\n"
      "tests:\n"
      "  - name: steps\n"
      "    interval: 1s\n"
      "    input_series:\n"
      "      - series: fabric_pfc_pause_frames_total{host=\"h\",interface=\"e\",priority=\"3\","
      "direction=\"tx\"}\n"
      "        values: 0+20000x20\n"
      "    expected_diagnoses:\n"
      "      - {eval_time: 0s, diagnoses: []}\n"
      "      - eval_time: 3s\n"
      "        diagnoses: [{playbook: pause_flood, state: pending, culprit: {host: h}}]\n"
      "      - eval_time: 10s\n"
      "        diagnoses: [{playbook: pause_flood, state: firing, culprit: {host: h}}]\n";
  RuleTestReport r = RunRuleTestText(text, kTestsDir + "/steps.test.yaml");
  EXPECT_THAT(ProblemTexts(r), ::testing::IsEmpty());
  EXPECT_EQ(r.tests, 1);
  EXPECT_THAT(r.failures, ::testing::IsEmpty());

  // The same with the daemon's 1s interval: firing by 3s.
  std::string every_second = text;
  every_second.replace(every_second.find("10s\n"), 4, "1s\n");
  r = RunRuleTestText(every_second, kTestsDir + "/steps.test.yaml");
  EXPECT_EQ(r.failed_tests, 1);
  ASSERT_EQ(r.failures.size(), 1u);
  EXPECT_THAT(r.failures[0], AllOf(HasSubstr("steps.test.yaml:10:9: test \"steps\": at 3s"),
                                   HasSubstr("state is firing, not pending")));
}

TEST(RuleTestRunnerTest, RefusesTheSameSeriesTwice) {
  RuleTestReport r = RunRuleTestText(
      "tests:\n"
      "  - input_series:\n"
      "      - {series: 'm{a=\"1\",b=\"2\"}', values: '1'}\n"
      "      - {series: 'm{b=\"2\", a=\"1\"}', values: '2'}\n"
      "    expected_diagnoses: [{eval_time: 0s, diagnoses: []}]\n",
      kTestsDir + "/dup.test.yaml");
  EXPECT_THAT(ProblemTexts(r),
              ElementsAre(kTestsDir + "/dup.test.yaml:4:9: error[duplicate-series]: series "
                                      "m{a=\"1\",b=\"2\"} is given twice"));
}

TEST(RuleTestRunnerTest, FindsTestFilesInDirectories) {
  std::vector<LoadProblem> problems;
  std::vector<std::string> files =
      FindRuleTestFiles({kTestsDir, kTestsDir + "/pass.test.yaml", kTestsDir + "/nope"}, problems);
  EXPECT_THAT(files, ElementsAre(kTestsDir + "/bad.test.yaml", kTestsDir + "/fail.test.yaml",
                                 kTestsDir + "/pass.test.yaml", kTestsDir + "/pass.test.yaml"));
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].ToString(),
            kTestsDir + "/nope: error[not-found]: no such file or directory");
  problems.clear();
  EXPECT_TRUE(FindRuleTestFiles({kRulesDir + "/runbooks"}, problems).empty());
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].code, "no-tests");
}

// ---- The commands, in-process. ----

struct CliResult {
  int code;
  std::string out, err;
};

CliResult RunCli(std::vector<std::string> args, bool json = false, std::string rules_dir = "") {
  CliOptions o;
  o.json = json;
  o.rules_dir = std::move(rules_dir);
  std::ostringstream out, err;
  int code = RunCommand(args, o, out, err);
  return {code, out.str(), err.str()};
}

TEST(RulesCommandTest, ValidateCountsPlaybooksListsAndMacros) {
  CliResult r = RunCli({"rules", "validate", kRulesDir});
  EXPECT_EQ(r.code, kExitOk) << r.out << r.err;
  EXPECT_EQ(r.out, "2 playbooks, 1 list, 1 macro OK\n");
  // The default path (the daemon's --rules default in the real binary).
  r = RunCli({"rules", "validate"}, false, kRulesDir);
  EXPECT_EQ(r.code, kExitOk) << r.out << r.err;
  EXPECT_EQ(r.out, "2 playbooks, 1 list, 1 macro OK\n");
  r = RunCli({"rules", "validate"});
  EXPECT_EQ(r.code, kExitUsage);
}

TEST(RulesCommandTest, ValidateReportsEveryProblem) {
  const std::string dir = ::testing::TempDir() + "/rules_validate_bad";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/bad.yaml") << "- playbook: broken\n"
                                      "  desc: x\n"
                                      "  condition: rate(fabric_rdma_link_downed_total[5m]) >\n"
                                      "  runbook: https://example.com/x\n"
                                      "- playbook: loud\n"
                                      "  desc: x\n"
                                      "  condition: fabric_rdma_port_state > 1\n"
                                      "  severity: loud\n"
                                      "  runbook: https://example.com/x\n";
  CliResult r = RunCli({"rules", "validate", dir});
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.out, AllOf(HasSubstr(dir + "/bad.yaml:3:"), HasSubstr("error[bad-condition]"),
                           HasSubstr(dir + "/bad.yaml:8:13: error[bad-severity]"),
                           HasSubstr("2 errors, 0 warnings in " + dir)));
}

// Issue 20: a condition that reads a series no agent sends never fires; validate says so,
// where, and what was probably meant.
TEST(RulesCommandTest, ValidateRejectsASeriesNoAgentSends) {
  const std::string dir = ::testing::TempDir() + "/rules_validate_typo";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/typo.yaml") << "- playbook: typo\n"
                                       "  desc: x\n"
                                       "  condition: increase(fabric_rdma_link_down_total[5m]) > 0\n"
                                       "  runbook: https://example.com/x\n";
  CliResult r = RunCli({"rules", "validate", dir});
  EXPECT_EQ(r.code, kExitInvalid) << r.out << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr(dir + "/typo.yaml:3:23: error[unknown-metric]"),
                           HasSubstr("'fabric_rdma_link_down_total'"),
                           HasSubstr("did you mean 'fabric_rdma_link_downed_total'?"),
                           HasSubstr("1 error, 0 warnings in " + dir)))
      << r.out;
}

TEST(RulesCommandTest, ListsPlaybooks) {
  CliResult r = RunCli({"rules", "list", kRulesDir});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, AllOf(HasSubstr("PLAYBOOK"), HasSubstr("SOURCE"), HasSubstr("pause_flood"),
                           HasSubstr("critical"), HasSubstr("pfc,test"),
                           HasSubstr(kRulesDir + "/tiny.yaml:11:3")));
  r = RunCli({"rules", "list", kRulesDir}, /*json=*/true);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[0]["name"], "pause_flood");
  EXPECT_EQ(j[0]["for"], "2s");
  EXPECT_EQ(j[0]["tags"], nlohmann::json({"pfc", "test"}));
  EXPECT_EQ(j[1]["name"], "completion_errors");
  EXPECT_EQ(j[1]["severity"], "warning");
}

TEST(RulesCommandTest, DescribesOnePlaybook) {
  CliResult r = RunCli({"rules", "describe", "pause_flood", kRulesDir});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(
      r.out, AllOf(HasSubstr("pause_flood (critical)"),
                   HasSubstr("source           " + kRulesDir + "/tiny.yaml:11:3"),
                   HasSubstr("condition\n    tx_pause_rate > 1000\n"), HasSubstr("canonical\n    "),
                   HasSubstr("reads metrics    fabric_pfc_pause_frames_total\n"),
                   HasSubstr("for              2s\n"),
                   HasSubstr("culprit          host, interface, priority\n"),
                   HasSubstr("group_by         (culprit)\n"),
                   HasSubstr("explains         completion_errors (same_host"),
                   HasSubstr(kRulesDir + "/runbooks/pause-flood.md")));
  r = RunCli({"rules", "describe", "completion_errors", kRulesDir});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("reads events     nccl.ib_completion_error\n"));
  r = RunCli({"rules", "describe", "completion_errors", kRulesDir}, /*json=*/true);
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["event_kinds"], nlohmann::json({"nccl.ib_completion_error"}));
  EXPECT_EQ(j["culprit"], nlohmann::json({"host"}));

  r = RunCli({"rules", "describe", "nope", kRulesDir});
  EXPECT_EQ(r.code, kExitNotFound);
  EXPECT_THAT(r.err, HasSubstr("no playbook \"nope\""));
  EXPECT_THAT(r.err, HasSubstr("(playbooks: completion_errors, pause_flood)"));
  EXPECT_EQ(RunCli({"rules", "describe"}).code, kExitUsage);
}

TEST(RulesCommandTest, TestRunsFilesAndDirectories) {
  CliResult r = RunCli({"rules", "test", kTestsDir + "/pass.test.yaml"});
  EXPECT_EQ(r.code, kExitOk) << r.out;
  EXPECT_EQ(r.out, "ok " + kTestsDir + "/pass.test.yaml: 4 tests\n");

  r = RunCli({"rules", "test", kTestsDir});
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.out,
              AllOf(HasSubstr("FAILED " + kTestsDir + "/bad.test.yaml: not run (10 problems)"),
                    HasSubstr("FAILED " + kTestsDir + "/fail.test.yaml: 3 of 4 tests failed"),
                    HasSubstr("culprit host is \"gpu-node-1\", not \"gpu-node-2\""),
                    HasSubstr("ok " + kTestsDir + "/pass.test.yaml: 4 tests"),
                    HasSubstr("3 files, 8 tests, 3 failed")));
  EXPECT_EQ(RunCli({"rules", "test"}).code, kExitUsage);
  EXPECT_EQ(RunCli({"rules", "test", kTestsDir + "/nope"}).code, kExitInvalid);
  EXPECT_EQ(RunCli({"rules", "frobnicate"}).code, kExitUsage);
}

}  // namespace
}  // namespace railwatch
