// The real-world PyTorch, NCCL RAS and nccl-tests samples (tests/fixtures/logs, copied
// verbatim from shared/realworld): every field CATALOGUE.md lists for each one.

#include <string>

#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/logs/log_test_util.h"

namespace railwatch::logs::testing {
namespace other_samples_test {

int64_t Utc(int y, int mo, int d, int h, int mi, int s, int64_t ns) {
  return absl::ToUnixNanos(
             absl::FromCivil(absl::CivilSecond(y, mo, d, h, mi, s), absl::UTCTimeZone())) +
         ns;
}

TEST(PytorchSamples, WatchdogTimeoutWithPidPrefixAndGlogTime) {
  FakeClock clock(absl::FromCivil(absl::CivilSecond(2025, 6, 1, 0, 0, 0), absl::UTCTimeZone()));
  Parsed p = ParseFixture("pytorch_01_watchdog_timeout_allreduce_torch2.6_pidprefix.log", clock);
  EXPECT_EQ(p.stats.recognized, 4u);
  auto timeouts = p.OfKind("pytorch.watchdog_timeout");
  ASSERT_EQ(timeouts.size(), 2u);
  const LogEvent& t0 = *timeouts[0];
  EXPECT_EQ(F(t0, "global_rank"), "0");
  EXPECT_EQ(F(t0, "pg_rank"), "0");
  EXPECT_EQ(F(t0, "seq_num"), "1580");
  EXPECT_EQ(F(t0, "op_type"), "ALLREDUCE");
  EXPECT_EQ(F(t0, "numel_in"), "466119168");
  EXPECT_EQ(F(t0, "numel_out"), "466119168");
  EXPECT_EQ(F(t0, "timeout_ms"), "600000");
  EXPECT_EQ(F(t0, "elapsed_ms"), "600060");
  EXPECT_EQ(F(t0, "severity"), "E");
  EXPECT_EQ(F(t0, "location"), "ProcessGroupNCCL.cpp:607");
  EXPECT_EQ(F(t0, "launcher_tag"), "80746");
  // "[E321 02:07:08.408271257": March 21st of the clock's year, UTC.
  EXPECT_EQ(t0.time_unix_nano, Utc(2025, 3, 21, 2, 7, 8, 408271257));
  EXPECT_EQ(F(*timeouts[1], "global_rank"), "4");
  EXPECT_EQ(F(*timeouts[1], "elapsed_ms"), "600067");

  auto exceptions = p.OfKind("pytorch.watchdog_exception");
  ASSERT_EQ(exceptions.size(), 2u);
  EXPECT_EQ(F(*exceptions[0], "pg_id"), "1");
  EXPECT_EQ(F(*exceptions[0], "pg_rank"), "0");
  EXPECT_EQ(F(*exceptions[0], "seq_num"), "1580");
  EXPECT_EQ(F(*exceptions[0], "last_enqueued"), "1582");
  EXPECT_EQ(F(*exceptions[0], "last_completed"), "1579");
  EXPECT_EQ(F(*exceptions[1], "global_rank"), "3");
}

TEST(PytorchSamples, GlogTimeWithoutYearNeverLandsInTheFuture) {
  // Read in January, a March line belongs to the previous year.
  FakeClock clock(absl::FromCivil(absl::CivilSecond(2026, 1, 10, 0, 0, 0), absl::UTCTimeZone()));
  Parsed p = ParseFixture("pytorch_01_watchdog_timeout_allreduce_torch2.6_pidprefix.log", clock);
  ASSERT_FALSE(p.events.empty());
  EXPECT_EQ(p.events[0].time_unix_nano, Utc(2025, 3, 21, 2, 7, 8, 408271257));
}

TEST(PytorchSamples, ProcessGroupIdAndGuidTags) {
  Parsed p = ParseFixture("pytorch_03_watchdog_timeout_allreduce_pg_id_pg_guid_torch2.6.log");
  auto timeouts = p.OfKind("pytorch.watchdog_timeout");
  ASSERT_EQ(timeouts.size(), 2u);
  EXPECT_EQ(F(*timeouts[0], "global_rank"), "1");
  EXPECT_EQ(F(*timeouts[0], "seq_num"), "808");
  EXPECT_EQ(F(*timeouts[0], "numel_in"), "9801523");
  EXPECT_EQ(F(*timeouts[0], "elapsed_ms"), "600020");
  EXPECT_EQ(F(*timeouts[0], "location"), "ProcessGroupNCCL.cpp:616");
  EXPECT_EQ(F(*timeouts[1], "elapsed_ms"), "600030");
  auto exceptions = p.OfKind("pytorch.watchdog_exception");
  ASSERT_EQ(exceptions.size(), 2u);
  EXPECT_EQ(F(*exceptions[0], "pg_id"), "0");
  EXPECT_EQ(F(*exceptions[0], "pg_guid"), "0");
  EXPECT_EQ(F(*exceptions[0], "pg_name"), "default_pg");
  EXPECT_EQ(F(*exceptions[0], "pg_rank"), "1");
  EXPECT_EQ(F(*exceptions[0], "last_enqueued"), "811");
  EXPECT_EQ(F(*exceptions[0], "last_completed"), "807");
  EXPECT_EQ(F(*exceptions[0], "location"), "ProcessGroupNCCL.cpp:1785");
}

TEST(PytorchSamples, LegacyFormatWithoutNumelOrTime) {
  Parsed p = ParseFixture("pytorch_04_watchdog_timeout_legacy_E_format_ofa.log");
  auto timeouts = p.OfKind("pytorch.watchdog_timeout");
  ASSERT_EQ(timeouts.size(), 5u);
  std::vector<std::string> ranks;
  for (const LogEvent* e : timeouts) {
    ranks.push_back(F(*e, "pg_rank"));
    EXPECT_EQ(F(*e, "seq_num"), "469508");
    EXPECT_EQ(F(*e, "op_type"), "ALLREDUCE");
    EXPECT_EQ(F(*e, "timeout_ms"), "1800000");
    EXPECT_EQ(F(*e, "numel_in"), "<absent>");
    EXPECT_EQ(F(*e, "global_rank"), "<absent>");
    EXPECT_EQ(F(*e, "location"), "ProcessGroupNCCL.cpp:737");
    EXPECT_EQ(e->time_unix_nano, 0);
  }
  EXPECT_THAT(ranks, ::testing::ElementsAre("1", "3", "2", "6", "7"));
  EXPECT_EQ(F(*timeouts[0], "elapsed_ms"), "1802212");
  EXPECT_EQ(F(*timeouts[4], "elapsed_ms"), "1802220");
}

TEST(PytorchSamples, DistBackendErrorTerminationBlock) {
  Parsed p = ParseFixture("pytorch_06_distbackenderror_pg_rank_reduce_scatter_megatron.log");
  EXPECT_EQ(p.stats.unknown, 0u);
  const LogEvent& timeout = p.One("pytorch.watchdog_timeout");
  EXPECT_EQ(F(timeout, "pg_id"), "1");
  EXPECT_EQ(F(timeout, "pg_rank"), "6");
  EXPECT_EQ(F(timeout, "seq_num"), "199");
  EXPECT_EQ(F(timeout, "op_type"), "_REDUCE_SCATTER_BASE");
  EXPECT_EQ(F(timeout, "numel_in"), "7098994688");
  EXPECT_EQ(F(timeout, "numel_out"), "443687168");
  EXPECT_EQ(F(timeout, "elapsed_ms"), "882722");
  const LogEvent& error = p.One("pytorch.process_group_error");
  EXPECT_EQ(error.line, 1);
  EXPECT_EQ(F(error, "exception_type"), "c10::DistBackendError");
  EXPECT_EQ(F(error, "pg_id"), "1");
  EXPECT_EQ(F(error, "pg_rank"), "6");
  EXPECT_EQ(F(error, "raised_from"), "checkTimeout");
  EXPECT_EQ(F(error, "raised_at"),
            "/opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:567");
  EXPECT_EQ(F(error, "frames"), "4");
  EXPECT_THAT(F(error, "message"),
              ::testing::StartsWith("[PG 1 Rank 6] Process group watchdog thread terminated"));
}

TEST(RasSamples, MismatchedAllGatherCountsOnFourNodes) {
  Parsed p = ParseFixture("nccl_ras_01_v2.26.2_mismatch_allgather_4nodes.txt");
  EXPECT_EQ(p.stats.unknown, 0u);
  EXPECT_EQ(p.stats.malformed, 0u);
  const LogEvent& r = p.One("nccl_ras.report");
  EXPECT_EQ(r.line, 1);
  EXPECT_EQ(F(r, "nccl_version"), "2.26.2");
  EXPECT_EQ(F(r, "cuda_version"), "12.6");
  EXPECT_EQ(F(r, "cuda_runtime"), "12060");
  EXPECT_EQ(F(r, "cuda_driver"), "12060");
  EXPECT_EQ(F(r, "nodes"), "4");
  EXPECT_EQ(F(r, "processes_per_node"), "8");
  EXPECT_EQ(F(r, "gpus_per_process"), "1");
  EXPECT_EQ(F(r, "processes"), "32");
  EXPECT_EQ(F(r, "gpus"), "32");
  EXPECT_EQ(F(r, "collection_s"), "0.00");
  EXPECT_EQ(F(r, "groups"), "1");
  EXPECT_EQ(F(r, "group.0.comms"), "1");
  EXPECT_EQ(F(r, "group.0.nodes_per_comm"), "4");
  EXPECT_EQ(F(r, "group.0.ranks_per_node"), "8");
  EXPECT_EQ(F(r, "group.0.ranks_per_comm"), "32");
  EXPECT_EQ(F(r, "group.0.ranks_in_group"), "32");
  EXPECT_EQ(F(r, "group.0.status"), "RUNNING");
  EXPECT_EQ(F(r, "group.0.errors"), "MISMATCH");
  EXPECT_EQ(F(r, "status"), "RUNNING");
  EXPECT_EQ(F(r, "errors"), "MISMATCH");
  EXPECT_EQ(F(r, "outlier_nodes"), "10.137.190.124");
  EXPECT_EQ(F(r, "outlier_ranks"), "12,13");
  EXPECT_EQ(F(r, "outlier_pids"), "323032,323033");

  const LogEvent& issue = p.One("nccl_ras.comm_issue");
  EXPECT_EQ(F(issue, "group"), "0");
  EXPECT_EQ(F(issue, "comm"), "0");
  EXPECT_EQ(F(issue, "comm_hash"), "fa93daea854b060b");
  EXPECT_EQ(F(issue, "issue"), "MISMATCH");
  EXPECT_EQ(F(issue, "op"), "AllGather");
  EXPECT_EQ(F(issue, "op_counts"), "640:30,641:2");
  EXPECT_EQ(F(issue, "ranks"), "12,13");
  EXPECT_EQ(F(issue, "gpus"), "4,5");
  EXPECT_EQ(F(issue, "pids"), "323032,323033");
  EXPECT_EQ(F(issue, "nodes"), "10.137.190.124");
}

TEST(NcclTestsSamples, NewestLayoutWithRedopRootAndWrongCount) {
  Parsed p = ParseFixture("nccltests_01_allreduce_2node_h100_16ranks_table.txt");
  EXPECT_EQ(p.stats.unknown, 0u);
  auto rows = p.OfKind("nccltests.result");
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(F(*rows[0], "size_bytes"), "134217728");
  EXPECT_EQ(F(*rows[0], "root"), "-1");
  EXPECT_EQ(F(*rows[0], "layout"), "redop_root");
  EXPECT_EQ(F(*rows[0], "oop_busbw_gbps"), "340.67");
  EXPECT_EQ(F(*rows[0], "oop_wrong"), "0");
  EXPECT_EQ(F(*rows[4], "size_bytes"), "2147483648");
  EXPECT_EQ(F(*rows[4], "oop_time_us"), "9063.6");
  EXPECT_EQ(F(*rows[4], "ip_busbw_gbps"), "442.99");
  const LogEvent& summary = p.One("nccltests.summary");
  EXPECT_EQ(F(summary, "avg_busbw_gbps"), "406.034");
  EXPECT_EQ(F(summary, "rows"), "5");
  EXPECT_EQ(F(summary, "max_busbw_gbps"), "444.25");
  EXPECT_EQ(F(summary, "wrong_total"), "0");
  EXPECT_EQ(F(summary, "out_of_bounds_status"), "OK");
  auto destroys = p.OfKind("nccl.comm_destroy");
  ASSERT_EQ(destroys.size(), 2u);
  EXPECT_EQ(F(*destroys[1], "host"), "h100-test-rg-2");
  EXPECT_EQ(F(*destroys[1], "rank"), "12");
  EXPECT_EQ(F(*destroys[1], "bus_id"), "300010");
  EXPECT_EQ(F(*destroys[1], "action"), "Destroy");
}

TEST(NcclTestsSamples, OldestLayoutWithoutRedopThenBroadcastHeader) {
  Parsed p =
      ParseFixture("nccltests_04_v2.6.4_era_no_redop_column_allreduce_and_broadcast_header.txt");
  EXPECT_EQ(p.stats.malformed, 0u);
  auto rows = p.OfKind("nccltests.result");
  ASSERT_EQ(rows.size(), 12u);
  EXPECT_EQ(F(*rows[0], "layout"), "no_redop");
  EXPECT_EQ(F(*rows[0], "redop"), "<absent>");
  EXPECT_EQ(F(*rows[0], "size_bytes"), "65536");
  EXPECT_EQ(F(*rows[0], "oop_error"), "0e+00");
  EXPECT_EQ(F(*rows[11], "oop_time_us"), "3298.6");
  const LogEvent& summary = p.One("nccltests.summary");
  EXPECT_EQ(F(summary, "avg_busbw_gbps"), "6.6972");
  EXPECT_EQ(F(summary, "max_busbw_gbps"), "21.40");
  const LogEvent& header = p.One("nccltests.header");
  EXPECT_EQ(header.line, 17);
  EXPECT_EQ(F(header, "test"), "broadcast_perf");
  EXPECT_EQ(F(header, "ngpus"), "2");
  EXPECT_EQ(F(header, "validation"), "<absent>");
}

TEST(NcclTestsSamples, SingleNodeRunWithHeaderAndErrorColumn) {
  Parsed p = ParseFixture("nccltests_05_single_node_a10g_header_error_column.txt");
  EXPECT_EQ(p.stats.malformed, 0u);
  const LogEvent& header = p.One("nccltests.header");
  EXPECT_EQ(F(header, "nthread"), "1");
  EXPECT_EQ(F(header, "ngpus"), "1");
  EXPECT_EQ(F(header, "min_bytes"), "8");
  EXPECT_EQ(F(header, "max_bytes"), "134217728");
  EXPECT_EQ(F(header, "step"), "2");
  EXPECT_EQ(F(header, "step_kind"), "factor");
  EXPECT_EQ(F(header, "warmup_iters"), "5");
  EXPECT_EQ(F(header, "iters"), "20");
  EXPECT_EQ(F(header, "validation"), "1");
  EXPECT_EQ(F(header, "test"), "all_reduce_perf");
  const LogEvent& device = p.One("nccltests.device");
  EXPECT_EQ(F(device, "rank"), "0");
  EXPECT_EQ(F(device, "pid"), "1428");
  EXPECT_EQ(F(device, "host"), "ip-10-0-139-244");
  EXPECT_EQ(F(device, "device"), "0");
  EXPECT_EQ(F(device, "bus_id"), "0x00");
  EXPECT_EQ(F(device, "gpu"), "NVIDIA A10G");
  auto rows = p.OfKind("nccltests.result");
  ASSERT_EQ(rows.size(), 25u);
  EXPECT_EQ(F(*rows[24], "ip_algbw_gbps"), "232613.05");
  EXPECT_EQ(F(*rows[24], "layout"), "redop");
  const LogEvent& summary = p.One("nccltests.summary");
  EXPECT_EQ(F(summary, "avg_busbw_gbps"), "0");
  EXPECT_EQ(F(summary, "complete"), "1");
}

}  // namespace
}  // namespace railwatch::logs::testing
