// NCCL RAS reports pasted whole or from their middle (2.24 and 2.30 wordings), MONITOR events,
// and the JSON format (2.28.7+), against what CATALOGUE.md section Q says each sample holds.
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "logs/ras_json.h"
#include "support/ttar.h"
#include "tests/unit/logs/log_test_util.h"

namespace railwatch::logs::testing {
namespace ras_samples_test {

using ::testing::HasSubstr;

std::string Fixture(const std::string& name) {
  return ::railwatch::testing::ReadFixture("logs/" + name);
}

struct Json {
  std::vector<LogEvent> events;
  std::vector<std::string> problems;
  std::vector<const LogEvent*> OfKind(std::string_view kind) const {
    std::vector<const LogEvent*> out;
    for (const LogEvent& e : events) {
      if (e.kind == kind) out.push_back(&e);
    }
    return out;
  }
};

Json ParseJsonFixture(const std::string& name) {
  Json j;
  const std::string text = Fixture(name);
  EXPECT_TRUE(LooksLikeRasJson(text)) << name;
  j.events = ParseRasJson(text, name, j.problems);
  return j;
}

TEST(RasTextSamples, V224CommunicatorsIncompleteMissingRankAndTimeouts) {
  Parsed p = ParseFixture("ras_03_v2.24doc_text_communicators_incomplete_missing_rank_timeout.txt");
  EXPECT_EQ(p.stats.unknown, 0u);
  EXPECT_EQ(p.stats.malformed, 0u);
  const LogEvent& r = p.One("nccl_ras.report");
  EXPECT_EQ(F(r, "collection_s"), "2.05");
  EXPECT_EQ(F(r, "group.0.ranks_per_node"), "7-8");
  EXPECT_EQ(F(r, "group.0.ranks_in_group"), "32");
  EXPECT_EQ(F(r, "group.0.status"), "RUNNING");
  EXPECT_EQ(F(r, "errors"), "INCOMPLETE");
  EXPECT_EQ(F(r, "missing_processes"), "1");
  EXPECT_EQ(F(r, "missing_nodes"), "172.16.64.213");
  EXPECT_EQ(F(r, "missing_pids"), "3487984");
  EXPECT_EQ(F(r, "timeouts"), "2");
  const LogEvent& issue = p.One("nccl_ras.comm_issue");
  EXPECT_EQ(F(issue, "comm_hash"), "cf264af53edbe986");
  EXPECT_EQ(F(issue, "issue"), "INCOMPLETE");
  EXPECT_EQ(F(issue, "missing_rank_ids"), "21");
}

TEST(RasTextSamples, V224DeadProcessFromTheErrorsSection) {
  Parsed p = ParseFixture("ras_04_v2.24doc_text_errors_dead_process.txt");
  EXPECT_EQ(p.stats.unknown, 0u);
  const LogEvent& r = p.One("nccl_ras.report");
  EXPECT_EQ(F(r, "dead_processes"), "1");
  EXPECT_EQ(F(r, "dead_nodes"), "172.16.64.213");
  EXPECT_EQ(F(r, "dead_pids"), "3487984");
  EXPECT_EQ(F(p.One("nccl_ras.comm_issue"), "missing_rank_ids"), "21");
}

TEST(RasTextSamples, V224GroupsAndAStatusMismatchWithTheDocsElision) {
  Parsed p = ParseFixture("ras_05_v2.24doc_text_finalize_init_groups_mismatch_status.txt");
  EXPECT_EQ(p.stats.malformed, 0u);
  const LogEvent& r = p.One("nccl_ras.report");
  EXPECT_EQ(F(r, "groups"), "3");
  EXPECT_EQ(F(r, "group.0.status"), "FINALIZE");
  EXPECT_EQ(F(r, "group.0.errors"), "MISMATCH");
  EXPECT_EQ(F(r, "group.1.comms"), "7");
  EXPECT_EQ(F(r, "group.1.ranks_in_group"), "28");
  EXPECT_EQ(F(r, "group.2.status"), "INIT");
  EXPECT_EQ(F(r, "status"), "FINALIZE,RUNNING,INIT");
  const LogEvent& issue = p.One("nccl_ras.comm_issue");
  EXPECT_EQ(F(issue, "comm_hash"), "9e17999afaa87dbb");
  EXPECT_EQ(F(issue, "status_counts"), "UNKNOWN:26,RUNNING:4,FINALIZE:2");
  EXPECT_EQ(F(issue, "ranks"), "0,8,16,24,4,20");
  EXPECT_EQ(F(issue, "pids"), "507285,1598388,3500071,2405067,507289,3500075");
}

TEST(RasTextSamples, V224CollectiveCountMismatchWithoutTheOperationsName) {
  Parsed p = ParseFixture("ras_06_v2.24doc_text_warnings_mismatch_collective_counts.txt");
  EXPECT_EQ(p.stats.unknown, 0u);
  const LogEvent& issue = p.One("nccl_ras.comm_issue");
  EXPECT_EQ(F(issue, "comm_hash"), "27a079b828ff1a75");
  EXPECT_EQ(F(issue, "issue"), "MISMATCH");
  EXPECT_EQ(F(issue, "op_counts"), "6650:26,6649:6");
  EXPECT_EQ(F(issue, "ranks"), "0,2,3,4,5,7");
  EXPECT_EQ(F(issue, "nodes"), "172.16.64.210");
}

TEST(RasTextSamples, ALoneErrorsLineOfAnotherLogIsNoReport) {
  Parsed p = ParseLines({"Errors", "step 5 loss 0.31", "Warnings", "", "done"});
  EXPECT_TRUE(p.OfKind("nccl_ras.report").empty());
}

TEST(RasTextSamples, MonitorPeerDeadLine) {
  Parsed p = ParseFixture("ras_11_v2.29doc_monitor_text_peer_dead_event.txt");
  const LogEvent& e = p.One("nccl_ras.event");
  EXPECT_EQ(F(e, "event"), "PEER_DEAD");
  EXPECT_EQ(F(e, "timestamp"), "2025-12-19 13:07:07");
  EXPECT_EQ(F(e, "pid"), "1524345");
  EXPECT_EQ(F(e, "node"), "172.16.64.245");
  EXPECT_EQ(F(e, "gpus"), "1");
  // Other bracketed lines are not RAS events.
  Parsed other = ParseLines({"[2025-12-19 13:07:07] Starting training step 5: loss 0.3"});
  EXPECT_TRUE(other.OfKind("nccl_ras.event").empty());
}

TEST(RasTextSamples, V230HealthyVerboseAfterAShellPrompt) {
  Parsed p = ParseFixture("ras_13_v2.30.7_example_text_verbose_healthy_REALIGNED.txt");
  const LogEvent& r = p.One("nccl_ras.report");
  EXPECT_EQ(F(r, "nccl_version"), "2.30.7");
  EXPECT_EQ(F(r, "cuda_version"), "12.8");
  EXPECT_EQ(F(r, "cuda_runtime"), "12080");
  EXPECT_EQ(F(r, "cuda_driver"), "13000");
  EXPECT_EQ(F(r, "collection_s"), "0.002");
  EXPECT_EQ(F(r, "nodes"), "2");
  EXPECT_EQ(F(r, "gpus"), "8");
  EXPECT_EQ(F(r, "errors"), "OK");
  EXPECT_TRUE(p.OfKind("nccl_ras.comm_issue").empty());
}

TEST(RasTextSamples, V230IncompleteRankExitedOnAMaskedNode) {
  Parsed p = ParseFixture("ras_14_v2.30.7_example_text_incomplete_rank_exited_REALIGNED.txt");
  const LogEvent& r = p.One("nccl_ras.report");
  EXPECT_EQ(F(r, "group.0.ranks_per_node"), "3-4");
  EXPECT_EQ(F(r, "group.0.ranks_in_group"), "7");
  EXPECT_EQ(F(r, "errors"), "INCOMPLETE");
  const LogEvent& issue = p.One("nccl_ras.comm_issue");
  EXPECT_EQ(F(issue, "comm_hash"), "1bdb83b038775869");
  EXPECT_EQ(F(issue, "ranks"), "7");
  EXPECT_EQ(F(issue, "gpus"), "3");
  EXPECT_EQ(F(issue, "pids"), "3748990");
  EXPECT_EQ(F(issue, "nodes"), "node1");
}

TEST(RasTextSamples, V230DeadWithNoCommunicatorData) {
  Parsed p = ParseFixture("ras_15_v2.30.7_example_text_dead_no_communicator_data.txt");
  const LogEvent& r = p.One("nccl_ras.report");
  EXPECT_EQ(F(r, "groups"), "0");
  EXPECT_EQ(F(r, "dead_processes"), "1");
  EXPECT_EQ(F(r, "dead_nodes"), "node1");
  EXPECT_EQ(F(r, "dead_pids"), "3748990");
}

TEST(RasTextSamples, V230SingleRankStragglerFromTheGroupTable) {
  Parsed p = ParseFixture("ras_16_v2.30.7_example_text_straggler_single_rank_mismatch_REALIGNED.txt");
  EXPECT_EQ(p.stats.malformed, 0u);
  const LogEvent& issue = p.One("nccl_ras.comm_issue");
  EXPECT_EQ(F(issue, "op"), "AllReduce");
  EXPECT_EQ(F(issue, "op_counts"), "64:7,60:1");
  EXPECT_EQ(F(issue, "ranks"), "7");
  EXPECT_EQ(F(issue, "pids"), "1650386");
  EXPECT_EQ(F(issue, "nodes"), "node1");
}

TEST(RasJsonSamples, V2291MissingUnresponsiveRank) {
  Json j = ParseJsonFixture("ras_07_v2.29.1doc_json_missing_rank_unresponsive.json");
  EXPECT_THAT(j.problems, ::testing::IsEmpty());
  ASSERT_EQ(j.OfKind("nccl_ras.report").size(), 1u);
  const LogEvent& r = *j.OfKind("nccl_ras.report")[0];
  EXPECT_EQ(F(r, "nccl_version"), "2.29.1");
  EXPECT_EQ(F(r, "cuda_runtime"), "13000");
  EXPECT_EQ(F(r, "timestamp"), "2025-12-19 13:06:53");
  EXPECT_EQ(F(r, "comms"), "1");
  EXPECT_EQ(F(r, "errors"), "INCOMPLETE");
  ASSERT_EQ(j.OfKind("nccl_ras.comm_issue").size(), 1u);
  const LogEvent& issue = *j.OfKind("nccl_ras.comm_issue")[0];
  EXPECT_EQ(F(issue, "comm_hash"), "ae94423cfbb2ef4a");
  EXPECT_EQ(F(issue, "secondary_hash"), "0xb7e7187447156001:0xb8242ed28a71381e");
  EXPECT_EQ(F(issue, "missing_rank_ids"), "1");
  EXPECT_EQ(F(issue, "pids"), "1524345");
  EXPECT_EQ(F(issue, "gpus"), "1");
  EXPECT_EQ(F(issue, "unresponsive_ranks"), "1");
  EXPECT_EQ(F(issue, "dead_ranks"), "<absent>");
}

TEST(RasJsonSamples, V2289AllReduceOneRankBehindOnFourNodes) {
  Json j = ParseJsonFixture("ras_08_v2.28.9_json_mismatch_allreduce_4nodes_a10g.json");
  EXPECT_THAT(j.problems, ::testing::IsEmpty());
  ASSERT_EQ(j.OfKind("nccl_ras.comm_issue").size(), 1u);
  const LogEvent& issue = *j.OfKind("nccl_ras.comm_issue")[0];
  EXPECT_EQ(F(issue, "comm_hash"), "f31e5874c3f25459");
  // Hashes are not zero-padded: 15 hex digits.
  EXPECT_EQ(F(issue, "secondary_hash"), "0xc4a40ef4528a7a56:0x2fda2edc54faea7");
  EXPECT_EQ(F(issue, "issue"), "MISMATCH");
  EXPECT_EQ(F(issue, "op"), "AllReduce");
  EXPECT_EQ(F(issue, "op_counts"), "101:3,100:1");
  EXPECT_EQ(F(issue, "ranks"), "1");
  EXPECT_EQ(F(issue, "nodes"), "10.0.109.86");
  EXPECT_EQ(F(issue, "pids"), "6247");
  EXPECT_EQ(F(*j.OfKind("nccl_ras.report")[0], "collection_s"), "0.001");
}

TEST(RasJsonSamples, V2289InvalidJsonIsRepairedAndSaidSo) {
  Json j = ParseJsonFixture(
      "ras_09_v2.28.9_json_missing_rank_unresponsive_INVALID_missing_comma.json");
  ASSERT_EQ(j.problems.size(), 1u);
  EXPECT_THAT(j.problems[0], HasSubstr("missing comma"));
  ASSERT_EQ(j.OfKind("nccl_ras.comm_issue").size(), 1u);
  const LogEvent& issue = *j.OfKind("nccl_ras.comm_issue")[0];
  EXPECT_EQ(F(issue, "missing_rank_ids"), "1");
  EXPECT_EQ(F(issue, "nodes"), "10.0.77.184");
  EXPECT_EQ(F(issue, "pids"), "10017");
  EXPECT_EQ(F(issue, "gpus"), "1");
  EXPECT_EQ(F(issue, "unresponsive_ranks"), "1");
  EXPECT_EQ(F(*j.OfKind("nccl_ras.report")[0], "timestamp"), "2026-06-19 06:55:57");
}

TEST(RasJsonSamples, V2289ThreeCommunicatorsOneBehind) {
  Json j = ParseJsonFixture("ras_10_v2.28.9_json_three_comms_one_mismatched_single_node.json");
  EXPECT_THAT(j.problems, ::testing::IsEmpty());
  EXPECT_EQ(F(*j.OfKind("nccl_ras.report")[0], "comms"), "3");
  ASSERT_EQ(j.OfKind("nccl_ras.comm_issue").size(), 1u);
  const LogEvent& issue = *j.OfKind("nccl_ras.comm_issue")[0];
  EXPECT_EQ(F(issue, "comm_hash"), "4e0104c2022fa2f9");
  EXPECT_EQ(F(issue, "op_counts"), "10:1,3:1");
  EXPECT_EQ(F(issue, "pids"), "10207");
}

TEST(RasJsonSamples, MonitorPeerDeadEvent) {
  Json j = ParseJsonFixture("ras_12_v2.29doc_monitor_json_peer_dead_event.json");
  EXPECT_THAT(j.problems, ::testing::IsEmpty());
  ASSERT_EQ(j.events.size(), 1u);
  const LogEvent& e = j.events[0];
  EXPECT_EQ(e.kind, "nccl_ras.event");
  EXPECT_EQ(F(e, "event"), "PEER_DEAD");
  EXPECT_EQ(F(e, "group"), "LIFECYCLE");
  EXPECT_EQ(F(e, "node"), "172.16.64.245");
  EXPECT_EQ(F(e, "pid"), "1524345");
  EXPECT_EQ(F(e, "gpus"), "1");
  EXPECT_GT(e.time_unix_nano, 0);
}

// rasClientsNotifyEvent's form for a peer NCCL has no process for: its RAS address only
// (ncclSocketToString: "host<port>"), as NCCL 2.29-2.30 print it, IPv4 and IPv6.
TEST(RasJson, AMonitorEventOfAPeerKnownByItsAddressOnly) {
  std::vector<std::string> problems;
  const std::string text =
      "{\n  \"timestamp\": \"2025-12-19 13:08:07\",\n  \"group\": \"TRACE\",\n"
      "  \"event\": \"PEER_UNRESPONSIVE\",\n  \"peer\": {\n"
      "    \"addr\": \"172.16.64.245<41234>\"\n  },\n"
      "  \"details\": \"peer not responding for 5s (keepalive warning)\"\n}\n"
      "{\"timestamp\": \"2025-12-19 13:08:08\", \"group\": \"TRACE\", \"event\": "
      "\"PEER_RECOVERED\", \"peer\": {\"addr\": \"fd00::7<41234>\"}, \"details\": \"\"}\n";
  std::vector<LogEvent> events = ParseRasJson(text, "monitor.json", problems);
  EXPECT_THAT(problems, ::testing::IsEmpty());
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(F(events[0], "event"), "PEER_UNRESPONSIVE");
  EXPECT_EQ(F(events[0], "node"), "172.16.64.245");
  EXPECT_EQ(F(events[0], "pid"), "");
  EXPECT_EQ(F(events[0], "details"), "peer not responding for 5s (keepalive warning)");
  EXPECT_EQ(F(events[1], "node"), "fd00::7");
}

// Valid JSON whose fields have types NCCL never writes (a rank that is a number, a flag that is
// 0): a problem for that document, no exception out of the parser.
TEST(RasJson, FieldsOfAnotherTypeAreAProblemNotACrash) {
  std::vector<std::string> problems;
  const std::string text =
      "{\"communicators_count\": 1, \"communicators\": [{\"ranks\": [1]}]}\n"
      "{\"communicators_count\": 1, \"communicators\": [{\"hash\": \"0x1\", \"ranks\": "
      "[{\"rank\": 0, \"status\": {\"abort_flag\": 0, \"async_error\": \"x\"}}]}]}\n"
      "{\"event\": \"PEER_DEAD\", \"peer\": {\"host\": \"h3\", \"pid\": 9}}\n";
  std::vector<LogEvent> events = ParseRasJson(text, "odd.json", problems);
  EXPECT_GE(problems.size(), 1u);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().kind, "nccl_ras.event");
}

// A communicator both behind on a collective and missing a rank: the report's missing nodes are
// the missing rank's, its outliers the rank behind.
TEST(RasJson, MissingRanksAndRanksBehindStayApart) {
  std::vector<std::string> problems;
  const std::string text = R"({"nccl_version": "2.29.2", "communicators_count": 1,
    "communicators": [{"hash": "0xab", "size": 3, "ranks_count": 2, "missing_ranks_count": 1,
      "ranks": [
        {"rank": 0, "host": "h1", "pid": 1, "cuda_dev": 0, "collective_counts": {"AllReduce": 5}},
        {"rank": 1, "host": "h2", "pid": 2, "cuda_dev": 0, "collective_counts": {"AllReduce": 4}}],
      "missing_ranks": [{"rank": 2, "host": "h3", "pid": 3, "cuda_dev": 0,
                         "status": {"unresponsive": true, "considered_dead": true}}]}]})";
  std::vector<LogEvent> events = ParseRasJson(text, "both.json", problems);
  EXPECT_TRUE(problems.empty());
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(F(events[0], "outlier_nodes"), "h2");
  EXPECT_EQ(F(events[0], "missing_nodes"), "h3");
  EXPECT_EQ(F(events[0], "missing_pids"), "3");
  EXPECT_EQ(F(events[1], "issue"), "MISMATCH,INCOMPLETE");
  EXPECT_EQ(F(events[1], "dead_ranks"), "2");
}

TEST(RasJson, ABrokenDocumentSaysWhereAndTheNextIsStillRead) {
  std::vector<std::string> problems;
  const std::string text =
      "{\"timestamp\": \"2025-12-19 13:07:07\", \"event\": \"PEER_DEAD\", \"peer\": {\"host\": "
      "\"h1\", \"pid\": 7}}\n"
      "{\"event\": \"PEER_DEAD\", \"peer\": {\"host\": \"h2\", \"pid\": ]}}\n"
      "{\"event\": \"PEER_DEAD\", \"peer\": {\"host\": \"h3\", \"pid\": 9}}\n";
  std::vector<LogEvent> events = ParseRasJson(text, "m.json", problems);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(F(events[0], "node"), "h1");
  EXPECT_EQ(F(events[1], "node"), "h3");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0], ::testing::StartsWith("m.json:2:"));
}

}  // namespace ras_samples_test
}  // namespace railwatch::logs::testing
