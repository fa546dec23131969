// `railwatch triage` on pasted `rdma statistic|link show` output: the findings per port on the
// real samples (fixtures/rdma), the cross-check with an NCCL log, JSON, and bad rdma lines.

#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "cli/commands.h"
#include "cli/triage.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "support/ttar.h"
#include "triage_run.h"

namespace railwatch {
namespace triage_rdma_test {

using ::testing::HasSubstr;
using ::testing::Not;

using testing::Block;
using testing::Triage;
using testing::TriageRun;

std::string Fixture(const std::string& name) { return testing::FixturePath("rdma/" + name); }

TEST(TriageRdma, WrappedStatisticSample) {
  TriageRun r = Triage({Fixture("rdma_statistic_01_sender_nonzero_errors_wrapped.txt")});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("Read 6 lines of rdma tool output: 1 port records, 0 problems."));
  std::string retries = Block(r.out, "FAIL  RDMA mlx5_1/1: retries and timeouts:");
  EXPECT_THAT(retries, HasSubstr("req_transport_retries_exceeded 19, local_ack_timeout_err 15, "
                                 "rnr_nak_retry_err 1543, roce_adp_retrans 148"));
  EXPECT_THAT(retries, HasSubstr("rdma_statistic_01_sender_nonzero_errors_wrapped.txt:2\n"));
  EXPECT_THAT(retries, HasSubstr("watch -d -n 5 rdma statistic show link mlx5_1/1"));
  EXPECT_THAT(retries, HasSubstr("status 12"));
  std::string cqe = Block(r.out, "FAIL  RDMA mlx5_1/1: completion errors:");
  EXPECT_THAT(cqe, HasSubstr("req_cqe_error 36090, req_cqe_flush_error 36071"));
  EXPECT_THAT(cqe, HasSubstr("not flushed   requester 19, responder 0"));
  EXPECT_THAT(cqe, HasSubstr("19 requester errors that were not flushed match the retries"));
  EXPECT_THAT(r.out, HasSubstr("INFO  RDMA mlx5_1/1: congestion control at work: rp_cnp_handled "
                               "144, roce_slow_restart_cnps 144"));
  EXPECT_THAT(r.out, Not(HasSubstr("out_of_buffer)")));  // zero here: no finding
}

TEST(TriageRdma, StatisticAndLinkShowTogetherNameTheNetdev) {
  TriageRun r = Triage({Fixture("rdma_statistic_04_multi_device_mlx5_0_1.txt"),
                  Fixture("rdma_link_01_mlx5_cx6dx_trailing_space.txt")});
  EXPECT_EQ(r.code, kExitOk);
  std::string cqe = Block(r.out, "FAIL  RDMA mlx5_0/1: completion errors:");
  EXPECT_THAT(cqe, HasSubstr("where         mlx5_0/1 (netdev p1p1)"));
  EXPECT_THAT(cqe, HasSubstr("not flushed   requester 11, responder 11"));
  std::string oob = Block(r.out, "WARN  RDMA mlx5_0/1: 135 packets dropped for lack of a receive "
                                 "buffer (out_of_buffer)");
  EXPECT_THAT(oob, HasSubstr("ethtool -S p1p1 | grep -E 'out_of_buffer|rx_discards'"));
  // mlx5_1/1 is clean and up: no finding names it.
  EXPECT_THAT(r.out, Not(HasSubstr("RDMA mlx5_1/1:")));
  EXPECT_THAT(r.out, HasSubstr("mlx5_0/1 (p1p1, ACTIVE/LINK_UP, 1 counter reading)"));
}

TEST(TriageRdma, LinkNotActive) {
  TriageRun r = Triage({"-"}, "$ rdma link show\n"
                        "link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev eth2 \n"
                        "link mlx5_3/1 state DOWN physical_state POLLING netdev eth5 \n");
  std::string down = Block(r.out, "FAIL  RDMA mlx5_3/1 is DOWN (physical state POLLING)");
  EXPECT_THAT(down, HasSubstr("-:3"));
  EXPECT_THAT(down, HasSubstr("No link partner"));
  EXPECT_THAT(down, HasSubstr("ip link show eth5; ethtool eth5"));
  EXPECT_THAT(r.out, Not(HasSubstr("RDMA mlx5_0/1 is")));
}

TEST(TriageRdma, IbstatusSampleIsReadAndHealthy) {
  TriageRun r = Triage({Fixture("ibstatus_01_roce_ports_cx_mlx5.txt")});
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, HasSubstr("No failure found."));
  EXPECT_THAT(r.out, HasSubstr("mlx5_0/1 (ACTIVE/LINK_UP), mlx5_1/1 (ACTIVE/LINK_UP)"));
}

constexpr char kNcclWithRdma[] =
    "host-1:100:100 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB "
    "eth0:10.0.0.1<0>\n"
    "host-1:100:200 [0] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer "
    "10.0.0.2<4242> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.0.1 "
    "remoteGids::ffff:10.0.0.2 hca mlx5_1\n"
    "\n"
    "[root@host-1 ~]# rdma statistic show\n"
    "link mlx5_0/1 out_of_buffer 0 local_ack_timeout_err 0 req_cqe_error 0\n"
    "link mlx5_1/1 out_of_buffer 0 local_ack_timeout_err 7 req_transport_retries_exceeded 2\n"
    " req_cqe_error 2 req_cqe_flush_error 0\n"
    "link mlx5_2/1 local_ack_timeout_err 3\n"
    "host-1:100:200 [0] NCCL INFO transport/net.cc:1302 -> 6\n";

TEST(TriageRdma, CrossCheckWithTheNcclLogsDevice) {
  TriageRun r = Triage({"-"}, kNcclWithRdma);
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_EQ(r.err, "");
  // The NCCL finding is still there, with its line numbers true to the paste.
  EXPECT_THAT(r.out, HasSubstr("IB completion error IBV_WC_RETRY_EXC_ERR (status 12)"));
  EXPECT_THAT(r.out, HasSubstr("first seen    -:2"));
  std::string retries = Block(r.out, "FAIL  RDMA mlx5_1/1: retries and timeouts:");
  EXPECT_THAT(retries, HasSubstr("first seen    -:6\n"));
  EXPECT_THAT(retries, HasSubstr("NCCL          the NCCL log's IB completion error "
                                 "IBV_WC_RETRY_EXC_ERR (status 12) (-:2) names\n"));
  EXPECT_THAT(retries, HasSubstr("mlx5_1 too: the same NIC"));
  std::string other = Block(r.out, "WARN  RDMA mlx5_2/1: retries and timeouts:");
  EXPECT_THAT(other, HasSubstr("NCCL does not use mlx5_2 (it uses mlx5_0, mlx5_1)"));
}

TEST(TriageRdma, FailingNicMissingOrCleanInTheRdmaOutput) {
  std::string text = kNcclWithRdma;
  // Only mlx5_0's counters: the NIC NCCL names is missing from the rdma output.
  std::string missing = text.substr(0, text.find("link mlx5_1/1"));
  TriageRun r = Triage({"-"}, missing);
  EXPECT_THAT(r.out, HasSubstr("WARN  The NCCL log's failing NIC mlx5_1 is not in the rdma "
                               "output"));
  EXPECT_THAT(r.out, HasSubstr("rdma statistic show link mlx5_1/1"));
  // mlx5_1's counters are clean: said, as information.
  r = Triage({"-"}, missing + "link mlx5_1/1 out_of_buffer 0 req_cqe_error 0\n");
  EXPECT_THAT(r.out, HasSubstr("INFO  RDMA mlx5_1/1: no retries or completion errors, although "
                               "the NCCL log reports an error on mlx5_1"));
}

TEST(TriageRdma, TwoReadingsGiveTheChange) {
  TriageRun r = Triage({"-"}, "link mlx5_0/1 local_ack_timeout_err 15 out_of_buffer 9\n"
                        "link mlx5_0/1 local_ack_timeout_err 21 out_of_buffer 9\n");
  std::string retries = Block(r.out, "WARN  RDMA mlx5_0/1: retries and timeouts:");
  EXPECT_THAT(retries, HasSubstr("+6 local_ack_timeout_err between -:1 and -:2"));
  // out_of_buffer did not move: old news, information only.
  EXPECT_THAT(r.out, HasSubstr("INFO  RDMA mlx5_0/1: 9 packets dropped for lack of a receive "
                               "buffer (out_of_buffer) (unchanged between 2 readings: old)"));
}

TEST(TriageRdma, BadRdmaLinesAreReportedWithFileAndLine) {
  TriageRun r = Triage({"-"}, "link mlx5_0/1 out_of_buffer many local_ack_timeout_err 4\n"
                        "link mlx5_0 state ACTIVE\n");
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_THAT(r.err, HasSubstr("railwatch triage: -:1: rdma output: counter 'out_of_buffer': "
                               "value 'many' is not an unsigned 64-bit integer"));
  EXPECT_THAT(r.err, HasSubstr("railwatch triage: -:2: rdma output: expected DEV/PORT after "
                               "'link', got 'mlx5_0'"));
  EXPECT_THAT(r.out, HasSubstr("Read 2 lines of rdma tool output: 1 port records, 2 problems."));
  EXPECT_THAT(r.out, HasSubstr("RDMA mlx5_0/1: retries and timeouts: local_ack_timeout_err 4"));
}

TEST(TriageRdma, JsonEventsCarryCountersAsNumbers) {
  TriageRun r = Triage({Fixture("rdma_statistic_04_multi_device_mlx5_0_1.txt")}, "", /*json=*/true);
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_FALSE(lines.empty());
  nlohmann::json first = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(first["kind"], "rdma.statistic");
  EXPECT_EQ(first["device"], "mlx5_0");
  EXPECT_EQ(first["line"], 2);
  EXPECT_EQ(first["out_of_buffer"], 135);
  nlohmann::json summary = nlohmann::json::parse(lines.back());
  EXPECT_EQ(summary["kind"], "triage.summary");
  EXPECT_EQ(summary["verdict"], "failure");
  EXPECT_EQ(summary["rdma_ports"], 2);
  EXPECT_EQ(summary["rdma_problems"], 0);
}

}  // namespace
}  // namespace railwatch
