// `railwatch triage` on NCCL Inspector output (triage/inspector.h): the real samples are read
// whole and understood, records of one file per rank are analysed together, and a rank far
// slower than its peers is a straggler finding, in text and in --json.

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "cli/commands.h"
#include "cli/triage.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/ttar.h"
#include "triage/findings.h"
#include "triage/inputs.h"
#include "triage/inspector.h"

namespace railwatch {
namespace triage_inspector_test {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

struct TriageRun {
  int rc = 0;
  std::string out, err;
  std::vector<std::string> lines;  // of `out`
};

TriageRun Triage(const std::vector<std::string>& files, bool json) {
  TriageRun r;
  std::istringstream in;
  std::ostringstream out, err;
  r.rc = RunTriage(files, json, in, out, err);
  r.out = out.str();
  r.err = err.str();
  r.lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  return r;
}

std::vector<std::string> Matching(const std::vector<std::string>& lines, const std::string& part) {
  std::vector<std::string> out;
  for (const std::string& l : lines) {
    if (absl::StrContains(l, part)) out.push_back(l);
  }
  return out;
}

// One compact v4.0 record, as NCCL 2.28+ writes a line of its JSONL file.
std::string Record(int rank, const std::string& host, int seq, double busbw_gbs, double exec_us) {
  return absl::StrFormat(
      R"({"header":{"id":"0x7f8c496ae9f661","rank":%d,"n_ranks":4,"nnodes":4},)"
      R"("metadata":{"inspector_output_format_version":"v4.0","git_rev":"",)"
      R"("rec_mechanism":"nccl_profiler_interface","dump_timestamp_us":%d,)"
      R"("hostname":"%s","pid":%d},"coll_perf":{"coll":"AllReduce","coll_sn":%d,)"
      R"("coll_msg_size_bytes":17179869184,"coll_exec_time_us":%.0f,)"
      R"("coll_timing_source":"kernel_gpu","coll_algobw_gbs":277.210914,)"
      R"("coll_busbw_gbs":%.6f}})",
      rank, 1748030377748202 + seq * 100000, host, 1639450 + rank, seq, exec_us, busbw_gbs);
}

const char* const kHosts[] = {"host-a", "host-b", "host-c", "host-d"};

// One JSONL file per rank of one communicator, 5 AllReduce records each; rank `slow` (none
// when -1) at half the others' bus bandwidth and twice their time. `broken` replaces that
// 1-based line of rank 1's file.
std::vector<std::string> WriteRanks(const testing::TempDir& dir, int slow, int broken_line = 0) {
  std::vector<std::string> files;
  for (int rank = 0; rank < 4; ++rank) {
    files.push_back(absl::StrCat(dir.path(), "/inspector_rank", rank, ".jsonl"));
    std::ofstream f(files.back());
    for (int seq = 1; seq <= 5; ++seq) {
      if (rank == 1 && seq == broken_line) {
        f << R"({"header":{"id":"0x7f8c496ae9f661","rank":1,"n_ranks":4},"coll_perf":{"coll":)"
          << "\n";
        continue;
      }
      const bool half = rank == slow;
      f << Record(rank, kHosts[rank], seq, half ? 242.5 : 485.0 + seq, half ? 124000 : 62000)
        << "\n";
    }
  }
  return files;
}

std::string Fixture(const std::string& name) {
  return railwatch::testing::FixturePath("logs/" + name);
}

TEST(TriageInspector, RealSamplesAreReadWholeAndUnderstood) {
  for (const char* name :
       {"inspector_01_v4.0_nccl2.28.1ea_json_allreduce_h100_rec_profiler_plugin_no_timing_source."
        "json",
        "inspector_02_v4.0_nccl2.28.1ea_json_verbose_reducescatter_event_trace_h100.json",
        "inspector_03_v4.0_nccl2.28.1ea_json_reducescatter_rank31_of_32_4nodes_h100.json",
        "inspector_05_v5.1_nccl2.30_readme_prom_coll_and_p2p_nvl72004.prom",
        "inspector_06_v5.1_rccl_fork_doc_prom_help_type_cluster_label.prom",
        "inspector_07_v4.0_datadog_socket_jsonl_line_nonupstream_serializer.jsonl"}) {
    SCOPED_TRACE(name);
    TriageRun human = Triage({Fixture(name)}, /*json=*/false);
    EXPECT_EQ(human.rc, kExitOk);
    EXPECT_EQ(human.err, "");
    EXPECT_THAT(human.out, HasSubstr(" 0 not understood (skipped), 0 malformed."));
    EXPECT_THAT(human.out, HasSubstr("No failure found."));
    EXPECT_THAT(human.out, Not(HasSubstr("Nothing recognisable")));
    EXPECT_THAT(human.out, HasSubstr("  NCCL Inspector: "));

    TriageRun json = Triage({Fixture(name)}, /*json=*/true);
    ASSERT_FALSE(json.lines.empty());
    EXPECT_THAT(json.lines[0], HasSubstr(R"({"kind":"nccl_inspector.summary")"));
    EXPECT_THAT(json.lines.back(), HasSubstr(R"("skipped":0,"malformed":0,)"));
    EXPECT_THAT(json.lines.back(), HasSubstr(R"("context":[)"));
    EXPECT_THAT(json.lines.back(), HasSubstr("NCCL Inspector: "));
  }
  // One record per rank is one member each: nothing to compare with, and triage says so.
  TriageRun one = Triage({Fixture("inspector_07_v4.0_datadog_socket_jsonl_line_nonupstream_"
                                  "serializer.jsonl")},
                         /*json=*/true);
  EXPECT_THAT(one.lines.back(),
              HasSubstr("NCCL Inspector: 1 record of 1 member (host, rank, GPU) in 1 communicator "
                        "(0xad56c683b0c4ef), 1 operation; mean bus bandwidth AllReduce 0.556 GB/s; "
                        "too few members to compare"));
  // The textfile's two gauges of one key are one record; a p2p operation is its own.
  TriageRun prom =
      Triage({Fixture("inspector_05_v5.1_nccl2.30_readme_prom_coll_and_p2p_nvl72004.prom")},
             /*json=*/false);
  EXPECT_THAT(prom.out, HasSubstr("Read 4 lines: 4 parsed into 2 events"));
  EXPECT_THAT(prom.out, HasSubstr("mean bus bandwidth AllReduce 678 GB/s, Send 465 GB/s"));
}

TEST(TriageInspector, RankAtHalfItsPeersBandwidthIsTheOneStraggler) {
  testing::TempDir dir;
  const std::vector<std::string> files = WriteRanks(dir, /*slow=*/2);
  TriageRun r = Triage(files, /*json=*/false);
  EXPECT_EQ(r.rc, kExitOk);
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("Read 20 lines: 20 parsed into 4 events"));
  const std::vector<std::string> warnings = Matching(r.lines, "WARN  ");
  ASSERT_EQ(warnings.size(), 1u) << r.out;
  // The peers' median is rank 0, 1, 3's middle mean (485 + 3).
  EXPECT_EQ(warnings[0],
            "WARN  NCCL Inspector: rank 2 on host-c is a straggler in AllReduce of communicator "
            "0x7f8c496ae9f661: 242 GB/s, 50% of its 3 peers' median 488 GB/s");
  EXPECT_THAT(r.out, HasSubstr(absl::StrCat("first seen    ", files[2], ":1")));
  EXPECT_THAT(r.out, HasSubstr("member        host host-c, rank 2, pid 1639452"));
  EXPECT_THAT(r.out, HasSubstr("exec time     mean 124.0 ms; peers' median 62.0 ms"));
  EXPECT_THAT(r.out, HasSubstr("records       5, sequence numbers 1 to 5; compared with 3 peers"));
  EXPECT_THAT(r.out, HasSubstr("ssh host-c nvidia-smi -q -d PERFORMANCE,CLOCK"));
  EXPECT_THAT(r.out, HasSubstr("ssh host-c rdma statistic show link"));
  EXPECT_THAT(r.out, HasSubstr("railwatch diagnoses --host=host-c --state=all"));
  EXPECT_THAT(r.out, HasSubstr("mean bus bandwidth AllReduce 427 GB/s; 1 straggler\n"));

  // The same through the library: one finding, over the four files' records together.
  std::istringstream in;
  std::ostringstream err;
  TriageInputs read = ReadTriageInputs(files, in, err);
  EXPECT_EQ(read.inspector.size(), 20u);
  ASSERT_EQ(read.inputs.size(), 4u);
  EXPECT_EQ(read.inputs[2].inspector_records, 5u);
  TriageReport report = AnalyzeEvents(read.events);
  ASSERT_EQ(report.findings.size(), 1u);
  EXPECT_EQ(report.findings[0].level, TriageFinding::Level::kWarning);
  EXPECT_EQ(report.findings[0].kind, "nccl_inspector.summary");
  EXPECT_THAT(report.findings[0].hosts, Contains("host-c"));
}

TEST(TriageInspector, StragglerFindingInJson) {
  testing::TempDir dir;
  TriageRun r = Triage(WriteRanks(dir, /*slow=*/2), /*json=*/true);
  EXPECT_EQ(r.err, "");
  ASSERT_EQ(r.lines.size(), 6u);  // 4 member events, the finding, the summary
  EXPECT_EQ(Matching(r.lines, R"("kind":"nccl_inspector.summary")").size(), 4u);
  EXPECT_THAT(r.lines[0], HasSubstr(R"("host":"host-a","rank":0,"pid":1639450,"nranks":4,)"));
  EXPECT_THAT(r.lines[0], HasSubstr(R"("op":"AllReduce","p2p":"false","count":5,)"));
  const std::string& f = r.lines[4];
  EXPECT_THAT(f, HasSubstr(R"({"kind":"triage.finding","level":"WARN","title":"NCCL Inspector: )"
                           R"(rank 2 on host-c is a straggler in AllReduce of communicator )"
                           R"(0x7f8c496ae9f661: 242 GB/s, 50% of its 3 peers' median 488 GB/s",)"
                           R"("event_kind":"nccl_inspector.summary",)"));
  EXPECT_THAT(f, HasSubstr(R"("communicator":"0x7f8c496ae9f661, 4 ranks on 4 nodes")"));
  EXPECT_THAT(f, HasSubstr(R"("operation":"AllReduce")"));
  EXPECT_THAT(f, HasSubstr(R"("member":"host host-c, rank 2, pid 1639452")"));
  EXPECT_THAT(f, HasSubstr(R"("bus bandwidth":"mean 242 GB/s; peers' median 488 GB/s")"));
  EXPECT_THAT(f, HasSubstr(R"("records":"5, sequence numbers 1 to 5; compared with 3 peers")"));
  EXPECT_THAT(f, HasSubstr(R"("meaning":"A collective completes only when every member)"));
  EXPECT_THAT(f, HasSubstr(R"("next":["ssh host-c nvidia-smi -q -d PERFORMANCE,CLOCK)"));
  EXPECT_THAT(r.lines[5], HasSubstr(R"("kind":"triage.summary","verdict":"no_failure")"));
  EXPECT_THAT(r.lines[5], HasSubstr(R"("warnings":1,)"));
}

TEST(TriageInspector, EqualRanksHaveNoStragglerButAContextLine) {
  testing::TempDir dir;
  TriageRun r = Triage(WriteRanks(dir, /*slow=*/-1), /*json=*/false);
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(Matching(r.lines, "WARN  "), IsEmpty());
  EXPECT_THAT(r.out, Not(HasSubstr("is a straggler")));
  EXPECT_THAT(r.out, HasSubstr("No failure found."));
  EXPECT_THAT(r.out, HasSubstr("  NCCL Inspector: 20 records of 4 members (host, rank, GPU)"));
  TriageRun json = Triage(WriteRanks(dir, /*slow=*/-1), /*json=*/true);
  EXPECT_THAT(json.lines.back(),
              HasSubstr("NCCL Inspector: 20 records of 4 members (host, rank, GPU) in 1 "
                        "communicator (0x7f8c496ae9f661), 1 operation; mean bus bandwidth "
                        "AllReduce 488 GB/s; no straggler (none below 80% of its peers' median "
                        "bus bandwidth)"));
  EXPECT_THAT(json.lines.back(), HasSubstr(R"("warnings":0,)"));
}

TEST(TriageInspector, BrokenLineIsNamedAndTheOtherRecordsStillCount) {
  testing::TempDir dir;
  const std::vector<std::string> files = WriteRanks(dir, /*slow=*/2, /*broken_line=*/3);
  TriageRun r = Triage(files, /*json=*/false);
  EXPECT_EQ(r.rc, kExitOk);
  EXPECT_THAT(r.err, HasSubstr(absl::StrCat("railwatch triage: ", files[1], ":3:")));
  EXPECT_EQ(Matching(absl::StrSplit(r.err, '\n', absl::SkipEmpty()), "railwatch triage: ").size(),
            1u)
      << r.err;
  EXPECT_THAT(r.out, HasSubstr("Read 20 lines: 19 parsed into 4 events"));
  EXPECT_THAT(r.out, HasSubstr("0 not understood (skipped), 1 malformed."));
  EXPECT_THAT(Matching(r.lines, "WARN  NCCL Inspector: rank 2 on host-c is a straggler"),
              ::testing::SizeIs(1));
  EXPECT_THAT(r.out, HasSubstr("NCCL Inspector: 19 records of 4 members"));
}

TEST(TriageInspector, GpusOfOneTextfileAreComparedToo) {
  testing::TempDir dir;
  const std::string file = dir.path() + "/nccl_inspector_metrics.prom";
  {
    std::ofstream f(file);
    for (int gpu = 0; gpu < 4; ++gpu) {
      const std::string labels =
          absl::StrFormat(R"({version="v5.1",slurm_job_id="42",node="nvl72004-T01",gpu="GPU%d",)"
                          R"(comm_name="DP Group 0",n_nodes="1",nranks="4",collective="AllReduce",)"
                          R"(message_size="4-5GB",algo_proto="RING_LL"})",
                          gpu);
      f << "nccl_bus_bandwidth_gbs" << labels << (gpu == 3 ? " 300" : " 678.263") << "\n"
        << "nccl_collective_exec_time_microseconds" << labels << " 9498.47\n";
    }
  }
  TriageRun r = Triage({file}, /*json=*/false);
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(Matching(r.lines, "WARN  "),
              ::testing::ElementsAre(
                  "WARN  NCCL Inspector: GPU3 on nvl72004-T01 is a straggler in AllReduce of "
                  "communicator \"DP Group 0\": 300 GB/s, 44% of its 3 peers' median 678 GB/s"));
}

// More stragglers than get a finding each: the worst ones do, the rest share one.
TEST(TriageInspector, ManyStragglersAreBounded) {
  std::vector<logs::InspectorRecord> records;
  for (int rank = 0; rank < 16; ++rank) {
    logs::InspectorRecord r;
    r.comm_id = "0xabc";
    r.rank = rank;
    r.host = absl::StrCat("node", rank);
    r.op = "AllGather";
    r.busbw_gbs = rank < 9 ? 400 : 100 + rank;  // ranks 9..15 slow, 15 the least
    r.exec_us = 1000;
    r.line = 1;
    records.push_back(r);
  }
  TriageReport report =
      AnalyzeEvents(InspectorSummaryEvents(records, {{"all.jsonl", records.size()}}));
  ASSERT_EQ(report.findings.size(), 7u);
  EXPECT_THAT(report.findings[0].title, HasSubstr("rank 9 on node9 is a straggler"));
  EXPECT_THAT(report.findings[5].title, HasSubstr("rank 14 on node14"));
  EXPECT_EQ(report.findings[6].title,
            "NCCL Inspector: 1 more straggler, less far behind than those above");
  EXPECT_THAT(report.findings[6].details,
              Contains(std::pair<std::string, std::string>(
                  "stragglers",
                  "rank 15 on node15 in AllGather of 0xabc: 115 GB/s, 29% of its "
                  "15 peers' median 400 GB/s")));
  EXPECT_THAT(report.context,
              Contains(AllOf(HasSubstr("16 records of 16 members"), HasSubstr("7 stragglers"))));
}

}  // namespace triage_inspector_test
}  // namespace railwatch
