// NcclInspectorCollector: NCCL Inspector JSONL records followed in files, summed per
// communicator and rank into three counters, with the rank's local rank.
#include "collectors/nccl_inspector_collector.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/recording_emitter.h"

namespace railwatch::nccl_inspector_collector_test {
namespace fs = std::filesystem;
using ::railwatch::testing::RecordingEmitter;

std::string Record(const std::string& comm, int rank, int n_ranks, int n_nodes, int64_t seq,
                   double exec_us, double busbw_gbs, const std::string& section = "coll_perf",
                   const std::string& hostname = "h") {
  const std::string op = section == "coll_perf" ? "\"coll\":\"AllReduce\",\"coll_sn\""
                                                : "\"p2p\":\"Send\",\"p2p_sn\"";
  const std::string prefix = section == "coll_perf" ? "coll" : "p2p";
  return absl::StrFormat(
      "{\"header\":{\"id\":\"%s\",\"rank\":%d,\"n_ranks\":%d,\"nnodes\":%d},"
      "\"metadata\":{\"inspector_output_format_version\":\"v4.0\",\"hostname\":\"%s\","
      "\"pid\":100,\"dump_timestamp_us\":1},\"%s\":{%s:%d,\"%s_msg_size_bytes\":1048576,"
      "\"%s_exec_time_us\":%g,\"%s_timing_source\":\"kernel_gpu\",\"%s_busbw_gbs\":%g}}\n",
      comm, rank, n_ranks, n_nodes, hostname, section, op, seq, prefix, prefix, exec_us, prefix,
      prefix, busbw_gbs);
}

class NcclInspectorCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           absl::StrFormat("inspector-%d-%s", ::getpid(),
                           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Append(const std::string& file, const std::string& text) {
    std::ofstream out(dir_ / file, std::ios::app);
    out << text;
  }
  std::unique_ptr<NcclInspectorCollector> Make(int settle_cycles = 3, std::string host = "") {
    NcclInspectorCollector::Options o;
    o.tailer.patterns = {(dir_ / "*.log").string()};
    o.settle_cycles = settle_cycles;
    o.host = std::move(host);
    return std::make_unique<NcclInspectorCollector>(o, clock_);
  }
  // Collects until the collector has read `records` records (the tailer reads on its thread).
  void CollectUntil(NcclInspectorCollector& c, uint64_t records) {
    for (int i = 0; i < 500; ++i) {
      ASSERT_TRUE(c.Collect(emitter_).ok());
      if (emitter_.Get("railwatch_nccl_inspector_records_total").value_or(0) >= records) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL() << "only " << emitter_.Get("railwatch_nccl_inspector_records_total").value_or(0)
           << " records read of " << records;
  }

  fs::path dir_;
  FakeClock clock_;
  RecordingEmitter emitter_;
};

TEST_F(NcclInspectorCollectorTest, SumsEachRankAndNumbersTheHostsRanksInRankOrder) {
  // Ranks 6 and 7 of an 8-rank communicator on 4 nodes: this host holds 2 of its ranks.
  Append("h-pid1.log", Record("0xabc", 7, 8, 4, 1, 100, 50) + Record("0xabc", 7, 8, 4, 2, 300, 10));
  Append("h-pid2.log", Record("0xabc", 6, 8, 4, 1, 200, 25));
  auto c = Make();
  CollectUntil(*c, 3);
  EXPECT_EQ(emitter_.Get(
                "fabric_nccl_collectives_total{comm=\"0xabc\",local_rank=\"1\",rank=\"7\"}"),
            2u);
  EXPECT_EQ(emitter_.Get("fabric_nccl_collective_microseconds_total{comm=\"0xabc\",local_rank="
                         "\"1\",rank=\"7\"}"),
            400u);
  // Bus bytes: busbw x exec time, 50e9 x 100e-6 + 10e9 x 300e-6 = 8e6.
  EXPECT_EQ(emitter_.Get("fabric_nccl_collective_bus_bytes_total{comm=\"0xabc\",local_rank="
                         "\"1\",rank=\"7\"}"),
            8'000'000u);
  EXPECT_EQ(emitter_.Get(
                "fabric_nccl_collectives_total{comm=\"0xabc\",local_rank=\"0\",rank=\"6\"}"),
            1u);
  EXPECT_EQ(emitter_.GetGauge("railwatch_nccl_inspector_communicators"), 1.0);

  // More records: the counters go on from where they were.
  Append("h-pid2.log", Record("0xabc", 6, 8, 4, 2, 50, 25));
  CollectUntil(*c, 4);
  EXPECT_EQ(emitter_.Get("fabric_nccl_collective_microseconds_total{comm=\"0xabc\",local_rank="
                         "\"0\",rank=\"6\"}"),
            250u);
}

TEST_F(NcclInspectorCollectorTest, WaitsForTheHostsRanksBeforeNumberingThem) {
  // 8 ranks on 2 nodes: 4 here, only one seen so far. Its local rank is not known yet.
  Append("h-pid1.log", Record("0xdef", 5, 8, 2, 1, 100, 1));
  auto c = Make(/*settle_cycles=*/1000);
  CollectUntil(*c, 1);
  EXPECT_THAT(emitter_.names, ::testing::Not(::testing::Contains(
                                  ::testing::HasSubstr("fabric_nccl_collectives_total"))));
  for (int r : {4, 6, 7}) Append("h-pid1.log", Record("0xdef", r, 8, 2, 1, 100, 1));
  CollectUntil(*c, 4);
  EXPECT_EQ(emitter_.Get(
                "fabric_nccl_collectives_total{comm=\"0xdef\",local_rank=\"1\",rank=\"5\"}"),
            1u);
  EXPECT_EQ(emitter_.Get(
                "fabric_nccl_collectives_total{comm=\"0xdef\",local_rank=\"3\",rank=\"7\"}"),
            1u);
}

TEST_F(NcclInspectorCollectorTest, WithoutTheShapeNumbersAfterSettleCycles) {
  Append("h-pid1.log", Record("0x1", 3, 0, 0, 1, 100, 1));
  auto c = Make(/*settle_cycles=*/2);
  CollectUntil(*c, 1);
  ASSERT_TRUE(c->Collect(emitter_).ok());
  ASSERT_TRUE(c->Collect(emitter_).ok());
  EXPECT_EQ(emitter_.Get("fabric_nccl_collectives_total{comm=\"0x1\",local_rank=\"0\",rank=\"3\"}"),
            1u);
}

TEST_F(NcclInspectorCollectorTest, SkipsPointToPointAndCountsWhatIsNotARecord) {
  Append("h-pid1.log", Record("0x2", 0, 1, 1, 1, 100, 1, "p2p_perf"));
  Append("h-pid1.log", "not json at all\n");
  Append("h-pid1.log", "{\"header\":{\"id\":\"0x2\",\"rank\":0,\"n_ranks\":1,\"nnodes\":1}, \"coll_perf\": {\n");
  Append("h-pid1.log", "{\"metadata\":{\"inspector_output_format_version\":\"v4.4\"},\"dump_stats\":{}}\n");
  Append("h-pid1.log", Record("0x2", 0, 1, 1, 2, 100, 1));
  auto c = Make();
  CollectUntil(*c, 1);
  EXPECT_EQ(emitter_.Get("railwatch_nccl_inspector_problems_total"), 2u);
  const auto totals = c->Totals();
  ASSERT_EQ(totals.count("0x2"), 1u);
  EXPECT_EQ(totals.at("0x2").at(0).collectives, 1u);  // the p2p record is not counted
}

// A dump directory on shared storage: other hosts' records are skipped (and counted), the
// short names compared.
TEST_F(NcclInspectorCollectorTest, KeepsOnlyThisHostsRecords) {
  Append("a-pid1.log", Record("0x5", 0, 2, 2, 1, 100, 1, "coll_perf", "node-a.cluster.local"));
  Append("b-pid1.log", Record("0x5", 1, 2, 2, 1, 100, 1, "coll_perf", "node-b"));
  auto c = Make(3, "node-a");
  CollectUntil(*c, 1);
  for (int i = 0; i < 100 && emitter_.Get("railwatch_nccl_inspector_other_host_records_total")
                                     .value_or(0) < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(c->Collect(emitter_).ok());
  }
  EXPECT_EQ(emitter_.Get("railwatch_nccl_inspector_other_host_records_total"), 1u);
  const auto totals = c->Totals();
  ASSERT_EQ(totals.at("0x5").size(), 1u);
  EXPECT_EQ(totals.at("0x5").count(0), 1u);
}

// A communicator silent for forget_after goes idle (not sent, not counted), and when it writes
// again its counters go on from where they were: never backwards.
TEST_F(NcclInspectorCollectorTest, AnIdleCommunicatorKeepsItsTotals) {
  Append("h-pid1.log", Record("0x6", 0, 1, 1, 1, 100, 1));
  auto c = Make();
  CollectUntil(*c, 1);
  const std::string key = "fabric_nccl_collectives_total{comm=\"0x6\",local_rank=\"0\",rank=\"0\"}";
  EXPECT_EQ(emitter_.Get(key), 1u);
  clock_.Advance(absl::Minutes(11));
  ASSERT_TRUE(c->Collect(emitter_).ok());
  EXPECT_EQ(emitter_.GetGauge("railwatch_nccl_inspector_communicators"), 0.0);
  Append("h-pid1.log", Record("0x6", 0, 1, 1, 2, 100, 1));
  CollectUntil(*c, 2);
  EXPECT_EQ(emitter_.Get(key), 2u);
  EXPECT_EQ(emitter_.GetGauge("railwatch_nccl_inspector_communicators"), 1.0);
}

TEST_F(NcclInspectorCollectorTest, ReadsARealJsonlRecord) {
  // A JSONL record as a non-upstream build wrote it (float exec time, other key order).
  std::ifstream in(std::string(RAILWATCH_FIXTURES_DIR) +
                   "/logs/inspector_07_v4.0_datadog_socket_jsonl_line_nonupstream_serializer.jsonl");
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  Append("worker-0-pid48.log", line + "\n");
  auto c = Make(/*settle_cycles=*/1);
  CollectUntil(*c, 1);
  const auto totals = c->Totals();
  ASSERT_EQ(totals.count("0xad56c683b0c4ef"), 1u);
  const NcclInspectorCollector::RankTotals& t = totals.at("0xad56c683b0c4ef").at(1);
  EXPECT_EQ(t.collectives, 1u);
  EXPECT_DOUBLE_EQ(t.microseconds, 5663.0);
  EXPECT_NEAR(t.bus_bytes, 0.555850e9 * 5663e-6, 1);
  // 3 ranks on 3 nodes: one per host, so the rank is local rank 0 at once.
  EXPECT_EQ(t.local_rank, 0);
}

}  // namespace railwatch::nccl_inspector_collector_test
