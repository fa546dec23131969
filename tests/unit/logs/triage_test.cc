// `railwatch triage`: what it concludes from the real-world samples, and how it treats its
// inputs (stdin, missing files, garbage), run in-process with string streams.

#include "cli/triage.h"

#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "cli/commands.h"
#include "triage/findings.h"
#include "triage/playbook_replay.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/ttar.h"
#include "tests/unit/logs/log_test_util.h"

namespace railwatch {
namespace triage_test {

using logs::testing::ParseFixture;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Pair;

// What `railwatch triage` concludes: the log's findings with the shipped playbooks' diagnoses.
TriageReport Analyze(const std::string& fixture) {
  LoadResult rules = LoadTriagePlaybooks("");
  EXPECT_TRUE(rules.ok());
  return TriageEvents(ParseFixture(fixture).events, std::move(rules.playbooks));
}

std::string Detail(const TriageFinding& f, const std::string& label) {
  for (const auto& [l, text] : f.details) {
    if (l == label) return text;
  }
  return "<absent>";
}

std::string Fixture(const std::string& name) {
  return railwatch::testing::FixturePath("logs/" + name);
}

TEST(TriageAnalysis, RetryExceededNamesHostPeerGidsAndCommands) {
  TriageReport r = Analyze("nccl_03_ib_status12_vendor129_roce_gid_ipv6.log");
  ASSERT_EQ(r.findings.size(), 1u);
  const TriageFinding& f = r.findings[0];
  EXPECT_EQ(f.level, TriageFinding::Level::kFailure);
  EXPECT_EQ(f.count, 3);
  EXPECT_EQ(f.title,
            "IB completion error IBV_WC_RETRY_EXC_ERR (status 12), vendor err 0x81, 3 times");
  EXPECT_EQ(f.first_seen, "nccl_03_ib_status12_vendor129_roce_gid_ipv6.log:1");
  EXPECT_EQ(Detail(f, "where"), "kp-ddp-worker-0 pid 3468 cudaDev 4");
  EXPECT_EQ(Detail(f, "peers"), "10.216.210.236 (ports 54862, 49892)");
  EXPECT_THAT(Detail(f, "local GIDs"), HasSubstr("2 local ports"));
  EXPECT_THAT(Detail(f, "result"), HasSubstr("ncclRemoteError (6) via transport/net.cc:1302"));
  EXPECT_THAT(f.meaning, HasSubstr("retry counter exceeded"));
  EXPECT_THAT(f.meaning, HasSubstr("0x81"));
  EXPECT_THAT(f.next, Contains(HasSubstr("show_gids | grep -E "
                                         "'fd00:1148:9000:5000:4:200:3:ff22|"
                                         "fd00:1148:9000:5000:4:200:3:ff21'")));
  EXPECT_THAT(f.next, Contains(HasSubstr("rdma statistic show link")));
  EXPECT_THAT(f.next, Contains(HasSubstr("on the peer 10.216.210.236")));
}

TEST(TriageAnalysis, LocalProtectionPointsAtMemoryRegistrationOnBothHosts) {
  TriageReport r = Analyze("nccl_05_ib_error4_vendor81_linklocal_gid_h100.log");
  ASSERT_FALSE(r.findings.empty());
  const TriageFinding& f = r.findings[0];
  EXPECT_THAT(f.title, HasSubstr("IBV_WC_LOC_PROT_ERR (status 4), vendor err 0x51, 2 times"));
  EXPECT_EQ(Detail(f, "where"), "H100-2 pid 19989 cudaDev 1, H100-1 pid 9821 cudaDev 1");
  EXPECT_THAT(f.meaning, HasSubstr("memory-registration"));
  EXPECT_THAT(f.next, Contains(HasSubstr("nvidia_peermem")));
  EXPECT_THAT(f.next, Contains("on H100-2, H100-1:"));
}

TEST(TriageAnalysis, VerbsFailuresUseTheOnlyNicNcclChose) {
  TriageReport r = Analyze("nccl_10_v2.7.8_roce_init_ibv_create_cq_failed.log");
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings[0].title, "Verbs call ibv_create_cq failed");
  EXPECT_THAT(r.findings[0].meaning, HasSubstr("ulimit -l"));
  EXPECT_THAT(r.findings[0].next, Contains(HasSubstr("ibv_devinfo -v -d mlx5_1")));
  EXPECT_THAT(r.context, Contains("NCCL 2.7.8+cuda11.0"));

  TriageReport qp = Analyze("nccl_16_v2.5.6_mpi_rank_prefix_ibv_modify_qp_invalid_argument.log");
  ASSERT_FALSE(qp.findings.empty());
  EXPECT_EQ(qp.findings[0].title, "Verbs call ibv_modify_qp failed: Invalid argument (EINVAL)");
  EXPECT_THAT(Detail(qp.findings[0], "result"), HasSubstr("ncclSystemError (2)"));
  EXPECT_THAT(qp.findings[0].next, Contains(HasSubstr("NCCL_IB_GID_INDEX")));
}

TEST(TriageAnalysis, WatchdogTimeoutGroupsRanksWithTheirProgress) {
  TriageReport r = Analyze("pytorch_01_watchdog_timeout_allreduce_torch2.6_pidprefix.log");
  ASSERT_EQ(r.findings.size(), 1u);
  const TriageFinding& f = r.findings[0];
  EXPECT_EQ(f.title,
            "PyTorch watchdog timeout: ALLREDUCE SeqNum 1580 did not finish within "
            "600000 ms, reported by 2 ranks");
  EXPECT_EQ(Detail(f, "global ranks"), "0, 4");
  EXPECT_EQ(Detail(f, "waited"), "up to 600067 ms");
  EXPECT_EQ(Detail(f, "progress"), "last completed 1579, last enqueued 1582");
  // "What fabric diagnoses were there" is the nccl_failure runbook's command now.
  ASSERT_EQ(f.diagnoses.size(), 1u);
  EXPECT_EQ(f.diagnoses[0].playbook, "nccl_failure");
  EXPECT_THAT(f.diagnoses[0].commands, Contains(HasSubstr("railwatch diagnoses")));
}

TEST(TriageAnalysis, RasMismatchExplainsWhichSideIsWaiting) {
  TriageReport r = Analyze("nccl_ras_01_v2.26.2_mismatch_allgather_4nodes.txt");
  ASSERT_EQ(r.findings.size(), 1u);
  const TriageFinding& f = r.findings[0];
  EXPECT_THAT(f.title, HasSubstr("MISMATCH: AllGather operation counts differ"));
  EXPECT_EQ(Detail(f, "outliers"), "ranks 12,13 (GPUs 4,5, pids 323032,323033) on 10.137.190.124");
  EXPECT_THAT(f.meaning, HasSubstr("30 ranks have launched AllGather up to operation 640, 2 up to "
                                 "641"));
  EXPECT_THAT(f.meaning, HasSubstr("outliers are ahead"));
  EXPECT_THAT(f.next, Contains(HasSubstr("py-spy dump --pid 323032")));
}

TEST(TriageAnalysis, HealthySocketRunIsAWarningAndABandwidthNote) {
  TriageReport r = Analyze("nccl_01_v2.11.4_net_socket_2node_allreduce_perf.log");
  ASSERT_EQ(r.findings.size(), 2u);
  EXPECT_EQ(r.findings[0].level, TriageFinding::Level::kWarning);
  EXPECT_THAT(r.findings[0].title, HasSubstr("no RDMA device"));
  EXPECT_THAT(Detail(r.findings[0], "where"), HasSubstr("(rank 0/2)"));
  EXPECT_EQ(r.findings[1].level, TriageFinding::Level::kInfo);
  EXPECT_THAT(r.findings[1].title, HasSubstr("average bus bandwidth 0.300212 GB/s, peak 0.82"));
}

TEST(TriageCommand, ReadsStdinAndWritesOneJsonObjectPerLine) {
  std::istringstream in(
      "-worker-1:946:988 [0] transport/net_ib.cc:839 NCCL WARN NET/IB : Got completion with "
      "error 12, opcode 1, len 0, vendor err 129\n"
      "\x01\x02 not a log line\n");
  std::ostringstream out, err;
  EXPECT_EQ(RunTriage({"-"}, /*json=*/true, in, out, err), kExitOk);
  std::vector<std::string> lines = absl::StrSplit(out.str(), '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u);  // the event, its finding, the summary
  EXPECT_THAT(lines[0], HasSubstr(R"("kind":"nccl.ib_completion_error")"));
  EXPECT_THAT(lines[0], HasSubstr(R"("source":"-","line":1)"));
  EXPECT_THAT(lines[0], HasSubstr(R"("status":12,)"));  // a number
  EXPECT_THAT(lines[0], HasSubstr(R"("vendor_err":129,)"));
  EXPECT_THAT(lines[0], HasSubstr(R"("host":"-worker-1",)"));  // a string
  EXPECT_THAT(lines[1], HasSubstr(R"("kind":"triage.finding","level":"FAIL")"));
  EXPECT_THAT(lines[2], HasSubstr(R"("kind":"triage.summary","verdict":"failure")"));
  EXPECT_THAT(lines[2], HasSubstr(R"("lines":2,"recognized":1,)"));
  EXPECT_THAT(lines[2], HasSubstr(R"("skipped":1,)"));
  EXPECT_EQ(err.str(), "");
}

TEST(TriageCommand, MissingFileIsNamedAndTheOthersAreStillTriaged) {
  std::ostringstream out, err;
  int rc = RunCommand({"triage", "/nonexistent/nccl.log",
                       Fixture("pytorch_04_watchdog_timeout_legacy_E_format_ofa.log")},
                      CliOptions(), out, err);
  EXPECT_EQ(rc, kExitNotFound);
  EXPECT_THAT(err.str(), HasSubstr("railwatch triage: /nonexistent/nccl.log: no such file"));
  EXPECT_THAT(out.str(), HasSubstr("Could not read /nonexistent/nccl.log"));
  EXPECT_THAT(out.str(), HasSubstr("FAIL  PyTorch watchdog timeout: ALLREDUCE SeqNum 469508"));
}

TEST(TriageCommand, MalformedLinesAreReportedWithFileAndLine) {
  std::istringstream in(
      "h:1:2 [0] x.cc:1 NCCL WARN NET/IB : Got completion from peer "
      "1.2.3.4<5> with status=abc\n");
  std::ostringstream out, err;
  EXPECT_EQ(RunTriage({"-"}, /*json=*/false, in, out, err), kExitOk);
  EXPECT_THAT(err.str(), HasSubstr("railwatch triage: -:1: IB completion error without a numeric "
                                   "status"));
  EXPECT_THAT(out.str(), HasSubstr("1 malformed"));
}

TEST(TriageCommand, NoFilesIsAUsageError) {
  std::ostringstream out, err;
  EXPECT_EQ(RunCommand({"triage"}, CliOptions(), out, err), kExitUsage);
  EXPECT_THAT(err.str(), HasSubstr("usage: railwatch triage FILE..."));
}

}  // namespace
}  // namespace railwatch
