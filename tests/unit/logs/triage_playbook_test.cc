// Offline triage's diagnosis comes from the daemon's playbooks (triage/playbook_replay.h): the
// parsed events played through the shipped rules (or a given rules directory) on a fake clock.

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "cli/commands.h"
#include "cli/triage.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "logs/log_parser.h"
#include "support/ttar.h"
#include "tests/unit/logs/log_test_util.h"
#include "triage/findings.h"
#include "triage/playbook_replay.h"

namespace railwatch {
namespace {

namespace fs = std::filesystem;
using logs::testing::ParseFixture;
using ::testing::Contains;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

std::string Fixture(const std::string& name) {
  return railwatch::testing::FixturePath("logs/" + name);
}

std::vector<Playbook> ShippedPlaybooks() {
  LoadResult rules = LoadTriagePlaybooks("");
  EXPECT_TRUE(rules.ok()) << (rules.problems.empty() ? "" : rules.problems[0].ToString());
  EXPECT_FALSE(rules.playbooks.empty());
  return std::move(rules.playbooks);
}

std::vector<logs::LogEvent> ParseText(const std::string& text, const std::string& name = "-") {
  logs::LogParser parser(name);
  std::vector<logs::LogEvent> events;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) parser.Feed(line, events);
  parser.Finish(events);
  return events;
}

const TriageFinding* FindingOfKind(const TriageReport& r, const std::string& kind) {
  for (const TriageFinding& f : r.findings) {
    if (f.kind == kind) return &f;
  }
  return nullptr;
}

// A rules directory of its own, removed at the end of the test.
class RulesDir {
 public:
  RulesDir() {
    path_ = fs::temp_directory_path() /
            ("railwatch-triage-rules-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path_);
    fs::create_directories(path_ / "runbooks");
  }
  ~RulesDir() { fs::remove_all(path_); }
  void Write(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

TEST(TriagePlaybooks, IbCompletionErrorsFireNcclFailureWithItsRunbook) {
  TriageReport r = TriageEvents(
      ParseFixture("nccl_03_ib_status12_vendor129_roce_gid_ipv6.log").events, ShippedPlaybooks());
  ASSERT_EQ(r.findings.size(), 1u);
  const TriageFinding& f = r.findings[0];
  ASSERT_EQ(f.diagnoses.size(), 1u);
  const TriageDiagnosis& d = f.diagnoses[0];
  EXPECT_EQ(d.playbook, "nccl_failure");
  EXPECT_EQ(d.severity, "critical");
  EXPECT_EQ(d.host, "kp-ddp-worker-0");
  EXPECT_THAT(d.summary, StartsWith("NCCL failure on kp-ddp-worker-0"));
  EXPECT_THAT(d.runbook, EndsWith("runbooks/nccl-failure.md"));
  EXPECT_THAT(d.runbook_text, HasSubstr("## What to check"));
  // The runbook's commands, the culprit filled in.
  EXPECT_THAT(d.commands, Contains("ssh kp-ddp-worker-0 nvidia-smi -q -d ERROR"));
  // The log detail stays the finding's own.
  EXPECT_THAT(f.meaning, HasSubstr("retry counter exceeded"));
  ASSERT_EQ(r.diagnoses.size(), 1u);
  EXPECT_EQ(r.diagnoses[0].playbook, "nccl_failure");
}

TEST(TriagePlaybooks, NoDeviceFiresNicGoneAndItExplainsTheSameHostsErrors) {
  const std::string log =
      "gpu-7:100:100 [0] NCCL INFO NET/IB : No device found.\n"
      "gpu-7:100:188 [0] transport/net_ib.cc:839 NCCL WARN NET/IB : Got completion with error "
      "12, opcode 1, len 0, vendor err 129\n";
  TriageReport r = TriageEvents(ParseText(log), ShippedPlaybooks());
  const TriageFinding* none = FindingOfKind(r, "nccl.no_device");
  const TriageFinding* ib = FindingOfKind(r, "nccl.ib_completion_error");
  ASSERT_NE(none, nullptr);
  ASSERT_NE(ib, nullptr);
  ASSERT_EQ(none->diagnoses.size(), 1u);
  EXPECT_EQ(none->diagnoses[0].playbook, "nic_gone");
  EXPECT_THAT(none->diagnoses[0].commands, Contains("ssh gpu-7 ibv_devices"));
  // nic_gone explains nccl_failure on the same host: one incident, the IB errors its evidence.
  ASSERT_EQ(ib->diagnoses.size(), 1u);
  EXPECT_EQ(ib->diagnoses[0].playbook, "nic_gone");
  ASSERT_EQ(r.diagnoses.size(), 1u);
}

TEST(TriagePlaybooks, ALineWithoutAHostGetsAPlaceholderTheRunbookShows) {
  TriageReport r = TriageEvents(
      ParseFixture("pytorch_01_watchdog_timeout_allreduce_torch2.6_pidprefix.log").events,
      ShippedPlaybooks());
  ASSERT_EQ(r.findings.size(), 1u);
  ASSERT_EQ(r.findings[0].diagnoses.size(), 1u);
  EXPECT_THAT(r.findings[0].diagnoses[0].commands,
              Contains("ssh <host of pytorch_01_watchdog_timeout_allreduce_torch2.6_pidprefix.log> "
                       "nvidia-smi -q -d ERROR"));
  // On standard input there is no file name to say whose host it is.
  TriageReport stdin_report = TriageEvents(
      ParseText("[rank0]:[E ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective "
                "operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
                "Timeout(ms)=600000) ran for 600060 milliseconds before timing out.\n"),
      ShippedPlaybooks());
  ASSERT_FALSE(stdin_report.diagnoses.empty());
  EXPECT_EQ(stdin_report.diagnoses[0].host, "<host>");
}

TEST(TriagePlaybooks, AHealthyRunFiresNothing) {
  TriageReport r =
      TriageEvents(ParseFixture("nccltests_01_allreduce_2node_h100_16ranks_table.txt").events,
                   ShippedPlaybooks());
  EXPECT_THAT(r.diagnoses, IsEmpty());
  for (const TriageFinding& f : r.findings) EXPECT_THAT(f.diagnoses, IsEmpty()) << f.title;
}

TEST(TriagePlaybooks, TheDiagnosisIsWhateverTheGivenPlaybooksSay) {
  RulesDir dir;
  dir.Write("gid.yaml", R"y(
- playbook: roce_gid_mismatch
  desc: A site's own playbook on NCCL's IB completion errors.
  condition: sum by (host) (count_over_time(events{kind="nccl.ib_completion_error"}[5m])) >= 3
  severity: warning
  culprit: [host]
  summary: "GID trouble on {{host}}: {{value}} errors"
  runbook: runbooks/gid.md
)y");
  dir.Write("runbooks/gid.md", "# GID\n\n```sh\nssh {{host}} show_gids --site-check\n```\n");
  LoadResult rules = LoadTriagePlaybooks(dir.path());
  ASSERT_TRUE(rules.ok()) << rules.problems[0].ToString();
  ReplayStats stats;
  std::vector<TriageDiagnosis> fired =
      ReplayThroughPlaybooks(ParseFixture("nccl_03_ib_status12_vendor129_roce_gid_ipv6.log").events,
                             std::move(rules.playbooks), &stats);
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0].playbook, "roce_gid_mismatch");
  EXPECT_EQ(fired[0].severity, "warning");
  EXPECT_EQ(fired[0].summary, "GID trouble on kp-ddp-worker-0: 3 errors");
  EXPECT_THAT(fired[0].commands, Contains("ssh kp-ddp-worker-0 show_gids --site-check"));
  EXPECT_THAT(fired[0].event_kinds, Contains("nccl.ib_completion_error"));
  EXPECT_GT(stats.events, 0u);
  EXPECT_GT(stats.evaluations, 0u);
}

// One playbook in `dir`: a host's IB completion errors in 5m, then `comparison` ("> 4").
std::vector<Playbook> IbErrorCountPlaybook(const RulesDir& dir, const std::string& comparison) {
  dir.Write("count.yaml",
            "- playbook: ib_error_count\n"
            "  desc: A host's IB completion errors in five minutes, against a threshold.\n"
            "  condition: sum by (host) (count_over_time(events{kind=\"nccl.ib_completion_error\"}"
            "[5m])) " +
                comparison +
                "\n"
                "  culprit: [host]\n"
                "  runbook: runbooks/count.md\n");
  dir.Write("runbooks/count.md", "# Count\n");
  LoadResult rules = LoadTriagePlaybooks(dir.path());
  EXPECT_TRUE(rules.ok()) << (rules.problems.empty() ? "" : rules.problems[0].ToString());
  return std::move(rules.playbooks);
}

TEST(TriagePlaybooks, ThresholdsAreThePlaybooksOwn) {
  RulesDir dir;
  const std::vector<logs::LogEvent> events =
      ParseFixture("nccl_03_ib_status12_vendor129_roce_gid_ipv6.log").events;
  // Three errors in the log: above a threshold of two, below one of four.
  TriageReport above = TriageEvents(events, IbErrorCountPlaybook(dir, "> 2"));
  ASSERT_EQ(above.findings.size(), 1u);
  ASSERT_EQ(above.findings[0].diagnoses.size(), 1u);
  EXPECT_EQ(above.findings[0].diagnoses[0].playbook, "ib_error_count");

  TriageReport below = TriageEvents(events, IbErrorCountPlaybook(dir, "> 4"));
  ASSERT_EQ(below.findings.size(), 1u);
  EXPECT_THAT(below.findings[0].diagnoses, IsEmpty());
  EXPECT_THAT(below.diagnoses, IsEmpty());
}

TEST(TriagePlaybooks, EventsMinutesApartAreSeparateWindows) {
  // Two IB errors 10 minutes apart on one host: with a 5m window and a threshold of 2 the
  // playbook never fires, so the replay keeps the log's own times; 1 minute apart, it fires.
  const std::string error =
      " gpu-7:100:188 [0] transport/net_ib.cc:839 NCCL WARN NET/IB : Got completion with error "
      "12, opcode 1, len 0, vendor err 129\n";
  std::vector<logs::LogEvent> apart =
      ParseText("2024-05-01T10:00:00Z" + error + "2024-05-01T10:10:00Z" + error);
  ASSERT_EQ(apart.size(), 2u);
  ASSERT_NE(apart[0].time_unix_nano, 0) << "the test needs timed lines";
  RulesDir dir;
  EXPECT_THAT(ReplayThroughPlaybooks(apart, IbErrorCountPlaybook(dir, ">= 2")), IsEmpty());

  std::vector<logs::LogEvent> close =
      ParseText("2024-05-01T10:00:00Z" + error + "2024-05-01T10:01:00Z" + error);
  EXPECT_EQ(ReplayThroughPlaybooks(close, IbErrorCountPlaybook(dir, ">= 2")).size(), 1u);
}

TEST(TriagePlaybooks, ALongTimedLogIsEvaluatedInBoundedSteps) {
  // 5,000 errors a second apart: one evaluation per second would be 5,000; the replay takes
  // about 2,000 longer steps and still sees the errors.
  std::string log;
  for (int i = 0; i < 5000; ++i) {
    log += absl::StrFormat(
        "2024-05-01T%02d:%02d:%02dZ gpu-7:100:188 [0] transport/net_ib.cc:839 NCCL WARN NET/IB : "
        "Got completion with error 12, opcode 1, len 0, vendor err 129\n",
        i / 3600, i / 60 % 60, i % 60);
  }
  std::vector<logs::LogEvent> events = ParseText(log);
  ASSERT_EQ(events.size(), 5000u);
  ReplayStats stats;
  std::vector<TriageDiagnosis> fired = ReplayThroughPlaybooks(events, ShippedPlaybooks(), &stats);
  EXPECT_EQ(stats.events, 5000u);
  EXPECT_LE(stats.evaluations, 2001u);
  EXPECT_GE(stats.evaluations, 1000u);
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0].playbook, "nccl_failure");
}

TEST(TriagePlaybooks, TheCommandPrintsThePlaybookAndItsRunbookCommands) {
  std::ostringstream out, err;
  CliOptions options;
  EXPECT_EQ(RunCommand({"triage", Fixture("nccl_03_ib_status12_vendor129_roce_gid_ipv6.log")},
                       options, out, err),
            kExitOk);
  EXPECT_THAT(out.str(), HasSubstr("playbook      nccl_failure (critical): NCCL failure on "
                                   "kp-ddp-worker-0"));
  EXPECT_THAT(out.str(), HasSubstr("runbook next  ssh kp-ddp-worker-0 nvidia-smi -q -d ERROR"));
  EXPECT_EQ(err.str(), "");

  std::ostringstream json, json_err;
  options.json = true;
  EXPECT_EQ(RunCommand({"triage", Fixture("nccl_03_ib_status12_vendor129_roce_gid_ipv6.log")},
                       options, json, json_err),
            kExitOk);
  EXPECT_THAT(json.str(),
              HasSubstr(R"("diagnoses":[{"playbook":"nccl_failure","severity":"critical")"));
}

TEST(TriagePlaybooks, ABrokenRulesFileIsNamedWithLineAndColumnAndTheLogIsStillTriaged) {
  RulesDir dir;
  dir.Write("bad.yaml",
            "- playbook: bad\n  desc: an unclosed parenthesis\n  runbook: https://example/bad\n"
            "  condition: count_over_time(events{kind=\"x\"}[5m]\n");
  std::ostringstream out, err;
  CliOptions options;
  options.rules_dir = dir.path();
  EXPECT_EQ(RunCommand({"triage", Fixture("nccl_03_ib_status12_vendor129_roce_gid_ipv6.log")},
                       options, out, err),
            kExitInvalid);
  EXPECT_THAT(err.str(), HasSubstr("railwatch triage: " + dir.path() + "/bad.yaml:4:"));
  EXPECT_THAT(err.str(), HasSubstr(": error["));
  EXPECT_THAT(out.str(), HasSubstr("FAIL  IB completion error IBV_WC_RETRY_EXC_ERR (status 12)"));
}

}  // namespace
}  // namespace railwatch
