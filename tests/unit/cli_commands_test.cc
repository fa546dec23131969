// The Query commands against a fake railwatchd: tables, JSON, the filters each request
// carries, exit codes, help per command, and the flag parser.
#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "cli/command_table.h"
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
  v1::Diagnosis d =
      MakeDiagnosis("3f2a9c01b7de", "pfc_storm", v1::SEVERITY_CRITICAL, v1::DIAGNOSIS_STATE_FIRING,
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
  data.diagnoses.push_back(MakeDiagnosis(
      "0000000000aa", "link_flap", v1::SEVERITY_WARNING, v1::DIAGNOSIS_STATE_PENDING,
      {{"host", "gpu-node-002"}, {"device", "mlx5_6"}}, "Link flapping on gpu-node-002 mlx5_6"));
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
           [](CliOptions& o) { o.since = "yesterday"; }, [](CliOptions& o) { o.limit = -3; }}) {
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
  EXPECT_THAT(
      r.out,
      HasSubstr(
          "Blast radius: job train-a stalls (16 GPUs on 1 host); the fault is on 2 hosts (leaf "
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

absl::StatusOr<CommandLine> Parse(std::vector<std::string> args) {
  args.insert(args.begin(), "railwatch");
  std::vector<char*> argv = Argv(args);
  return ParseCliFlags(argv.size(), argv.data());
}

TEST(CliFlagsTest, FlagsGoBeforeOrAfterTheCommand) {
  absl::StatusOr<CommandLine> line = Parse({"--server", "h:1", "explain", "ID", "--json",
                                            "--limit=7", "--noreconnect", "--", "--not-a-flag"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_THAT(line->args, ElementsAre("explain", "ID", "--not-a-flag"));
  EXPECT_FALSE(line->help);
  const CliOptions& o = line->options;
  EXPECT_EQ(o.server, "h:1");
  EXPECT_TRUE(o.json);
  EXPECT_EQ(o.limit, 7);
  EXPECT_FALSE(o.reconnect);
}

TEST(CliFlagsTest, EveryFormUsersType) {
  absl::StatusOr<CommandLine> line =
      Parse({"-json", "--reconnect=false", "watch", "--tls", "--timeout", "2.5", "--window=5m",
             "--jobs=true", "--state", "firing", "-", "--tls_ca=ca.pem"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_THAT(line->args, ElementsAre("watch", "-"));
  EXPECT_THAT(line->flags_set, ElementsAre("json", "reconnect", "tls", "timeout", "window", "jobs",
                                           "state", "tls_ca"));
  const CliOptions& o = line->options;
  EXPECT_TRUE(o.json);
  EXPECT_FALSE(o.reconnect);
  EXPECT_TRUE(o.tls.enabled);
  EXPECT_DOUBLE_EQ(o.timeout_seconds, 2.5);
  EXPECT_EQ(o.window, "5m");
  EXPECT_TRUE(o.jobs);
  EXPECT_EQ(o.state, "firing");
  EXPECT_EQ(o.tls.ca_file, "ca.pem");
  // Defaults from the table (CliOptions' initialisers), shipped data where a flag reads it.
  EXPECT_EQ(o.gnmi_format, "auto");
  EXPECT_FALSE(o.rules_dir.empty());
  EXPECT_FALSE(o.gnmi_profiles_dir.empty());
  EXPECT_EQ(Parse({"--rules=r.yaml", "rules", "list"})->options.rules_dir, "r.yaml");
}

TEST(CliFlagsTest, HelpAndBadFlags) {
  absl::StatusOr<CommandLine> line = Parse({"top", "-h"});
  ASSERT_TRUE(line.ok());
  EXPECT_TRUE(line->help);
  EXPECT_THAT(line->args, ElementsAre("top"));
  EXPECT_TRUE(Parse({"--help"})->help);
  EXPECT_TRUE(Parse({"--helpfull"})->helpfull);

  for (std::vector<std::string> bad :
       std::vector<std::vector<std::string>>{{"--nosuchflag", "agents"},
                                             {"top", "--limit=ten"},
                                             {"agents", "--server"},
                                             {"--json=maybe", "agents"},
                                             {"--timeout=soon", "agents"},
                                             {"--nolimit", "top"}}) {
    absl::StatusOr<CommandLine> r = Parse(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << bad[0] << " " << bad[1];
  }
  EXPECT_THAT(std::string(Parse({"top", "--limit=ten"}).status().message()),
              HasSubstr("--limit=ten"));
  EXPECT_THAT(std::string(Parse({"agents", "--server"}).status().message()),
              HasSubstr("--server wants a value"));
  // An unknown flag says so, and names the flag it is close to.
  EXPECT_EQ(Parse({"diagnoses", "--stat=firing"}).status().message(),
            "unknown flag --stat (did you mean --state?)");
  EXPECT_EQ(Parse({"--nosuchflag", "agents"}).status().message(), "unknown flag --nosuchflag");
  EXPECT_THAT(FlagsHelp(), HasSubstr("--tls_server_name"));

  absl::StatusOr<CommandLine> as_flag = Parse({"--version"});
  ASSERT_TRUE(as_flag.ok()) << as_flag.status();
  EXPECT_THAT(as_flag->args, ElementsAre("version"));
}

// `railwatch --help` (and --helpfull): every flag once, under its group, with its default,
// and in the line format the deploy checks read (tests/deploy/deploy_lib.py).
TEST(CliFlagsTest, FlagsHelpListsEveryFlagByGroupWithItsDefault) {
  const std::string help = FlagsHelp();
  for (const FlagSpec& f : Flags()) {
    EXPECT_THAT(help, HasSubstr("\n  --" + f.name + " (default \"")) << f.name;
  }
  EXPECT_THAT(help, HasSubstr("  --timeout (default \"5\")"));
  EXPECT_THAT(help, HasSubstr("  --window (default \"1m\")"));
  EXPECT_THAT(help, HasSubstr("  --server (default \"$RAILWATCH_SERVER, else 127.0.0.1:9740\")"));
  const size_t connection = help.find(FlagGroupTitle(FlagGroup::kConnection));
  const size_t filter = help.find(FlagGroupTitle(FlagGroup::kFilter));
  ASSERT_NE(connection, std::string::npos);
  ASSERT_NE(filter, std::string::npos);
  EXPECT_LT(connection, help.find("  --tls_ca "));
  EXPECT_LT(help.find("  --tls_ca "), filter);
  EXPECT_LT(filter, help.find("  --since "));
}

TEST(CliFlagsTest, AFlagTheCommandDoesNotTakeIsAUsageError) {
  absl::StatusOr<CommandLine> line = Parse(
      {"--server", "h:1", "explain", "ID", "--json", "--limit=7", "--noreconnect", "--runbook"});
  ASSERT_TRUE(line.ok()) << line.status();
  EXPECT_THAT(line->flags_set, ElementsAre("server", "json", "limit", "reconnect", "runbook"));
  absl::Status s = CheckCommandFlags("explain", line->flags_set);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(std::string(s.message()),
              HasSubstr("--limit, --reconnect do not apply to `explain`"));
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

TEST(CliFlagsTest, ServerAndTokenFromTheEnvironment) {
  setenv("RAILWATCH_SERVER", "daemon.example:9740", 1);
  setenv("RAILWATCH_TOKEN", "env-token", 1);
  EXPECT_EQ(Parse({"agents"})->options.server, "daemon.example:9740");
  EXPECT_EQ(Parse({"agents"})->options.token, "env-token");
  // The flag wins over the environment.
  EXPECT_EQ(Parse({"--server=h:2", "agents"})->options.server, "h:2");
  EXPECT_EQ(Parse({"--token=flag-token", "agents"})->options.token, "flag-token");
  // The variable is no flag the user gave: it never makes a command's flags wrong.
  EXPECT_THAT(Parse({"rules", "list"})->flags_set, ::testing::IsEmpty());
  unsetenv("RAILWATCH_SERVER");
  unsetenv("RAILWATCH_TOKEN");
  EXPECT_EQ(Parse({"agents"})->options.server, "127.0.0.1:9740");
  EXPECT_EQ(Parse({"agents"})->options.token, "");
}

// Every command against every flag: one it does not take is a usage error that names it and
// says what the command takes; one it takes is accepted.
TEST(CliFlagsTest, EveryFlagACommandDoesNotTakeIsRefusedByName) {
  for (const CommandSpec& command : Commands()) {
    const std::vector<std::string> takes = CommandFlags(command.name);
    for (const FlagSpec& flag : Flags()) {
      const absl::Status s = CheckCommandFlags(command.name, {flag.name});
      if (std::find(takes.begin(), takes.end(), flag.name) != takes.end()) {
        EXPECT_TRUE(s.ok()) << command.name << " --" << flag.name << ": " << s;
        continue;
      }
      EXPECT_TRUE(absl::IsInvalidArgument(s)) << command.name << " --" << flag.name;
      EXPECT_THAT(std::string(s.message()),
                  StartsWith("--" + flag.name + " does not apply to `" + command.name + "`"));
      EXPECT_THAT(std::string(s.message()), HasSubstr("it takes "));
    }
  }
}

// `COMMAND --help` lists exactly the flags the command takes, one line each, each once.
TEST(CliHelpTest, EachCommandsHelpListsExactlyItsFlags) {
  for (const CommandSpec& command : Commands()) {
    CliRun r = RunCli({command.name, "--help"}, CliOptions());
    ASSERT_EQ(r.code, kExitOk) << command.name;
    std::vector<std::string> listed;
    for (absl::string_view line : absl::StrSplit(r.out, '\n')) {
      if (!absl::StartsWith(line, "  --")) continue;
      line.remove_prefix(4);
      listed.emplace_back(line.substr(0, line.find_first_of("= ")));
    }
    std::sort(listed.begin(), listed.end());
    EXPECT_EQ(listed, CommandFlags(command.name)) << command.name << ":\n" << r.out;
  }
}

// The command table: every command has its forms with a summary, a description, an example
// and a Run function; the flags it names exist; every flag is taken by some command; and
// `railwatch help` lists every form.
TEST(CliHelpTest, TheCommandTableHasNoCommandWithoutHelpOrExample) {
  const std::string list = RunCli({"help"}, CliOptions()).out;
  std::set<std::string> taken;
  ASSERT_FALSE(Commands().empty());
  for (const CommandSpec& command : Commands()) {
    EXPECT_NE(command.run, nullptr) << command.name;
    ASSERT_FALSE(command.forms.empty()) << command.name;
    EXPECT_THAT(command.forms[0].synopsis, StartsWith(command.name)) << command.name;
    for (const CommandSpec::FormLine& form : command.forms) {
      EXPECT_FALSE(form.summary.empty()) << form.synopsis;
      EXPECT_THAT(list, HasSubstr("  " + form.synopsis)) << form.synopsis;
    }
    EXPECT_FALSE(command.description.empty()) << command.name;
    EXPECT_FALSE(command.example.empty()) << command.name;
    EXPECT_THAT(command.example, StartsWith("$ railwatch " + command.name)) << command.name;
    EXPECT_THAT(CommandUsage(command.name), HasSubstr("\nExample:\n  $ railwatch "));
    if (command.min_args > 0 || command.max_args >= 0) {
      EXPECT_FALSE(command.args_problem.empty()) << command.name;
    }
    for (const CommandSpec::TakenFlag& f : command.flags) {
      EXPECT_NE(FindFlag(f.name), nullptr) << command.name << " takes --" << f.name;
    }
    for (const std::string& f : CommandFlags(command.name)) taken.insert(f);
    EXPECT_EQ(FindCommand(command.name), &command);
  }
  for (const FlagSpec& f : Flags()) {
    EXPECT_TRUE(taken.count(f.name)) << "no command takes --" << f.name;
    EXPECT_FALSE(f.help.empty()) << f.name;
  }
}

TEST(CliHelpTest, AWrongNumberOfArgumentsIsTheCommandsUsageError) {
  for (const auto& [args, problem] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"diagnoses", "extra"}, "railwatch diagnoses: takes no arguments"},
           {{"explain"}, "railwatch explain: wants one diagnosis ID"},
           {{"top"}, "railwatch top: wants one of pfc, ecn, errors"},
           {{"series"}, "railwatch series: wants a selector or an expression"},
           {{"version", "x"}, "railwatch version: takes no arguments"}}) {
    CliRun r = RunCli(args, CliOptions());
    EXPECT_EQ(r.code, kExitUsage) << args[0];
    EXPECT_THAT(r.err, StartsWith(problem));
    EXPECT_THAT(r.err, HasSubstr("usage: railwatch " + args[0]));
  }
  EXPECT_THAT(RunCli({"diagnosis"}, CliOptions()).err, HasSubstr("did you mean `diagnoses`?"));
}

}  // namespace cli_commands_test
}  // namespace railwatch::testing
