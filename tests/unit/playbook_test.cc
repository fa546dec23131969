#include "engine/playbook.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "common/vocabulary.h"
#include "engine/diagnosis_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/ttar.h"

namespace railwatch {
namespace playbook_test {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(LoadPlaybooks, ShippedRulesLoadCleanly) {
  LoadResult r = LoadPlaybooks({RAILWATCH_RULES_SOURCE_DIR});
  for (const LoadProblem& p : r.problems) ADD_FAILURE() << p.ToString();
  std::vector<std::string> names;
  for (const Playbook& pb : r.playbooks) {
    names.push_back(pb.name);
    EXPECT_TRUE(pb.enabled) << pb.name;
    EXPECT_TRUE(std::filesystem::exists(pb.runbook)) << pb.name << ": " << pb.runbook;
    EXPECT_FALSE(pb.culprit.empty()) << pb.name;
  }
  // The production playbooks of issue 5 (docs/PLAYBOOKS.md), topology_mismatch (issue 21) and
  // InfiniBand's own (issue 22), straggler_rank and job_hang from NCCL's
  // Inspector and RAS (issue 23) with communication_bound, link and NIC health (issue 24).
  EXPECT_THAT(names, ::testing::UnorderedElementsAre(
                         "pfc_storm", "pfc_pause_relay", "pfc_deadlock", "link_flap",
                         "link_degradation", "straggler_rail", "ecn_misconfiguration",
                         "roce_retransmissions", "wrong_traffic_class", "nic_gone", "topology_mismatch",
                         "nccl_failure", "ib_congestion", "ib_transmit_discards",
                         "ib_link_downtrained", "ib_link_ber", "ib_cable_hot",
                         "ib_cable_alarm", "straggler_rank", "job_hang", "link_at_risk",
                         "nic_unhealthy", "nic_failing", "pcie_degraded",
                         "pcie_uncorrectable", "communication_bound"));
  auto it = std::find_if(r.playbooks.begin(), r.playbooks.end(),
                         [](const Playbook& p) { return p.name == "link_flap"; });
  ASSERT_NE(it, r.playbooks.end());
  EXPECT_EQ(it->severity, v1::SEVERITY_CRITICAL);
  EXPECT_EQ(it->group_by, (std::vector<std::string>{"link"}));
  EXPECT_THAT(it->runbook, HasSubstr("runbooks/link-flap.md"));
  EXPECT_THAT(it->condition->ToString(), HasSubstr("fabric_rdma_link_downed_total[5m]"));
}

// Agents read the vocabulary's detail series only every --detail_interval (10 s, issue 19 item 9):
// a shipped playbook or dashboard that read one would see a point every ten seconds.
TEST(LoadPlaybooks, NoShippedPlaybookOrDashboardReadsADetailSeries) {
  LoadResult r = LoadPlaybooks({RAILWATCH_RULES_SOURCE_DIR});
  ASSERT_FALSE(r.playbooks.empty());
  size_t names_read = 0;
  for (const Playbook& pb : r.playbooks) {
    std::vector<std::string> names;
    pb.condition->CollectMetricNames(names);
    names_read += names.size();
    for (const std::string& name : names) {
      const MetricSpec* spec = FindMetric(name);
      EXPECT_FALSE(spec != nullptr && spec->detail) << pb.name << " reads detail series " << name;
    }
  }
  EXPECT_GT(names_read, r.playbooks.size());
  size_t dashboards = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(RAILWATCH_SOURCE_DIR) + "/dashboards/json")) {
    if (entry.path().extension() != ".json") continue;
    ++dashboards;
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const MetricSpec& spec : CanonicalMetrics()) {
      if (!spec.detail) continue;
      EXPECT_EQ(text.find(spec.name), std::string::npos)
          << entry.path().filename() << " reads detail series " << spec.name;
    }
  }
  EXPECT_GT(dashboards, 0u);
}

// At 3 AM the first command is the one that confirms the culprit on the culprit (issue 19 item
// 10): it runs on the culprit's host or switch, not `railwatch diagnoses`. An InfiniBand switch
// is reached in-band, from any host on the fabric, by its GUID.
TEST(LoadPlaybooks, EveryShippedRunbooksFirstCommandRunsOnTheCulprit) {
  LoadResult r = LoadPlaybooks({RAILWATCH_RULES_SOURCE_DIR});
  for (const Playbook& pb : r.playbooks) {
    std::ifstream in(pb.runbook);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::vector<std::string> commands = RunbookCommands(text);
    ASSERT_FALSE(commands.empty()) << pb.name << ": no commands in " << pb.runbook;
    EXPECT_THAT(commands[0], ::testing::AnyOf(HasSubstr("{{host}}"), HasSubstr("{{switch}}"),
                                              HasSubstr("{{node}}"), HasSubstr("{{guid}}")))
        << pb.name << ": the first command does not run on the culprit: " << commands[0];
    EXPECT_FALSE(commands[0].starts_with("railwatch ")) << pb.name;
  }
}

TEST(LoadPlaybooks, EveryProblemWithFileLineColumn) {
  const std::string text =
      "- playbook: good\n"                                   // 1
      "  desc: fine\n"                                       // 2
      "  condition: increase(a_total[5m]) > 0\n"             // 3
      "  runbook: https://runbooks.example/good\n"           // 4
      "- playbook: broken_condition\n"                       // 5
      "  desc: x\n"                                          // 6
      "  condition: increase(a_total[5m] > 0\n"              // 7
      "  runbook: https://runbooks.example/x\n"              // 8
      "- playbook: bad_fields\n"                             // 9
      "  desc: y\n"                                          // 10
      "  condition: a_total > 1\n"                           // 11
      "  severity: urgent\n"                                 // 12
      "  for: 5 minutes\n"                                   // 13
      "  colour: blue\n"                                     // 14
      "  runbook: https://runbooks.example/y\n"              // 15
      "- playbook: missing_condition\n"                      // 16
      "  desc: z\n"                                          // 17
      "  runbook: https://runbooks.example/z\n";             // 18
  LoadResult r;
  // Made-up series names: the vocabulary check has its own test below.
  LoadPlaybooksFromString(text, "test.yaml", r, {.check_metric_names = false});
  ASSERT_EQ(r.playbooks.size(), 1u);
  EXPECT_EQ(r.playbooks[0].name, "good");
  EXPECT_FALSE(r.ok());

  std::vector<std::string> got;
  for (const LoadProblem& p : r.problems) got.push_back(p.ToString());
  // The condition error points at the character where ")" was expected: the value starts at
  // column 14 and the ">" is 21 characters into it.
  EXPECT_THAT(got, ::testing::Contains(HasSubstr("test.yaml:7:35: error[bad-condition]")));
  EXPECT_THAT(got, ::testing::Contains(HasSubstr("test.yaml:12:13: error[bad-severity]")));
  EXPECT_THAT(got, ::testing::Contains(HasSubstr("test.yaml:13:8: error[bad-value]: for `5 minutes` is not a duration")));
  EXPECT_THAT(got, ::testing::Contains(HasSubstr("test.yaml:14:3: warning[unknown-key]: unknown key `colour` in a playbook")));
  EXPECT_THAT(got, ::testing::Contains(HasSubstr("test.yaml:16:3: error[missing-key]: `condition` is required in a playbook")));
  EXPECT_EQ(got.size(), 5u) << ::testing::PrintToString(got);
}

// Issue 20: a condition that names a series no agent sends would load and never fire. It is an
// error at the name's column, with the nearest series name when one is close; a macro's is
// reported where the macro is defined and where a playbook uses it.
TEST(LoadPlaybooks, ASeriesNoAgentSendsIsAnErrorWithTheNearestName) {
  const std::string text =
      "- playbook: typo\n"                                                         // 1
      "  desc: x\n"                                                                // 2
      "  condition: rate(fabric_pfc_pause_frame_total{direction=\"tx\"}[3s]) > 1\n"  // 3
      "  runbook: https://runbooks.example/x\n"                                    // 4
      "- macro: link_is_down\n"                                                    // 5
      "  condition: fabric_rdma_port_stat < 4\n"                                   // 6
      "- playbook: uses_macro\n"                                                   // 7
      "  desc: y\n"                                                                // 8
      "  condition: link_is_down\n"                                                // 9
      "  runbook: https://runbooks.example/y\n"                                    // 10
      "- playbook: custom\n"                                                       // 11
      "  desc: z\n"                                                                // 12
      "  condition: my_own_gpu_temperature > 90\n"                                 // 13
      "  runbook: https://runbooks.example/z\n"                                    // 14
      "- playbook: fine\n"                                                         // 15
      "  desc: w\n"                                                                // 16
      "  condition: max_over_time(railwatch_collector_success[1m]) == 0\n"         // 17
      "  runbook: https://runbooks.example/w\n";                                   // 18
  LoadResult r;
  LoadPlaybooksFromString(text, "test.yaml", r);
  ASSERT_EQ(r.playbooks.size(), 1u);
  EXPECT_EQ(r.playbooks[0].name, "fine");  // an agent self-metric is a series agents send
  std::vector<std::string> got;
  for (const LoadProblem& p : r.problems) got.push_back(p.ToString());
  EXPECT_THAT(got, ::testing::Contains(AllOf(
                       HasSubstr("test.yaml:3:19: error[unknown-metric]"),
                       HasSubstr("'fabric_pfc_pause_frame_total'"),
                       HasSubstr("did you mean 'fabric_pfc_pause_frames_total'?"))));
  EXPECT_THAT(got, ::testing::Contains(AllOf(HasSubstr("test.yaml:6:14: error[unknown-metric]"),
                                             HasSubstr("did you mean 'fabric_rdma_port_state'?"))));
  EXPECT_THAT(got, ::testing::Contains(AllOf(HasSubstr("test.yaml:9:14: error[unknown-metric]"),
                                             HasSubstr("in macro 'link_is_down'"))));
  EXPECT_THAT(got, ::testing::Contains(AllOf(HasSubstr("test.yaml:13:14: error[unknown-metric]"),
                                             HasSubstr("'my_own_gpu_temperature'"),
                                             Not(HasSubstr("did you mean")))));
  EXPECT_EQ(got.size(), 4u) << ::testing::PrintToString(got);

  // The same text with the check off (tests of the engine's mechanics) loads every playbook.
  LoadResult unchecked;
  LoadPlaybooksFromString(text, "test.yaml", unchecked, {.check_metric_names = false});
  EXPECT_EQ(unchecked.playbooks.size(), 4u);
  EXPECT_TRUE(unchecked.ok());
}

TEST(LoadPlaybooks, YamlSyntaxErrorHasPosition) {
  LoadResult r;
  LoadPlaybooksFromString("- playbook: x\n  desc: [unclosed\n", "bad.yaml", r);
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].code, "yaml-syntax");
  EXPECT_EQ(r.problems[0].file, "bad.yaml");
  EXPECT_GE(r.problems[0].line, 2);
}

// yaml-cpp 0.7's LoadAll loops forever (allocating) on a ',' outside any collection; found by
// tests/fuzz/playbook_fuzz (regressions/playbook_fuzz/). Without the fix this test never ends.
TEST(LoadPlaybooks, StrayCommaIsASyntaxErrorNotAnEndlessLoop) {
  for (const auto& [text, line] : std::vector<std::pair<std::string, int>>{
           {", a", 1}, {"- playbook: x\n  desc: d\n, y\n", 3}, {"[a], b", 1}}) {
    LoadResult r;
    LoadPlaybooksFromString(text, "comma.yaml", r);
    ASSERT_EQ(r.problems.size(), 1u) << text;
    EXPECT_EQ(r.problems[0].code, "yaml-syntax");
    EXPECT_EQ(r.problems[0].line, line) << text;
    EXPECT_THAT(r.problems[0].message, HasSubstr("','"));
  }
}

// Lists, overrides and explains entries read through the common reader: a bad override mode
// and a bad number are errors at their value, a misspelt key a warning with the key it meant.
TEST(LoadPlaybooks, OverrideModesAndExplainsEntriesAreCheckedWhereWritten) {
  const std::string text =
      "- list: l\n"                                                  // 1
      "  items: [a]\n"                                               // 2
      "- list: l\n"                                                  // 3
      "  items: [b]\n"                                               // 4
      "  override: {items: apend}\n"                                 // 5
      "- playbook: p\n"                                              // 6
      "  desc: d\n"                                                  // 7
      "  condition: a_total > 1\n"                                   // 8
      "  runbook: https://runbooks.example/p\n"                      // 9
      "  explains:\n"                                                // 10
      "    - {playbooks: [q], hops: -1, relaton: same_host}\n";      // 11
  LoadResult r;
  LoadPlaybooksFromString(text, "t.yaml", r, {.check_metric_names = false});
  std::vector<std::string> got;
  for (const LoadProblem& p : r.problems) got.push_back(p.ToString());
  EXPECT_THAT(got, ::testing::UnorderedElementsAre(
                       "t.yaml:5:21: error[bad-override]: override mode must be append or replace",
                       "t.yaml:11:30: error[bad-value]: hops `-1` is not a whole number >= 0",
                       "t.yaml:11:34: warning[unknown-key]: unknown key `relaton` in an "
                       "`explains` entry (did you mean `relation`?); ignored"));
  EXPECT_TRUE(r.playbooks.empty());
}

TEST(LoadPlaybooks, DuplicateAcrossFilesAndMissingRunbook) {
  testing::TempDir dir;
  const std::string item =
      "- playbook: twice\n  desc: d\n  condition: a > 1\n  runbook: runbooks/none.md\n";
  std::ofstream(dir.path() + "/a.yaml") << item;
  std::ofstream(dir.path() + "/b.yml") << item;
  std::ofstream(dir.path() + "/notes.txt") << "not a rules file";
  LoadResult r = LoadPlaybooks({dir.path()}, {.check_metric_names = false});
  EXPECT_EQ(r.playbooks.size(), 1u);
  int duplicate = 0, missing_runbook = 0;
  for (const LoadProblem& p : r.problems) {
    duplicate += p.code == "duplicate-playbook";
    missing_runbook += p.code == "missing-runbook";
  }
  EXPECT_EQ(duplicate, 1);
  EXPECT_EQ(missing_runbook, 2);  // a warning per file
}

}  // namespace
}  // namespace railwatch
