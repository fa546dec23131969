// NCCL Inspector output (logs/nccl_inspector.h): every field CATALOGUE.md section R lists for
// the real samples in tests/fixtures/logs (copied verbatim from shared/realworld), then the
// grammar's rough edges, the per-member summary and the straggler test.

#include "logs/nccl_inspector.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/ttar.h"

namespace railwatch::logs::nccl_inspector_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::StartsWith;

std::string ReadFixture(const std::string& name) {
  std::string path = railwatch::testing::FixturePath("logs/" + name);
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The only record of a fixture that must parse without a problem.
InspectorRecord OnlyRecord(const std::string& name) {
  std::string text = ReadFixture(name);
  EXPECT_TRUE(LooksLikeInspectorOutput(text)) << name;
  InspectorParse p = ParseInspectorOutput(text);
  EXPECT_THAT(p.problems, IsEmpty()) << name;
  EXPECT_EQ(p.skipped, 0u) << name;
  EXPECT_EQ(p.records.size(), 1u) << name;
  return p.records.empty() ? InspectorRecord() : p.records[0];
}

// One compact JSONL collective record.
std::string CollLine(const std::string& comm, int rank, const std::string& host, int64_t seq,
                     double exec_us, double busbw) {
  return absl::StrCat("{\"header\":{\"id\":\"", comm, "\",\"rank\":", rank,
                      ",\"n_ranks\":4,\"nnodes\":1},\"metadata\":{\"inspector_output_format_"
                      "version\":\"v4.0\",\"git_rev\":\"\",\"rec_mechanism\":\"nccl_profiler_"
                      "interface\",\"dump_timestamp_us\":1752867229276385,\"hostname\":\"",
                      host, "\",\"pid\":", 1000 + rank,
                      "},\"coll_perf\":{\"coll\":\"AllReduce\",\"coll_sn\":", seq,
                      ",\"coll_msg_size_bytes\":1048576,\"coll_exec_time_us\":", exec_us,
                      ",\"coll_timing_source\":\"kernel_gpu\",\"coll_algobw_gbs\":", busbw / 2,
                      ",\"coll_busbw_gbs\":", busbw, "}}\n");
}

// What CATALOGUE.md lists for the record of one JSON sample.
struct JsonFacts {
  std::string comm_id;
  int rank, n_ranks, n_nodes;
  std::string host;
  int64_t pid, dump_timestamp_us;
  std::string op;
  int64_t seq;
  uint64_t msg_bytes;
  double exec_us, algbw_gbs, busbw_gbs;
  std::string timing_source;
};

void ExpectFacts(const std::string& fixture, const JsonFacts& want) {
  SCOPED_TRACE(fixture);
  InspectorRecord r = OnlyRecord(fixture);
  EXPECT_EQ(r.format, "json");
  EXPECT_EQ(r.line, 1);
  EXPECT_EQ(r.version, "v4.0");
  EXPECT_EQ(r.comm_id, want.comm_id);
  EXPECT_EQ(r.comm_name, "");
  EXPECT_EQ(r.rank, want.rank);
  EXPECT_EQ(r.n_ranks, want.n_ranks);
  EXPECT_EQ(r.n_nodes, want.n_nodes);
  EXPECT_EQ(r.host, want.host);
  EXPECT_EQ(r.pid, want.pid);
  EXPECT_EQ(r.gpu, "");
  EXPECT_EQ(r.dump_time_unix_nano, want.dump_timestamp_us * 1000);
  EXPECT_EQ(r.op, want.op);
  EXPECT_FALSE(r.p2p);
  EXPECT_EQ(r.seq, want.seq);
  EXPECT_EQ(r.peer, -1);
  EXPECT_EQ(r.msg_bytes, want.msg_bytes);
  EXPECT_DOUBLE_EQ(r.exec_us, want.exec_us);
  EXPECT_DOUBLE_EQ(r.algbw_gbs, want.algbw_gbs);
  EXPECT_DOUBLE_EQ(r.busbw_gbs, want.busbw_gbs);
  EXPECT_EQ(r.timing_source, want.timing_source);
  EXPECT_EQ(r.algo_proto, "");
  EXPECT_THAT(r.other_labels, IsEmpty());
}

TEST(InspectorSamples, V40AllReduceEarlyAccessWithoutTimingSource) {
  // No coll_timing_source: absent in the 2.28.1 early-access build.
  ExpectFacts(
      "inspector_01_v4.0_nccl2.28.1ea_json_allreduce_h100_rec_profiler_plugin_no_timing_source."
      "json",
      {"0x7f8c496ae9f661", 2, 8, 1, "cw-dfw-h100-002-243-012", 1639453, 1748030377748202,
       "AllReduce", 1407, 17179869184u, 61974, 277.210914, 485.119099, ""});
}

TEST(InspectorSamples, V40VerboseReduceScatterWithEventTrace) {
  // event_trace_sn / event_trace_ts are read past.
  ExpectFacts("inspector_02_v4.0_nccl2.28.1ea_json_verbose_reducescatter_event_trace_h100.json",
              {"0xe62dedaa97644a", 4, 8, 1, "cw-dfw-h100-004-021-003", 438776, 1752867229276385,
               "ReduceScatter", 1231, 2147483648u, 41057, 418.439467, 366.134533, "kernel_gpu"});
}

TEST(InspectorSamples, V40ReduceScatterRank31Of32On4Nodes) {
  ExpectFacts("inspector_03_v4.0_nccl2.28.1ea_json_reducescatter_rank31_of_32_4nodes_h100.json",
              {"0x9e7a479f95a66c", 31, 32, 4, "cw-dfw-h100-003-131-026", 468528, 1749490229087081,
               "ReduceScatter", 129, 65536u, 110, 19.065018, 18.469236, "kernel_gpu"});
}

TEST(InspectorSamples, V51TextfileCollectiveAndP2pOneRecordPerKey) {
  std::string text =
      ReadFixture("inspector_05_v5.1_nccl2.30_readme_prom_coll_and_p2p_nvl72004.prom");
  EXPECT_TRUE(LooksLikeInspectorOutput(text));
  InspectorParse p = ParseInspectorOutput(text);
  EXPECT_THAT(p.problems, IsEmpty());
  ASSERT_EQ(p.records.size(), 2u);  // four gauges, two keys

  const InspectorRecord& coll = p.records[0];
  EXPECT_EQ(coll.format, "prometheus");
  EXPECT_EQ(coll.line, 1);
  EXPECT_EQ(coll.version, "v5.1");
  EXPECT_EQ(coll.slurm_job_id, "unknown");
  EXPECT_EQ(coll.host, "nvl72004-T01");
  EXPECT_EQ(coll.gpu, "GPU0");
  EXPECT_EQ(coll.comm_id, "");
  EXPECT_EQ(coll.comm_name, "DP Group 0");
  EXPECT_EQ(coll.n_nodes, 1);
  EXPECT_EQ(coll.n_ranks, 4);
  EXPECT_EQ(coll.rank, -1);
  EXPECT_EQ(coll.op, "AllReduce");
  EXPECT_FALSE(coll.p2p);
  EXPECT_EQ(coll.seq, -1);
  EXPECT_EQ(coll.msg_bytes, 0u);
  EXPECT_EQ(coll.message_size_bucket, "4-5GB");
  // The README's spelling; NCCL itself writes RING_LL.
  EXPECT_EQ(coll.algo_proto, "Ring_ll");
  EXPECT_TRUE(absl::EqualsIgnoreCase(coll.algo_proto, "RING_LL"));
  EXPECT_DOUBLE_EQ(coll.busbw_gbs, 678.263);
  EXPECT_DOUBLE_EQ(coll.exec_us, 9498.47);
  EXPECT_TRUE(std::isnan(coll.algbw_gbs));
  EXPECT_THAT(coll.other_labels, IsEmpty());

  const InspectorRecord& send = p.records[1];
  EXPECT_EQ(send.line, 3);
  EXPECT_TRUE(send.p2p);
  EXPECT_EQ(send.op, "Send");
  EXPECT_EQ(send.message_size_bucket, "512-513MB");
  EXPECT_EQ(send.algo_proto, "");
  EXPECT_EQ(send.host, "nvl72004-T01");
  EXPECT_EQ(send.comm_name, "DP Group 0");
  EXPECT_DOUBLE_EQ(send.busbw_gbs, 464.9);
  EXPECT_DOUBLE_EQ(send.exec_us, 1154.87);
}

TEST(InspectorSamples, RcclTextfileHelpTypeLinesAndClusterLabel) {
  std::string text =
      ReadFixture("inspector_06_v5.1_rccl_fork_doc_prom_help_type_cluster_label.prom");
  EXPECT_TRUE(LooksLikeInspectorOutput(text));
  InspectorParse p = ParseInspectorOutput(text);
  EXPECT_THAT(p.problems, IsEmpty());  // the 8 # HELP / # TYPE lines are skipped
  EXPECT_EQ(p.skipped, 0u);
  ASSERT_EQ(p.records.size(), 1u);
  const InspectorRecord& r = p.records[0];
  EXPECT_EQ(r.line, 9);
  EXPECT_EQ(r.version, "v5.1");
  EXPECT_THAT(r.other_labels, ElementsAre(Pair("cluster", "alola")));
  EXPECT_EQ(r.slurm_job_id, "67941748");
  EXPECT_EQ(r.host, "node001");
  EXPECT_EQ(r.gpu, "GPU0");
  EXPECT_EQ(r.comm_name, "unknown");
  EXPECT_EQ(r.n_nodes, 2);
  EXPECT_EQ(r.n_ranks, 16);
  EXPECT_EQ(r.op, "AllReduce");
  EXPECT_FALSE(r.p2p);
  EXPECT_EQ(r.message_size_bucket, "1-2MB");
  EXPECT_EQ(r.algo_proto, "TREE_LL128");
  EXPECT_DOUBLE_EQ(r.busbw_gbs, 34.2887);
  EXPECT_DOUBLE_EQ(r.exec_us, 58.8652);
}

TEST(InspectorSamples, CompactJsonlLineFromNonUpstreamSerializer) {
  // Metadata in another key order, no rec_mechanism, coll_exec_time_us written as 5663.0.
  ExpectFacts("inspector_07_v4.0_datadog_socket_jsonl_line_nonupstream_serializer.jsonl",
              {"0xad56c683b0c4ef", 1, 3, 3, "nanogpt-nccl-test-worker-0", 48, 1772585717263338,
               "AllReduce", 8995, 2360832u, 5663.0, 0.416887, 0.555850, "kernel_gpu"});
}

TEST(InspectorParse, PrettyPrintedObjectsOneAfterAnother) {
  std::string first = ReadFixture(
      "inspector_01_v4.0_nccl2.28.1ea_json_allreduce_h100_rec_profiler_plugin_no_timing_source."
      "json");
  std::string second = ReadFixture(
      "inspector_02_v4.0_nccl2.28.1ea_json_verbose_reducescatter_event_trace_h100.json");
  InspectorParse p = ParseInspectorOutput(absl::StrCat(
      first, second,
      ReadFixture("inspector_07_v4.0_datadog_socket_jsonl_line_nonupstream_serializer.jsonl")));
  int second_line = 1 + static_cast<int>(std::count(first.begin(), first.end(), '\n'));
  EXPECT_THAT(p.problems, IsEmpty());
  ASSERT_EQ(p.records.size(), 3u);
  EXPECT_EQ(p.records[0].line, 1);
  EXPECT_EQ(p.records[1].line, second_line);
  EXPECT_EQ(p.records[1].op, "ReduceScatter");
  EXPECT_EQ(p.records[2].line,
            second_line + static_cast<int>(std::count(second.begin(), second.end(), '\n')));
  EXPECT_EQ(p.records[2].comm_id, "0xad56c683b0c4ef");
}

TEST(InspectorParse, BareNanIsAbsentAndErrorColumnsStayTrue) {
  std::string good =
      "{\"header\":{\"id\":\"0x1\",\"rank\":0},\"coll_perf\":{\"coll\":\"AllGather\","
      "\"coll_sn\":3,\"coll_exec_time_us\":12,\"coll_algobw_gbs\":nan,"
      "\"coll_busbw_gbs\":-nan}}";
  // After a `nan` that is read as null (one character longer), the column of the real error.
  std::string bad =
      "{\"header\":{\"id\":\"0x1\",\"rank\":1},\"coll_perf\":{\"coll\":\"AllGather\","
      "\"coll_algobw_gbs\":nan,\"coll_busbw_gbs\":oops}}";
  InspectorParse p = ParseInspectorOutput(absl::StrCat(good, "\n", bad, "\n"));
  ASSERT_EQ(p.records.size(), 1u);
  EXPECT_TRUE(std::isnan(p.records[0].algbw_gbs));
  EXPECT_TRUE(std::isnan(p.records[0].busbw_gbs));
  EXPECT_DOUBLE_EQ(p.records[0].exec_us, 12);
  EXPECT_EQ(p.skipped, 1u);
  ASSERT_EQ(p.problems.size(), 1u);
  EXPECT_THAT(p.problems[0], StartsWith(absl::StrCat("2:", bad.find("oops") + 1, ": ")));
  EXPECT_THAT(p.problems[0], HasSubstr("invalid literal"));
}

TEST(InspectorParse, BrokenLineIsNamedAndTheOthersStillParse) {
  std::string text = absl::StrCat(
      CollLine("0xa", 0, "h0", 1, 100, 10),
      // A missing comma, then a line cut short.
      "{\"header\":{\"id\":\"0xa\" \"rank\":1},\"coll_perf\":{\"coll\":\"AllReduce\"}}\n",
      CollLine("0xa", 2, "h2", 1, 100, 10),
      "{\"header\":{\"id\":\"0xa\",\"rank\":3},\"coll_perf\":{\"coll\":\"AllRed\n",
      CollLine("0xa", 3, "h3", 2, 100, 10));
  InspectorParse p = ParseInspectorOutput(text);
  ASSERT_EQ(p.records.size(), 3u);
  EXPECT_EQ(p.records[0].line, 1);
  EXPECT_EQ(p.records[1].line, 3);
  EXPECT_EQ(p.records[2].line, 5);
  EXPECT_EQ(p.records[2].rank, 3);
  EXPECT_EQ(p.skipped, 2u);
  ASSERT_EQ(p.problems.size(), 2u);
  // The column of the last character read: the end of the unexpected "rank".
  EXPECT_THAT(p.problems[0], StartsWith("2:28: syntax error while parsing object"));
  EXPECT_THAT(p.problems[1], StartsWith("4:1: JSON object not closed before line 5"));
}

TEST(InspectorParse, WrongTypeMakesTheRecordBad) {
  InspectorParse p = ParseInspectorOutput(
      "{\"header\":{\"id\":\"0x1\",\"rank\":\"two\"},\"coll_perf\":{\"coll\":\"AllReduce\"}}\n"
      "{\"header\":{\"id\":\"0x1\",\"rank\":2},\"coll_perf\":{\"coll_sn\":4}}\n");
  EXPECT_THAT(p.records, IsEmpty());
  EXPECT_EQ(p.skipped, 2u);
  EXPECT_THAT(p.problems, ElementsAre("1: header.rank is \"two\", not a whole number in range",
                                      "2: coll_perf.coll is missing"));
}

TEST(InspectorParse, DumpStatsRecordIsSkippedWithoutAProblem) {
  std::string text = absl::StrCat(
      CollLine("0xa", 0, "h0", 1, 100, 10),
      "{\"header\":{\"id\":\"0xa\",\"rank\":0},\"metadata\":{\"inspector_output_format_version\":"
      "\"v4.3\",\"hostname\":\"h0\"},\"dump_stats\":{\"records_dumped\":5,\"records_dropped\":0}}"
      "\n",
      CollLine("0xa", 0, "h0", 2, 100, 10));
  InspectorParse p = ParseInspectorOutput(text);
  EXPECT_THAT(p.problems, IsEmpty());
  EXPECT_EQ(p.skipped, 0u);
  EXPECT_EQ(p.without_perf, 1u);
  ASSERT_EQ(p.records.size(), 2u);
  EXPECT_EQ(p.records[1].seq, 2);
}

TEST(InspectorParse, P2pRecordOf230) {
  InspectorParse p = ParseInspectorOutput(
      "{\"header\":{\"id\":\"0xabc\",\"comm_name\":\"PP Group 1\",\"rank\":0,\"n_ranks\":2,"
      "\"nnodes\":1},\"metadata\":{\"inspector_output_format_version\":\"v4.0\",\"hostname\":"
      "\"node0\",\"pid\":100,\"dump_timestamp_us\":12},\"p2p_perf\":{\"p2p\":\"Send\",\"p2p_sn\":8,"
      "\"p2p_peer\":1,\"p2p_msg_size_bytes\":524288,\"p2p_exec_time_us\":50,\"p2p_timing_source\":"
      "\"kernel_gpu\",\"p2p_algobw_gbs\":30.000000,\"p2p_busbw_gbs\":29.500000}}\n");
  EXPECT_THAT(p.problems, IsEmpty());
  ASSERT_EQ(p.records.size(), 1u);
  const InspectorRecord& r = p.records[0];
  EXPECT_TRUE(r.p2p);
  EXPECT_EQ(r.op, "Send");
  EXPECT_EQ(r.comm_name, "PP Group 1");
  EXPECT_EQ(r.seq, 8);
  EXPECT_EQ(r.peer, 1);
  EXPECT_EQ(r.msg_bytes, 524288u);
  EXPECT_DOUBLE_EQ(r.exec_us, 50);
  EXPECT_EQ(r.timing_source, "kernel_gpu");
  EXPECT_DOUBLE_EQ(r.algbw_gbs, 30);
  EXPECT_DOUBLE_EQ(r.busbw_gbs, 29.5);
}

TEST(InspectorParse, TextfileProblemsNameLineAndColumn) {
  InspectorParse p = ParseInspectorOutput(
      "nccl_bus_bandwidth_gbs{node=\"n1\",collective=\"AllReduce\"} 10 1700000000000\n"
      "nccl_bus_bandwidth_gbs{node=\"n1\" collective=\"AllGather\"} 10\n"
      "node_load1 0.5\n"
      "nccl_p2p_bus_bandwidth_gbs{node=\"n1\",p2p_operation=\"Recv\"} fast\n"
      "nccl_collective_exec_time_microseconds{node=\"n1\",nranks=\"x\",collective=\"A\"} 1\n"
      "nccl_p2p_exec_time_microseconds{node=\"n1\"} 1\n");
  ASSERT_EQ(p.records.size(), 1u);
  EXPECT_EQ(p.records[0].host, "n1");
  EXPECT_EQ(p.records[0].dump_time_unix_nano, 1700000000000000000);
  EXPECT_EQ(p.skipped, 5u);
  EXPECT_THAT(
      p.problems,
      ElementsAre("2:34: ',' or '}' expected after a label",
                  "3: node_load1 is not an NCCL Inspector metric", "4:60: sample value \"fast\"",
                  "5: label nranks=\"x\" is not a number", "6: no p2p_operation label"));
}

TEST(InspectorParse, SniffTellsInspectorOutputFromOtherLogs) {
  EXPECT_TRUE(LooksLikeInspectorOutput("# HELP nccl_bus_bandwidth_gbs bus bandwidth\n"));
  EXPECT_TRUE(LooksLikeInspectorOutput("nccl_p2p_exec_time_microseconds{gpu=\"GPU1\"} 3\n"));
  EXPECT_FALSE(LooksLikeInspectorOutput(
      ReadFixture("ras_08_v2.28.9_json_mismatch_allreduce_4nodes_a10g.json")));
  EXPECT_FALSE(
      LooksLikeInspectorOutput(ReadFixture("nccl_01_v2.11.4_net_socket_2node_allreduce_perf.log")));
  EXPECT_FALSE(LooksLikeInspectorOutput("{\"coll\": \"AllReduce\"}"));
  EXPECT_FALSE(LooksLikeInspectorOutput(""));
}

TEST(InspectorSummary, OneSummaryPerMemberNotPerCollective) {
  std::string text;
  for (int i = 0; i < 1000; ++i) {
    absl::StrAppend(&text, CollLine("0xa", 0, "h0", 1000 - i, 100 + i % 2, 10 + 2 * (i % 2)));
  }
  InspectorParse p = ParseInspectorOutput(text);
  ASSERT_EQ(p.records.size(), 1000u);
  std::vector<InspectorSummary> s = SummariseInspector(p.records);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].comm, "0xa");
  EXPECT_EQ(s[0].host, "h0");
  EXPECT_EQ(s[0].rank, 0);
  EXPECT_EQ(s[0].op, "AllReduce");
  EXPECT_FALSE(s[0].p2p);
  EXPECT_EQ(s[0].count, 1000u);
  EXPECT_DOUBLE_EQ(s[0].mean_exec_us, 100.5);
  EXPECT_DOUBLE_EQ(s[0].mean_busbw_gbs, 11);
  EXPECT_DOUBLE_EQ(s[0].min_busbw_gbs, 10);
  EXPECT_DOUBLE_EQ(s[0].max_busbw_gbs, 12);
  EXPECT_EQ(s[0].first_seq, 1);
  EXPECT_EQ(s[0].last_seq, 1000);
}

TEST(InspectorSummary, TextfileMembersAreKeyedByCommNameAndGpu) {
  InspectorParse p = ParseInspectorOutput(
      ReadFixture("inspector_05_v5.1_nccl2.30_readme_prom_coll_and_p2p_nvl72004.prom"));
  std::vector<InspectorSummary> s = SummariseInspector(p.records);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].comm, "DP Group 0");
  EXPECT_EQ(s[0].gpu, "GPU0");
  EXPECT_EQ(s[0].rank, -1);
  EXPECT_EQ(s[0].op, "AllReduce");
  EXPECT_EQ(s[0].first_seq, -1);
  EXPECT_DOUBLE_EQ(s[0].mean_busbw_gbs, 678.263);
  EXPECT_EQ(s[1].op, "Send");
  EXPECT_TRUE(s[1].p2p);
}

// Four ranks of one communicator, ten AllReduces each; rank 2 at `slow_share` of the others'
// bus bandwidth (and as much slower).
std::vector<InspectorSummary> FourRanks(double slow_share) {
  std::string text;
  for (int seq = 1; seq <= 10; ++seq) {
    for (int rank = 0; rank < 4; ++rank) {
      double share = rank == 2 ? slow_share : 1.0;
      absl::StrAppend(
          &text, CollLine("0xa", rank, absl::StrCat("h", rank), seq, 1000 / share, 200 * share));
    }
  }
  InspectorParse p = ParseInspectorOutput(text);
  EXPECT_THAT(p.problems, IsEmpty());
  return SummariseInspector(p.records);
}

TEST(InspectorStragglers, RankAtHalfItsPeersBandwidthIsTheOnlyStraggler) {
  std::vector<InspectorSummary> s = FourRanks(0.5);
  ASSERT_EQ(s.size(), 4u);
  std::vector<InspectorStraggler> st = FindInspectorStragglers(s);
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0].comm, "0xa");
  EXPECT_EQ(st[0].op, "AllReduce");
  EXPECT_EQ(st[0].rank, 2);
  EXPECT_EQ(st[0].host, "h2");
  EXPECT_DOUBLE_EQ(st[0].busbw_gbs, 100);
  EXPECT_DOUBLE_EQ(st[0].peers_median_busbw_gbs, 200);
  EXPECT_DOUBLE_EQ(st[0].share, 0.5);
  EXPECT_DOUBLE_EQ(st[0].exec_us, 2000);
  EXPECT_DOUBLE_EQ(st[0].peers_median_exec_us, 1000);
}

// Rank 2 launches late: its collectives end with everyone's, so it spends 2/3 of its peers'
// time in them (and shows 1.5x their bus bandwidth). It is the one every peer waits for.
TEST(InspectorStragglers, ARankThatLaunchesLateIsNamedLate) {
  std::vector<InspectorStraggler> st = FindInspectorStragglers(FourRanks(1.5));
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0].rank, 2);
  EXPECT_TRUE(st[0].late);
  EXPECT_NEAR(st[0].share, 2.0 / 3, 1e-6);  // exec times print with 6 decimals
  EXPECT_DOUBLE_EQ(st[0].peers_median_exec_us, 1000);
  // A slow member is not late.
  EXPECT_FALSE(FindInspectorStragglers(FourRanks(0.5))[0].late);
}

// Three members, one late (5 ms against 20 and 20): the other two look slow against a median
// the late one drags down, but they are its victims. Only the late one is named.
TEST(InspectorStragglers, TheVictimsOfALateMemberAreNotStragglers) {
  std::string text;
  for (int rank = 0; rank < 3; ++rank) {
    absl::StrAppend(&text, CollLine("0xb", rank, absl::StrCat("h", rank), 1, rank == 0 ? 5000 : 20000,
                                    rank == 0 ? 400 : 100));
  }
  InspectorParse p = ParseInspectorOutput(text);
  std::vector<InspectorStraggler> st = FindInspectorStragglers(SummariseInspector(p.records));
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0].rank, 0);
  EXPECT_TRUE(st[0].late);
}

TEST(InspectorStragglers, NoneWhenAllAreEqualOrTooFewMembers) {
  EXPECT_THAT(FindInspectorStragglers(FourRanks(1.0)), IsEmpty());
  // 0.9 of the peers is within the default ratio of 0.8.
  EXPECT_THAT(FindInspectorStragglers(FourRanks(0.9)), IsEmpty());
  EXPECT_THAT(FindInspectorStragglers(FourRanks(0.9), 0.95), ::testing::SizeIs(1));
  std::vector<InspectorSummary> two = FourRanks(0.5);
  two.resize(2);
  EXPECT_THAT(FindInspectorStragglers(two), IsEmpty());
  EXPECT_THAT(FindInspectorStragglers(FourRanks(0.5), 0), IsEmpty());
}

TEST(InspectorStragglers, SlowExecTimeAloneWhereBandwidthIsUnknown) {
  InspectorParse p = ParseInspectorOutput(
      "nccl_collective_exec_time_microseconds{gpu=\"GPU0\",comm_name=\"c\",collective=\"A\"} 10\n"
      "nccl_collective_exec_time_microseconds{gpu=\"GPU1\",comm_name=\"c\",collective=\"A\"} 11\n"
      "nccl_collective_exec_time_microseconds{gpu=\"GPU2\",comm_name=\"c\",collective=\"A\"} 40\n");
  std::vector<InspectorStraggler> st = FindInspectorStragglers(SummariseInspector(p.records));
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(st[0].gpu, "GPU2");
  EXPECT_TRUE(std::isnan(st[0].busbw_gbs));
  EXPECT_DOUBLE_EQ(st[0].peers_median_exec_us, 10.5);
  EXPECT_DOUBLE_EQ(st[0].share, 10.5 / 40);
}

}  // namespace railwatch::logs::nccl_inspector_test
