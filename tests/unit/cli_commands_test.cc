// The Query commands against a fake railwatchd: tables, JSON, the filters each request
// carries, exit codes, help per command, and the flag parser.
#include <cctype>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/flags/reflection.h"
#include "absl/time/clock.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "cli_fake_query.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace railwatch::testing {
namespace cli_commands_test {

using ::testing::Contains;
using ::testing::ContainsRegex;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr int64_t kT0 = 1714564800LL * 1000000000;  // 2024-05-01T12:00:00Z
constexpr int64_t kSecond = 1000000000;

v1::Diagnosis StormDiagnosis() {
  v1::Diagnosis d = MakeDiagnosis(
      "3f2a9c01b7de", "pfc_storm", v1::SEVERITY_CRITICAL, v1::DIAGNOSIS_STATE_FIRING,
      {{"device", "mlx5_3"}, {"host", "gpu-node-004"}, {"port", "1"}},
      "PFC storm from gpu-node-004 mlx5_3");
  d.set_location("gpu-node-004 mlx5_3 (rail 3, leaf-r3 Ethernet12)");
  d.set_description("The NIC sends pause frames without receiving any.");
  d.set_active_since_unix_nano(kT0 + 11 * kSecond);
  d.set_fired_at_unix_nano(kT0 + 16 * kSecond);
  d.set_runbook("rules/runbooks/pfc-storm.md");
  d.set_runbook_text("# PFC storm\n\nCheck the NIC:\n\n    ethtool -S eth3\n");
  d.add_commands("ethtool -S eth3 | grep prio3_pause");
  d.add_commands("mlnx_qos -i eth3");
  d.set_source("rules/pfc-storm.yaml:3:3");
  d.add_explains("pfc_relay/leaf-r3/Ethernet12");
  v1::BlastRadius* b = d.mutable_blast_radius();
  b->set_scope("leaf");
  b->add_hosts("gpu-node-001");
  b->add_hosts("gpu-node-004");
  b->set_gpus(16);
  b->set_cost_per_minute(8);
  v1::JobImpact* job = b->add_jobs();
  job->set_job("train-a");
  job->set_gpus(16);
  job->set_ranks(16);
  job->add_hosts("gpu-node-004");

  // Evidence in the daemon's order, which is not the order of time.
  v1::Evidence* event = d.add_evidence();
  event->set_kind("event");
  event->set_series("events{kind=\"nccl.ib_completion_error\",host=\"gpu-node-004\"}");
  event->set_time_unix_nano(kT0 + 20 * kSecond);
  event->set_raw("NCCL WARN NET/IB : Got completion with error 12");
  v1::Evidence* series = d.add_evidence();
  series->set_kind("series");
  series->set_series("fabric_pfc_pause_frames_total{direction=\"tx\",host=\"gpu-node-004\"}");
  series->set_summary("rate over 1m = 20000");
  series->set_time_unix_nano(kT0 + 7 * kSecond);  // the window's start: no reading there
  for (auto [t, v] : {std::pair{10, 100.0}, std::pair{11, 20100.0}}) {
    v1::EvidencePoint* p = series->add_points();
    p->set_time_unix_nano(kT0 + t * kSecond);
    p->set_value(v);
  }
  v1::Evidence* symptom = d.add_evidence();
  symptom->set_kind("symptom");
  symptom->set_playbook("pfc_relay");
  symptom->set_series("fabric_pfc_pause_frames_total{switch=\"leaf-r3\"}");
  symptom->set_time_unix_nano(kT0 + 12 * kSecond);
  return d;
}

FakeQueryData CannedData() {
  FakeQueryData data;
  data.diagnoses.push_back(StormDiagnosis());
  data.diagnoses.push_back(MakeDiagnosis("0000000000aa", "link_flap", v1::SEVERITY_WARNING,
                                         v1::DIAGNOSIS_STATE_PENDING,
                                         {{"host", "gpu-node-002"}, {"device", "mlx5_6"}},
                                         "Link flapping on gpu-node-002 mlx5_6"));
  v1::AgentInfo* ok = data.agents.add_agents();
  ok->set_agent_id("gpu-node-001");
  ok->set_role(v1::AGENT_ROLE_HOST);
  ok->set_hostname("gpu-node-001");
  ok->set_connected(true);
  ok->set_health("ok");
  v1::AgentInfo* bad = data.agents.add_agents();
  bad->set_agent_id("gpu-node-002");
  bad->set_role(v1::AGENT_ROLE_HOST);
  bad->set_connected(true);
  bad->set_health("degraded");
  bad->add_problems("collector ethtool failing");
  bad->add_problems("lag 12.0s");
  bad->add_failing_collectors("ethtool");
  v1::AgentInfo* sw = data.agents.add_agents();
  sw->set_agent_id("switch-agent-1");
  sw->set_role(v1::AGENT_ROLE_SWITCH);
  sw->set_health("ok");
  sw->add_targets()->set_name("leaf-r7");

  v1::PlaybookInfo* pb = data.playbooks.add_playbooks();
  pb->set_name("pfc_storm");
  pb->set_severity(v1::SEVERITY_CRITICAL);
  pb->set_enabled(true);
  pb->set_for_seconds(5);
  pb->set_firing(1);
  pb->set_source("rules/pfc-storm.yaml:3:3");

  data.topology.set_file("/etc/railwatch/topology.yaml");
  v1::TopologyHost* host = data.topology.add_hosts();
  host->set_name("gpu-node-004");
  v1::TopologyNic* nic = host->add_nics();
  nic->set_device("mlx5_3");
  nic->set_netdev("eth3");
  nic->set_rail(3);
  nic->set_switch_("leaf-r3");
  nic->set_switch_port("Ethernet12");
  v1::TopologySwitch* leaf = data.topology.add_switches();
  leaf->set_name("leaf-r3");
  leaf->set_role("leaf");
  leaf->set_dialect("sonic");
  v1::TopologyLink* link = leaf->add_links();
  link->set_port("Ethernet64");
  link->set_peer("spine-1");
  link->set_peer_port("Ethernet3");
  v1::TopologyJob* job = data.topology.add_jobs();
  job->set_name("train-a");
  job->set_gpus(16);
  job->set_ranks(16);
  job->add_hosts("gpu-node-004");
  job->set_source("nccl");
  return data;
}

class CliCommandsTest : public ::testing::Test {
 protected:
  CliCommandsTest() : server_(CannedData()) {}
  void SetUp() override { ASSERT_FALSE(server_.address().empty()); }

  CliRun Run(std::vector<std::string> args, CliOptions o) { return RunCli(args, o); }
  CliOptions Options() { return OptionsFor(server_); }

  FakeQueryServer server_;
};

TEST_F(CliCommandsTest, DiagnosesTableKeepsTheColumnsScriptsGrep) {
  CliRun r = Run({"diagnoses"}, Options());
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, StartsWith("ID            STATE    SEVERITY  PLAYBOOK   CULPRIT"));
  EXPECT_THAT(r.out, ContainsRegex(
                         "firing .*critical .*pfc_storm .*device=mlx5_3 host=gpu-node-004 port=1"));
  EXPECT_THAT(r.out, HasSubstr("Link flapping on gpu-node-002 mlx5_6"));
  // The default is active: pending and firing.
  ASSERT_EQ(server_.list_requests().size(), 1u);
  EXPECT_THAT(server_.list_requests()[0].filter().states(),
              ElementsAre(v1::DIAGNOSIS_STATE_PENDING, v1::DIAGNOSIS_STATE_FIRING));
  EXPECT_EQ(server_.list_requests()[0].limit(), 0u);
}

TEST_F(CliCommandsTest, DiagnosesJsonUsesTheProtoFieldNames) {
  CliOptions o = Options();
  o.json = true;
  o.state = "all";
  CliRun r = Run({"diagnoses"}, o);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["diagnoses"].size(), 2u);
  EXPECT_EQ(j["diagnoses"][0]["playbook"], "pfc_storm");
  EXPECT_EQ(j["diagnoses"][0]["fired_at_unix_nano"], std::to_string(kT0 + 16 * kSecond));
  EXPECT_EQ(j["diagnoses"][0]["blast_radius"]["cost_per_minute"], 8);
  EXPECT_TRUE(server_.list_requests()[0].filter().states().empty());
}

TEST_F(CliCommandsTest, DiagnosesSendsEveryFilter) {
  CliOptions o = Options();
  o.state = "firing";
  o.severity = "critical, warning";
  o.playbook = "pfc_storm,link_flap";
  o.host = "gpu-node-004";
  o.switch_name = "leaf-r3";
  o.since = "2024-05-01T11:00:00Z";
  o.limit = 5;
  CliRun r = Run({"diagnoses"}, o);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  ASSERT_EQ(server_.list_requests().size(), 1u);
  const v1::ListDiagnosesRequest req = server_.list_requests()[0];
  EXPECT_THAT(req.filter().states(), ElementsAre(v1::DIAGNOSIS_STATE_FIRING));
  EXPECT_THAT(req.filter().severities(), ElementsAre(v1::SEVERITY_CRITICAL, v1::SEVERITY_WARNING));
  EXPECT_THAT(req.filter().playbooks(), ElementsAre("pfc_storm", "link_flap"));
  EXPECT_EQ(req.filter().host(), "gpu-node-004");
  EXPECT_EQ(req.filter().switch_(), "leaf-r3");
  EXPECT_EQ(req.filter().since_unix_nano(), kT0 - 3600 * kSecond);
  EXPECT_EQ(req.limit(), 5u);
}

TEST_F(CliCommandsTest, SinceAsADurationIsThatLongAgo) {
  CliOptions o = Options();
  o.since = "1h";
  const int64_t before = absl::ToUnixNanos(absl::Now());
  ASSERT_EQ(Run({"diagnoses"}, o).code, kExitOk);
  const int64_t after = absl::ToUnixNanos(absl::Now());
  const int64_t since = server_.list_requests()[0].filter().since_unix_nano();
  EXPECT_GE(since, before - 3600 * kSecond);
  EXPECT_LE(since, after - 3600 * kSecond);
}

TEST_F(CliCommandsTest, BadFiltersAreUsageErrorsAndSendNothing) {
  for (auto set : std::initializer_list<void (*)(CliOptions&)>{
           [](CliOptions& o) { o.state = "burning"; },
           [](CliOptions& o) { o.severity = "critical,urgent"; },
           [](CliOptions& o) { o.since = "yesterday"; },
           [](CliOptions& o) { o.limit = -3; }}) {
    CliOptions o = Options();
    set(o);
    CliRun r = Run({"diagnoses"}, o);
    EXPECT_EQ(r.code, kExitUsage) << r.out;
    EXPECT_THAT(r.err, HasSubstr("usage: railwatch diagnoses"));
  }
  EXPECT_TRUE(server_.list_requests().empty());
  EXPECT_EQ(Run({"diagnoses", "extra"}, Options()).code, kExitUsage);
}

TEST_F(CliCommandsTest, ExplainShowsTheEvidenceTimelineInTimeOrder) {
  CliRun r = Run({"explain", "3f2a9c01b7de"}, Options());
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const std::vector<std::string> in_order = {
      "Timeline (UTC):",
      "2024-05-01",
      "12:00:10.000  series    fabric_pfc_pause_frames_total{direction=\"tx\"",
      "rate over 1m = 20000",
      "12:00:10.000  100",
      "12:00:11.000  20100",
      "12:00:11.000  PENDING",
      "12:00:12.000  symptom   pfc_relay: fabric_pfc_pause_frames_total{switch=\"leaf-r3\"}",
      "12:00:16.000  FIRING",
      "12:00:20.000  event     events{kind=\"nccl.ib_completion_error\"",
      "NCCL WARN NET/IB : Got completion with error 12",
      "Runbook: rules/runbooks/pfc-storm.md",
      "  ethtool -S eth3 | grep prio3_pause",
      "  mlnx_qos -i eth3",
  };
  size_t at = 0;
  for (const std::string& s : in_order) {
    size_t found = r.out.find(s, at);
    ASSERT_NE(found, std::string::npos) << "missing or out of order: " << s << "\n" << r.out;
    at = found + s.size();
  }
  EXPECT_THAT(r.out, HasSubstr("where     gpu-node-004 mlx5_3 (rail 3, leaf-r3 Ethernet12)"));
  EXPECT_THAT(r.out, HasSubstr("Blast radius: job train-a stalls (16 GPUs on 1 host); the fault is on 2 hosts (leaf "
                              "scope): gpu-node-001, gpu-node-004; 16 GPUs stalled, about $8 a minute"));
  EXPECT_THAT(r.out, HasSubstr("hosts  gpu-node-001 gpu-node-004"));
  EXPECT_THAT(r.out, HasSubstr("job train-a: 16 GPUs, 16 ranks (1 in the blast radius)"));
  EXPECT_THAT(r.out, HasSubstr("explains  1 symptom(s)"));
  EXPECT_THAT(r.out, Not(HasSubstr("# PFC storm")));
}

TEST_F(CliCommandsTest, ExplainRunbookPrintsTheWholeRunbook) {
  CliOptions o = Options();
  o.runbook = true;
  CliRun r = Run({"explain", "3f2a9c01b7de"}, o);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("# PFC storm\n\nCheck the NIC:\n\n    ethtool -S eth3\n"));
  o.json = true;
  r = Run({"explain", "3f2a9c01b7de"}, o);
  EXPECT_EQ(nlohmann::json::parse(r.out)["runbook_text"], StormDiagnosis().runbook_text());
}

TEST_F(CliCommandsTest, ExplainExitCodes) {
  CliRun r = Run({"explain", "nope"}, Options());
  EXPECT_EQ(r.code, kExitNotFound);
  EXPECT_THAT(r.err, HasSubstr("no diagnosis with id \"nope\""));
  EXPECT_EQ(Run({"explain"}, Options()).code, kExitUsage);
  EXPECT_EQ(Run({"explain", "a", "b"}, Options()).code, kExitUsage);
}

TEST_F(CliCommandsTest, AgentsShowHealthAndProblems) {
  CliRun r = Run({"agents"}, Options());
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("HEALTH"));
  EXPECT_THAT(r.out, HasSubstr("PROBLEMS"));
  EXPECT_THAT(r.out, ContainsRegex("gpu-node-002 +host +degraded .*collector ethtool "
                                            "failing; lag 12.0s"));
  // Switch agents' targets in their own table.
  EXPECT_THAT(r.out, ContainsRegex("\nAGENT +TARGET .*\nswitch-agent-1 +leaf-r7"));
  CliOptions o = Options();
  o.json = true;
  r = Run({"agents"}, o);
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["agents"][1]["failing_collectors"][0], "ethtool");
  EXPECT_EQ(j["agents"][1]["health"], "degraded");
  EXPECT_EQ(j["agents"][0]["connected"], true);
}

TEST_F(CliCommandsTest, PlaybooksFromTheDaemon) {
  CliRun r = Run({"playbooks"}, Options());
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, StartsWith("NAME       SEVERITY  ENABLED  PENDING  FIRING  FOR  SOURCE\n"));
  EXPECT_THAT(r.out, HasSubstr("pfc_storm  critical  yes      0        1       5s   "
                               "rules/pfc-storm.yaml:3:3"));
}

TEST_F(CliCommandsTest, TopologyHostsSwitchesLinksAndJobs) {
  CliRun r = Run({"topology"}, Options());
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Topology file: /etc/railwatch/topology.yaml"));
  EXPECT_THAT(r.out, HasSubstr("1 hosts, 1 NICs, 1 switches, 1 jobs"));
  EXPECT_THAT(r.out, ContainsRegex("gpu-node-004 +mlx5_3 +eth3 +3 +leaf-r3 +Ethernet12"));
  EXPECT_THAT(r.out, ContainsRegex("leaf-r3 +leaf +sonic +1"));
  EXPECT_THAT(r.out, ContainsRegex("leaf-r3 +Ethernet64 +spine-1 +Ethernet3"));
  CliOptions o = Options();
  o.jobs = true;
  r = Run({"topology"}, o);
  EXPECT_THAT(r.out, ContainsRegex("JOB .*SOURCE.*\ntrain-a +16 +16 +gpu-node-004 +nccl"));
  EXPECT_THAT(r.out, Not(HasSubstr("Ethernet64")));
  o.json = true;
  nlohmann::json j = nlohmann::json::parse(Run({"topology"}, o).out);
  EXPECT_EQ(j["jobs"][0]["source"], "nccl");
  EXPECT_FALSE(j.contains("hosts"));
}

TEST(CliExitCodeTest, AnUnreachableDaemonIsExitThree) {
  std::string address;
  {
    FakeQueryServer gone{FakeQueryData()};
    address = gone.address();
  }
  CliOptions o;
  o.server = address;
  o.timeout_seconds = 2;
  for (const char* cmd : {"diagnoses", "agents", "topology", "playbooks"}) {
    CliRun r = RunCli({cmd}, o);
    EXPECT_EQ(r.code, kExitUnavailable) << cmd;
    EXPECT_THAT(r.err, HasSubstr("cannot reach railwatchd at " + address));
  }
  EXPECT_EQ(RunCli({"explain", "x"}, o).code, kExitUnavailable);
}

TEST(CliHelpTest, EveryCommandHasHelp) {
  for (const char* cmd : {"diagnoses", "explain", "watch", "agents", "top", "series", "topology",
                          "playbooks", "rules", "triage", "gnmi", "metrics", "version", "help"}) {
    for (const char* flag : {"--help", "-h"}) {
      CliRun r = RunCli({cmd, flag}, CliOptions());
      EXPECT_EQ(r.code, kExitOk) << cmd;
      EXPECT_THAT(r.out, StartsWith(std::string("usage: railwatch ") + cmd)) << cmd;
    }
    CliRun r = RunCli({"help", cmd}, CliOptions());
    EXPECT_EQ(r.code, kExitOk);
    EXPECT_THAT(r.out, StartsWith(std::string("usage: railwatch ") + cmd));
  }
  // Commands that ask the daemon document the connection flags.
  EXPECT_THAT(RunCli({"help", "top"}, CliOptions()).out, HasSubstr("--tls_ca=FILE"));
  EXPECT_THAT(RunCli({"help", "rules"}, CliOptions()).out, Not(HasSubstr("--tls_ca=FILE")));
  EXPECT_EQ(RunCli({"help"}, CliOptions()).code, kExitOk);
  EXPECT_EQ(RunCli({"help", "nope"}, CliOptions()).code, kExitUsage);
  CliRun unknown = RunCli({"frobnicate"}, CliOptions());
  EXPECT_EQ(unknown.code, kExitUsage);
  EXPECT_THAT(unknown.err, HasSubstr("unknown command \"frobnicate\""));
  EXPECT_THAT(unknown.err, HasSubstr("Usage: railwatch"));
  EXPECT_EQ(RunCli({}, CliOptions()).code, kExitUsage);
}

std::vector<char*> Argv(std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return argv;
}

TEST(CliFlagsTest, FlagsGoBeforeOrAfterTheCommand) {
  absl::FlagSaver restore;
  std::vector<std::string> args = {"railwatch", "--server", "h:1", "explain", "ID", "--json",
                                   "--limit=7", "--noreconnect", "--", "--not-a-flag"};
  std::vector<char*> argv = Argv(args);
  absl::StatusOr<CommandLine> line = ParseCliFlags(argv.size(), argv.data());
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_THAT(line->args, ElementsAre("explain", "ID", "--not-a-flag"));
  EXPECT_FALSE(line->help);
  CliOptions o = OptionsFromFlags();
  EXPECT_EQ(o.server, "h:1");
  EXPECT_TRUE(o.json);
  EXPECT_EQ(o.limit, 7);
  EXPECT_FALSE(o.reconnect);
}

TEST(CliFlagsTest, HelpAndBadFlags) {
  absl::FlagSaver restore;
  std::vector<std::string> help = {"railwatch", "top", "-h"};
  std::vector<char*> argv = Argv(help);
  absl::StatusOr<CommandLine> line = ParseCliFlags(argv.size(), argv.data());
  ASSERT_TRUE(line.ok());
  EXPECT_TRUE(line->help);
  EXPECT_THAT(line->args, ElementsAre("top"));

  for (std::vector<std::string> bad : std::vector<std::vector<std::string>>{
           {"railwatch", "--nosuchflag", "agents"},
           {"railwatch", "top", "--limit=ten"},
           {"railwatch", "agents", "--server"}}) {
    std::vector<char*> v = Argv(bad);
    absl::StatusOr<CommandLine> r = ParseCliFlags(v.size(), v.data());
    EXPECT_FALSE(r.ok()) << bad[1];
  }
  std::vector<std::string> ten = {"railwatch", "top", "--limit=ten"};
  std::vector<char*> v = Argv(ten);
  EXPECT_THAT(std::string(ParseCliFlags(v.size(), v.data()).status().message()),
              HasSubstr("--limit=ten"));
  EXPECT_THAT(FlagsHelp(), HasSubstr("--tls_server_name"));

  std::vector<std::string> version = {"railwatch", "--version"};
  std::vector<char*> vv = Argv(version);
  absl::StatusOr<CommandLine> as_flag = ParseCliFlags(vv.size(), vv.data());
  ASSERT_TRUE(as_flag.ok()) << as_flag.status();
  EXPECT_THAT(as_flag->args, ElementsAre("version"));
}

TEST(CliFlagsTest, AFlagTheCommandDoesNotTakeIsAUsageError) {
  absl::FlagSaver restore;
  std::vector<std::string> args = {"railwatch", "--server", "h:1", "explain", "ID", "--json",
                                   "--limit=7", "--noreconnect", "--runbook"};
  std::vector<char*> argv = Argv(args);
  absl::StatusOr<CommandLine> line = ParseCliFlags(argv.size(), argv.data());
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_THAT(line->flags_set, ElementsAre("server", "json", "limit", "reconnect", "runbook"));
  absl::Status s = CheckCommandFlags("explain", line->flags_set);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("--limit, --reconnect do not apply to `explain`"));
  // What it does take.
  EXPECT_THAT(std::string(s.message()), HasSubstr("it takes --runbook and the connection flags"));

  EXPECT_TRUE(CheckCommandFlags("diagnoses", {"state", "limit", "server", "json", "since"}).ok());
  EXPECT_TRUE(CheckCommandFlags("watch", {"reconnect", "host", "tls_ca"}).ok());
  EXPECT_TRUE(CheckCommandFlags("gnmi", {"format", "profile", "json"}).ok());
  // Offline commands take no connection flags.
  EXPECT_FALSE(CheckCommandFlags("rules", {"server"}).ok());
  EXPECT_FALSE(CheckCommandFlags("triage", {"limit"}).ok());
  EXPECT_THAT(std::string(CheckCommandFlags("version", {"json"}).message()),
              HasSubstr("it takes no flags"));
  // An unknown command is RunCommand's to report.
  EXPECT_TRUE(CheckCommandFlags("frobnicate", {"json"}).ok());
}

// What `railwatch help COMMAND` says and what the command takes come from one entry: every
// flag it takes is in its usage, and its usage names no flag it does not take.
TEST(CliHelpTest, UsageNamesExactlyTheFlagsTheCommandTakes) {
  for (const char* cmd : {"diagnoses", "explain", "watch", "agents", "top", "series", "topology",
                          "playbooks", "rules", "triage", "gnmi", "metrics", "version", "help"}) {
    const std::string usage = CommandUsage(cmd);
    const std::vector<std::string> takes = CommandFlags(cmd);
    for (const std::string& flag : takes) {
      EXPECT_THAT(usage, HasSubstr("--" + flag)) << cmd;
    }
    for (size_t at = usage.find("--"); at != std::string::npos; at = usage.find("--", at + 2)) {
      size_t end = at + 2;
      while (end < usage.size() && (std::islower(usage[end]) || usage[end] == '_')) ++end;
      const std::string flag = usage.substr(at + 2, end - at - 2);
      if (flag.empty() || flag == "help") continue;
      EXPECT_THAT(takes, Contains(flag)) << cmd << "'s usage names --" << flag;
    }
  }
}

TEST(CliFlagsTest, ServerFromTheEnvironment) {
  absl::FlagSaver restore;
  setenv("RAILWATCH_SERVER", "daemon.example:9740", 1);
  EXPECT_EQ(OptionsFromFlags().server, "daemon.example:9740");
  unsetenv("RAILWATCH_SERVER");
  EXPECT_EQ(OptionsFromFlags().server, "127.0.0.1:9740");
}

}  // namespace
}  // namespace railwatch::testing
