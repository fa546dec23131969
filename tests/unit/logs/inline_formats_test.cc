// Formats the Format notes of CATALOGUE.md describe but no real sample shows, written inline
// after the format strings in NCCL's, PyTorch's and nccl-tests' sources.

#include <string>
#include <vector>

#include "absl/time/civil_time.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/logs/log_test_util.h"

namespace railwatch::logs::testing {
namespace inline_formats_test {

int64_t Utc(int y, int mo, int d, int h, int mi, int s) {
  return absl::ToUnixNanos(
      absl::FromCivil(absl::CivilSecond(y, mo, d, h, mi, s), absl::UTCTimeZone()));
}

TEST(NcclInline, ModifyQpFailureOf227WithErrnoAndGids) {
  Parsed p = ParseLines({
      "gpu-node-7:4242:4300 [2] misc/ibvwrap.cc:203 NCCL WARN Call to ibv_modify_qp failed with "
      "110 Connection timed out, on dev mlx_x:1, curr state INIT, next state RTR, local GID "
      "index 3, local GID ::ffff:10.1.2.3, remote GID ::ffff:10.1.9.9",
  });
  const LogEvent& e = p.One("nccl.call_failed");
  EXPECT_EQ(F(e, "host"), "gpu-node-7");
  EXPECT_EQ(F(e, "call"), "ibv_modify_qp");
  EXPECT_EQ(F(e, "errno"), "110");
  EXPECT_EQ(F(e, "errno_name"), "ETIMEDOUT");
  EXPECT_EQ(F(e, "error"), "Connection timed out");
  EXPECT_EQ(F(e, "dev"), "mlx_x");
  EXPECT_EQ(F(e, "port"), "1");
  EXPECT_EQ(F(e, "curr_state"), "INIT");
  EXPECT_EQ(F(e, "next_state"), "RTR");
  EXPECT_EQ(F(e, "local_gid_index"), "3");
  EXPECT_EQ(F(e, "local_gid"), "::ffff:10.1.2.3");
  EXPECT_EQ(F(e, "remote_gid"), "::ffff:10.1.9.9");
  EXPECT_EQ(F(e, "location"), "misc/ibvwrap.cc:203");
}

TEST(NcclInline, ModifyQpNoSuchDeviceOfOlderReleases) {
  Parsed p =
      ParseLines({"h:1:2 [0] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed "
                  "with error No such device"});
  const LogEvent& e = p.One("nccl.call_failed");
  EXPECT_EQ(F(e, "error"), "No such device");
  EXPECT_EQ(F(e, "errno_name"), "ENODEV");
}

TEST(NcclInline, NoIbDeviceFound) {
  Parsed p = ParseLines({"node1:100:100 [0] NCCL INFO NET/IB : No device found."});
  const LogEvent& e = p.One("nccl.no_device");
  EXPECT_EQ(F(e, "transport"), "IB");
  EXPECT_EQ(F(e, "host"), "node1");
}

TEST(NcclInline, PluginVariantIbpCompletion) {
  Parsed p = ParseLines({
      "trn1-a:77:90 [3] ib_plugin.c:900 NCCL WARN NET/IBP:Got completion from peer "
      "10.0.0.9<4242> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid "
      "::ffff:10.0.0.8 remoteGids::ffff:10.0.0.9",
  });
  const LogEvent& e = p.One("nccl.ib_completion_error");
  EXPECT_EQ(F(e, "net"), "NET/IBP");
  EXPECT_EQ(F(e, "peer_address"), "10.0.0.9");
  EXPECT_EQ(F(e, "peer_port"), "4242");
  EXPECT_EQ(F(e, "status"), "12");
  EXPECT_EQ(F(e, "direction"), "Send");
  EXPECT_EQ(F(e, "remote_gids"), "::ffff:10.0.0.9");
}

TEST(NcclInline, NewestCompletionFormatWithTimestampFunctionAndHca) {
  Parsed p = ParseLines({
      "[2025-05-01 10:00:00] gpu-b:1:2 [0] transport/net_ib.cc:100 (ncclIbTest) NCCL WARN NET/IB: "
      "Got completion from peer 10.0.0.2<1234> with status=IBV_WC_WR_FLUSH_ERR(5) "
      "opcode=IBV_WC_SEND(0) vendor_err=249  localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2 "
      "hca mlx5_4",
  });
  const LogEvent& e = p.One("nccl.ib_completion_error");
  EXPECT_EQ(e.time_unix_nano, Utc(2025, 5, 1, 10, 0, 0));
  EXPECT_EQ(F(e, "host"), "gpu-b");
  EXPECT_EQ(F(e, "function"), "ncclIbTest");
  EXPECT_EQ(F(e, "status"), "5");
  EXPECT_EQ(F(e, "status_name"), "IBV_WC_WR_FLUSH_ERR");
  EXPECT_EQ(F(e, "opcode"), "0");
  EXPECT_EQ(F(e, "opcode_name"), "IBV_WC_SEND");
  EXPECT_EQ(F(e, "vendor_err"), "249");
  EXPECT_EQ(F(e, "vendor_err_hex"), "0xf9");
  EXPECT_EQ(F(e, "dev"), "mlx5_4");
  EXPECT_EQ(F(e, "format"), "status_named");
  EXPECT_EQ(F(e, "local_gid"), "::ffff:10.0.0.1");
}

TEST(NcclInline, MaskedRedactedAndUuidHosts) {
  Parsed p = ParseLines({
      "xxx-xxx-xxx-xxx:1234:5678 [7] NCCL INFO Using network IB",
      "host:XXXXXX [5] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB/SHARP ; OOB "
      "ib0:192.168.1.5<0>",
      "3f2504e0-4f89-11d3-9a0c-0305e82c3301:88:99 [1] NCCL INFO comm 0x5600 rank 1 nranks 8 "
      "cudaDev 1 busId 1b000 - Init COMPLETE",
      "node-01.cluster.example.com:7:8 [0] NCCL INFO Using network Socket",
  });
  EXPECT_EQ(p.stats.recognized, 4u);
  const LogEvent& masked = *p.OfKind("nccl.network").at(0);
  EXPECT_EQ(F(masked, "host"), "xxx-xxx-xxx-xxx");
  EXPECT_EQ(F(masked, "pid"), "1234");
  EXPECT_EQ(F(masked, "tid"), "5678");
  EXPECT_EQ(F(masked, "cuda_dev"), "7");
  const LogEvent& redacted = p.One("nccl.net");
  EXPECT_EQ(F(redacted, "host"), "host");
  EXPECT_EQ(F(redacted, "pid"), "<absent>");
  EXPECT_EQ(F(redacted, "tid"), "<absent>");
  EXPECT_EQ(F(redacted, "cuda_dev"), "5");
  EXPECT_EQ(F(redacted, "device_names"), "mlx5_0,mlx5_1");
  EXPECT_EQ(F(redacted, "link_layers"), "IB");
  EXPECT_EQ(F(redacted, "sharp"), "1");
  EXPECT_EQ(F(redacted, "oob_address"), "192.168.1.5");
  const LogEvent& uuid = p.One("nccl.comm_init");
  EXPECT_EQ(F(uuid, "host"), "3f2504e0-4f89-11d3-9a0c-0305e82c3301");
  EXPECT_EQ(F(uuid, "pid"), "88");
  EXPECT_EQ(F(uuid, "bus_id"), "1b000");
  EXPECT_EQ(F(*p.OfKind("nccl.network").at(1), "host"), "node-01.cluster.example.com");
}

TEST(NcclInline, Ipv6BootstrapWithScopeAndBootstrapError) {
  Parsed p = ParseLines({
      "gpu-a:10:10 [0] NCCL INFO Bootstrap : Using ib0:fe80::a288:c203:3:5f52%ib0<0>",
      "gpu-a:10:20 [0] bootstrap.cc:73 NCCL WARN Bootstrap : Connect to "
      "fe80::a288:c203:3:5f53%ib0<41000> failed : Connection refused",
  });
  const LogEvent& boot = p.One("nccl.bootstrap");
  EXPECT_EQ(F(boot, "interface"), "ib0");
  EXPECT_EQ(F(boot, "address"), "fe80::a288:c203:3:5f52%ib0");
  const LogEvent& err = p.One("nccl.bootstrap_error");
  EXPECT_EQ(F(err, "peer_address"), "fe80::a288:c203:3:5f53%ib0");
  EXPECT_EQ(F(err, "peer_port"), "41000");
  EXPECT_EQ(F(err, "error"), "Connection refused");
  EXPECT_EQ(F(err, "errno"), "111");
}

TEST(NcclInline, SocketErrorsAndAsyncEvents) {
  Parsed p = ParseLines({
      "gpu-c:5:6 [0] misc/socket.cc:397 NCCL WARN Net : Connect to 10.0.0.3<35711> failed : "
      "Connection refused",
      "gpu-c:5:7 [0] misc/socket.cc:50 NCCL WARN socketProgressOpt: Call to recv from "
      "10.0.0.3<43233> failed : Connection reset by peer",
      "gpu-d:1:9 [0] transport/net_ib.cc:120 NCCL WARN NET/IB : mlx5_2:1 Got async event : port "
      "error",
  });
  auto socket = p.OfKind("nccl.socket_error");
  ASSERT_EQ(socket.size(), 2u);
  EXPECT_EQ(F(*socket[0], "op"), "connect");
  EXPECT_EQ(F(*socket[0], "peer_address"), "10.0.0.3");
  EXPECT_EQ(F(*socket[0], "peer_port"), "35711");
  EXPECT_EQ(F(*socket[0], "errno_name"), "ECONNREFUSED");
  EXPECT_EQ(F(*socket[1], "op"), "recv");
  EXPECT_EQ(F(*socket[1], "peer_port"), "43233");
  EXPECT_EQ(F(*socket[1], "errno_name"), "ECONNRESET");
  const LogEvent& async = p.One("nccl.ib_async_event");
  EXPECT_EQ(F(async, "dev"), "mlx5_2");
  EXPECT_EQ(F(async, "port"), "1");
  EXPECT_EQ(F(async, "event"), "port error");
}

TEST(NcclInline, CollectorPrefixesAndTimestamps) {
  Parsed p = ParseLines({
      "2024-06-10T08:15:30.123456789Z gpu-e:3:3 [0] NCCL INFO NCCL version 2.21.5+cuda12.4",
      "2024-06-10T10:15:31+02:00 stdout F gpu-e:3:3 [0] NCCL INFO Using network IB",
      "12: gpu-f:3:3 [0] NCCL INFO Using network IB",
      "[default0]:gpu-h:9:9 [0] NCCL INFO Using network Socket",
      "[1,7]<stderr>:NCCL version 2.8.3+cudaCUDA_MAJOR.CUDA_MINOR",
  });
  EXPECT_EQ(p.stats.recognized, 5u);
  auto versions = p.OfKind("nccl.version");
  ASSERT_EQ(versions.size(), 2u);
  EXPECT_EQ(versions[0]->time_unix_nano, Utc(2024, 6, 10, 8, 15, 30) + 123456789);
  EXPECT_EQ(F(*versions[0], "version"), "2.21.5");
  EXPECT_EQ(F(*versions[1], "version"), "2.8.3");
  EXPECT_EQ(F(*versions[1], "cuda"), "CUDA_MAJOR.CUDA_MINOR");
  EXPECT_EQ(F(*versions[1], "mpi_rank"), "7");
  auto nets = p.OfKind("nccl.network");
  ASSERT_EQ(nets.size(), 3u);
  EXPECT_EQ(nets[0]->time_unix_nano, Utc(2024, 6, 10, 8, 15, 31));
  EXPECT_EQ(F(*nets[1], "launcher_tag"), "12");
  EXPECT_EQ(F(*nets[1], "host"), "gpu-f");
  EXPECT_EQ(F(*nets[2], "launcher_tag"), "default0");
  EXPECT_EQ(F(*nets[2], "host"), "gpu-h");
}

TEST(NcclInline, ChainEndsWhenItsThreadMovesOnOrGoesQuiet) {
  LogParser parser("x.log");
  std::vector<LogEvent> out;
  parser.Feed(
      "h:1:2 [0] transport/net_ib.cc:1 NCCL WARN NET/IB : Got completion with error 12, "
      "opcode 0, len 0, vendor err 129",
      out);
  parser.Feed("h:1:2 [0] NCCL INFO transport/net.cc:10 -> 6", out);
  ASSERT_EQ(out.size(), 1u);  // the completion error; its chain is still open
  parser.Feed("h:1:2 [0] NCCL INFO Connected all rings", out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].kind, "nccl.error_chain");
  EXPECT_EQ(F(out[1], "depth"), "1");

  // A trace with no WARN before it, then a long silence from that thread.
  parser.Feed("h:1:3 [0] NCCL INFO init.cc:100 -> 3", out);
  for (int i = 0; i < 2100; ++i) parser.Feed("unrelated line", out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(F(out[2], "origin"), "init.cc:100");
  EXPECT_EQ(F(out[2], "code_name"), "ncclInternalError");
  EXPECT_EQ(F(out[2], "first_error"), "<absent>");
  parser.Finish(out);
  EXPECT_EQ(out.size(), 3u);
}

TEST(PytorchInline, NcclErrorQuotingTheNcclWarning) {
  Parsed p = ParseLines({
      "[rank2]: torch.distributed.DistBackendError: NCCL error in: "
      "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, remote process exited or there "
      "was a network error, NCCL version 2.19.3",
      "[rank2]: ncclRemoteError: A call failed possibly due to a network error or a remote "
      "process exiting prematurely.",
      "[rank2]: Last error:",
      "[rank2]: NET/IB : Got completion from peer 10.0.0.9<4444> with status=12 opcode=0 len=0 "
      "vendor err 129 (Recv) localGid ::ffff:10.0.0.8 remoteGids::ffff:10.0.0.9",
  });
  EXPECT_EQ(p.stats.unknown, 0u);
  const LogEvent& e = p.One("pytorch.nccl_error");
  EXPECT_EQ(F(e, "global_rank"), "2");
  EXPECT_EQ(F(e, "nccl_location"), "../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970");
  EXPECT_EQ(F(e, "error"), "remote process exited or there was a network error");
  EXPECT_EQ(F(e, "nccl_version"), "2.19.3");
  const LogEvent& quoted = p.One("nccl.ib_completion_error");
  EXPECT_EQ(F(quoted, "quoted"), "1");
  EXPECT_EQ(F(quoted, "global_rank"), "2");
  EXPECT_EQ(F(quoted, "peer_address"), "10.0.0.9");
  EXPECT_EQ(F(quoted, "status"), "12");
}

TEST(PytorchInline, OlderTimeoutAtNcclWorkAndGlogWithThreadId) {
  Parsed p = ParseLines({
      "E0321 02:07:08.408271 80746 ProcessGroupNCCL.cpp:1537] [PG 0 Rank 3] Timeout at NCCL "
      "work: 42, last enqueued NCCL work: 43, last completed NCCL work: 41.",
  });
  const LogEvent& e = p.One("pytorch.watchdog_exception");
  EXPECT_EQ(F(e, "pg_rank"), "3");
  EXPECT_EQ(F(e, "seq_num"), "42");
  EXPECT_EQ(F(e, "last_completed"), "41");
  EXPECT_EQ(F(e, "location"), "ProcessGroupNCCL.cpp:1537");
  EXPECT_NE(e.time_unix_nano, 0);
}

TEST(RasInline, DeadAndIncompleteBlocks) {
  Parsed p = ParseLines({
      "NCCL version 2.27.3 compiled with CUDA 12.8",
      "CUDA runtime version 12080, driver version 12080",
      "",
      "Job summary",
      "===========",
      "",
      "  Nodes  Processes         GPUs",
      "          per node  per process",
      "      3          8            1",
      "      1          7            1",
      "",
      "  Nodes  Processes         GPUs",
      "(total)    (total)      (total)",
      "      4         31           31",
      "",
      "Communicators... (2.00s)",
      "=============",
      "",
      "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors",
      "    #  in group  per comm  per node  per comm  in group",
      "    0         1         4       7-8        32        31   RUNNING  INCOMPLETE",
      "",
      "Errors",
      "======",
      "",
      "DEAD",
      "  1 job process is considered dead (unreachable via the RAS network)",
      "  Process 4242 on node 10.0.0.9 managing GPU 7",
      "",
      "#0-0 (00000000deadbeef) INCOMPLETE",
      "  Missing communicator data from 1 rank",
      "  Rank 31 -- GPU 7 managed by process 4242 on node 10.0.0.9",
      "",
      "Warnings",
      "========",
      "",
  });
  EXPECT_EQ(p.stats.malformed, 0u);
  const LogEvent& r = p.One("nccl_ras.report");
  EXPECT_EQ(F(r, "nodes"), "4");
  EXPECT_EQ(F(r, "processes"), "31");
  EXPECT_EQ(F(r, "gpus"), "31");
  EXPECT_EQ(F(r, "group.0.ranks_per_node"), "7-8");
  EXPECT_EQ(F(r, "errors"), "INCOMPLETE");
  EXPECT_EQ(F(r, "dead_processes"), "1");
  EXPECT_EQ(F(r, "dead_nodes"), "10.0.0.9");
  EXPECT_EQ(F(r, "outlier_ranks"), "31");
  const LogEvent& issue = p.One("nccl_ras.comm_issue");
  EXPECT_EQ(F(issue, "issue"), "INCOMPLETE");
  EXPECT_EQ(F(issue, "missing_ranks"), "1");
  EXPECT_EQ(F(issue, "nodes"), "10.0.0.9");
}

TEST(RasInline, AReportEndsWhereAnotherFormatBegins) {
  Parsed p = ParseLines({
      "NCCL version 2.26.2 compiled with CUDA 12.6",
      "Warnings",
      "========",
      "#0-0 (fa93daea854b060b) MISMATCH",
      "  Communicator ranks have different AllReduce operation counts",
      "# Avg bus bandwidth    : 12.5",
      "h:1:2 [0] NCCL INFO Using network IB",
  });
  EXPECT_EQ(p.stats.malformed, 0u);
  auto report = p.OfKind("nccl_ras.report");
  ASSERT_EQ(report.size(), 1u);
  EXPECT_EQ(F(*report[0], "issues"), "1");
  EXPECT_EQ(F(p.One("nccl_ras.comm_issue"), "op"), "AllReduce");
  EXPECT_EQ(F(p.One("nccltests.summary"), "avg_busbw_gbps"), "12.5");
  EXPECT_EQ(F(p.One("nccl.network"), "network"), "IB");
  // The report is emitted when the nccl-tests line ends it, before the later events.
  EXPECT_EQ(p.events[0].kind, "nccl_ras.report");
}

TEST(NcclTestsInline, NewerHeaderDeviceGroupsNaAndACutTable) {
  Parsed p = ParseLines({
      "# nccl-tests version 2.13.9 nccl-headers=22105 nccl-library=22105",
      "# Collective test starting: all_gather_perf",
      "# nThread 1 nGpus 1 minBytes 1024 maxBytes 4096 step: 1048576(bytes) warmup iters: 1 "
      "iters: 5 agg iters: 1 validation: 0 graph: 0",
      "#",
      "#  Rank  0 Group  0 Pid  12345 on     gpu-g device  0 [0000:1b:00] NVIDIA H100 80GB HBM3",
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong",
      "        1024           256     float    none      -1    10.50    0.10    0.09    N/A    "
      "10.40    0.10    0.09    N/A",
      "        2048           512     float    none      -1    10.60",
  });
  EXPECT_EQ(p.stats.malformed, 1u);
  ASSERT_EQ(p.stats.problems.size(), 1u);
  EXPECT_EQ(p.stats.problems[0].line, 8);
  const LogEvent& header = p.One("nccltests.header");
  EXPECT_EQ(F(header, "test"), "all_gather_perf");
  EXPECT_EQ(F(header, "step"), "1048576");
  EXPECT_EQ(F(header, "step_kind"), "bytes");
  EXPECT_EQ(F(header, "agg_iters"), "1");
  EXPECT_EQ(F(header, "graph"), "0");
  EXPECT_EQ(F(header, "nccl_library"), "22105");
  const LogEvent& device = p.One("nccltests.device");
  EXPECT_EQ(F(device, "group"), "0");
  EXPECT_EQ(F(device, "host"), "gpu-g");
  EXPECT_EQ(F(device, "bus_id"), "0000:1b:00");
  EXPECT_EQ(F(device, "gpu"), "NVIDIA H100 80GB HBM3");
  const LogEvent& row = p.One("nccltests.result");
  EXPECT_EQ(F(row, "redop"), "none");
  EXPECT_EQ(F(row, "root"), "-1");
  EXPECT_EQ(F(row, "oop_wrong"), "N/A");
  // The table never reached its "Avg bus bandwidth": summarised at the end, marked incomplete.
  const LogEvent& summary = p.One("nccltests.summary");
  EXPECT_EQ(F(summary, "complete"), "0");
  EXPECT_EQ(F(summary, "rows"), "1");
  EXPECT_EQ(F(summary, "avg_busbw_gbps"), "<absent>");
}

}  // namespace
}  // namespace railwatch::logs::testing
