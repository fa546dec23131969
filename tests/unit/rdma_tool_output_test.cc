// The `rdma statistic|link show` / `rdma -j` / ibstatus parser on the real-world samples in
// fixtures/rdma (the values tests/fixtures/rdma's CATALOGUE entries list) and on malformed input.

#include "collectors/rdma_tool_output.h"

#include <string>

#include "common/text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/ttar.h"

namespace railwatch {
namespace rdma_tool_output_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

RdmaToolOutput ParseFixture(const std::string& name) {
  absl::StatusOr<std::string> text = ReadFile(testing::FixturePath("rdma/" + name));
  EXPECT_TRUE(text.ok()) << text.status();
  return ParseRdmaToolOutput(text.ok() ? *text : "");
}

TEST(RdmaToolOutput, WrappedStatisticLineIsOneRecord) {
  RdmaToolOutput out = ParseFixture("rdma_statistic_01_sender_nonzero_errors_wrapped.txt");
  EXPECT_TRUE(out.problems.empty()) << out.problems[0].line << ": " << out.problems[0].reason;
  ASSERT_EQ(out.ports.size(), 1u);
  const RdmaToolPort& p = out.ports[0];
  EXPECT_EQ(p.device, "mlx5_1");
  EXPECT_EQ(p.port, 1u);
  EXPECT_EQ(p.line, 2);
  EXPECT_FALSE(p.IsLink());
  EXPECT_EQ(p.counters.size(), 31u);
  EXPECT_EQ(p.Value("rnr_nak_retry_err"), 1543u);
  EXPECT_EQ(p.Value("local_ack_timeout_err"), 15u);
  EXPECT_EQ(p.Value("req_cqe_error"), 36090u);
  EXPECT_EQ(p.Value("req_cqe_flush_error"), 36071u);
  EXPECT_EQ(p.Value("req_transport_retries_exceeded"), 19u);
  EXPECT_EQ(p.Value("roce_adp_retrans"), 148u);
  EXPECT_EQ(p.Value("roce_slow_restart_cnps"), 144u);
  EXPECT_EQ(p.Value("rp_cnp_handled"), 144u);
  ASSERT_NE(p.Counter("np_ecn_marked_roce_packets"), nullptr);
  EXPECT_EQ(p.Value("np_ecn_marked_roce_packets"), 0u);
  ASSERT_NE(p.Counter("rx_icrc_encapsulated"), nullptr);  // the last, before a trailing space
  // Continuation lines and the shell line are told apart: the prompt is skipped, not a problem.
  EXPECT_EQ(out.lines, 6);
  EXPECT_EQ(out.skipped, 1);
}

TEST(RdmaToolOutput, CountersMapToTheSysfsCollectorsCanonicalNames) {
  RdmaToolOutput out = ParseFixture("rdma_statistic_01_sender_nonzero_errors_wrapped.txt");
  ASSERT_EQ(out.ports.size(), 1u);
  const RdmaToolPort& p = out.ports[0];
  EXPECT_EQ(p.Counter("req_transport_retries_exceeded")->canonical,
            "fabric_rdma_transport_retries_exceeded_total");
  EXPECT_EQ(p.Counter("local_ack_timeout_err")->canonical,
            "fabric_rdma_local_ack_timeout_errors_total");
  EXPECT_EQ(p.Counter("out_of_buffer")->canonical, "fabric_rdma_out_of_buffer_total");
  EXPECT_EQ(p.Counter("np_cnp_sent")->canonical, "fabric_roce_cnp_sent_total");
  EXPECT_EQ(RdmaCounterCanonicalName("req_cqe_error"), "fabric_rdma_requester_cqe_errors_total");
  EXPECT_EQ(RdmaCounterCanonicalName("oos_drop_count"), "fabric_rdma_out_of_sequence_total");
  EXPECT_EQ(RdmaCounterCanonicalName("no_such_counter"), "");
}

TEST(RdmaToolOutput, TwoDevicesOneLineEach) {
  RdmaToolOutput out = ParseFixture("rdma_statistic_04_multi_device_mlx5_0_1.txt");
  EXPECT_TRUE(out.problems.empty());
  ASSERT_EQ(out.ports.size(), 2u);
  const RdmaToolPort& p0 = out.ports[0];
  EXPECT_EQ(p0.Name(), "mlx5_0/1");
  EXPECT_EQ(p0.Value("out_of_buffer"), 135u);
  EXPECT_EQ(p0.Value("resp_cqe_error"), 1009u);
  EXPECT_EQ(p0.Value("req_cqe_error"), 22u);
  EXPECT_EQ(p0.Value("resp_cqe_flush_error"), 998u);
  EXPECT_EQ(p0.Value("req_cqe_flush_error"), 11u);
  EXPECT_EQ(p0.Counter("req_transport_retries_exceeded"), nullptr);  // absent, not zero
  EXPECT_EQ(out.ports[1].Name(), "mlx5_1/1");
  EXPECT_EQ(out.ports[1].line, 3);
  EXPECT_EQ(out.ports[1].Value("resp_cqe_error"), 0u);
}

TEST(RdmaToolOutput, LinkShowWithTrailingSpacesAndPrompts) {
  RdmaToolOutput out = ParseFixture("rdma_link_01_mlx5_cx6dx_trailing_space.txt");
  EXPECT_TRUE(out.problems.empty());
  EXPECT_EQ(out.skipped, 2);  // "[root@node75 ~]# rdma link show" and the bare prompt
  ASSERT_EQ(out.ports.size(), 2u);
  EXPECT_TRUE(out.ports[0].IsLink());
  EXPECT_TRUE(out.ports[0].counters.empty());
  EXPECT_THAT(out.ports[0].attributes,
              ElementsAre(Pair("state", "ACTIVE"), Pair("physical_state", "LINK_UP"),
                          Pair("netdev", "p1p1")));
  EXPECT_EQ(out.ports[1].Name(), "mlx5_1/1");
  EXPECT_EQ(*out.ports[1].Attribute("netdev"), "p1p2");
}

TEST(RdmaToolOutput, IbstatusBlocksBecomePortsWithRdmaStateNames) {
  RdmaToolOutput out = ParseFixture("ibstatus_01_roce_ports_cx_mlx5.txt");
  EXPECT_TRUE(out.problems.empty()) << out.problems[0].line << ": " << out.problems[0].reason;
  ASSERT_EQ(out.ports.size(), 2u);
  const RdmaToolPort& p = out.ports[1];
  EXPECT_EQ(p.Name(), "mlx5_1/1");
  EXPECT_EQ(p.line, 10);
  EXPECT_EQ(*p.Attribute("state"), "ACTIVE");
  EXPECT_EQ(*p.Attribute("physical_state"), "LINK_UP");
  EXPECT_EQ(*p.Attribute("default_gid"), "fe80:0000:0000:0000:8ae9:a4ff:fe9c:7f1b");
  EXPECT_EQ(*p.Attribute("rate"), "100 Gb/sec (4X EDR)");
  EXPECT_EQ(*p.Attribute("link_layer"), "Ethernet");
  EXPECT_EQ(*p.Attribute("lid"), "0x0");
}

TEST(RdmaToolOutput, IbLinkShowKeepsNumericAttributesAsAttributes) {
  RdmaToolOutput out = ParseRdmaToolOutput(
      "link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid 13 sm_lid 1 lmc 0 state DOWN "
      "physical_state POLLING\n"
      "    caps: <CM, IP_BASED_GID_TABLE>\n");
  EXPECT_TRUE(out.problems.empty()) << out.problems[0].reason;
  ASSERT_EQ(out.ports.size(), 1u);
  EXPECT_TRUE(out.ports[0].counters.empty());
  EXPECT_EQ(*out.ports[0].Attribute("lid"), "13");
  EXPECT_EQ(*out.ports[0].Attribute("physical_state"), "POLLING");
  EXPECT_EQ(*out.ports[0].Attribute("caps"), "<CM, IP_BASED_GID_TABLE>");
}

TEST(RdmaToolOutput, JsonOneLineAndPretty) {
  RdmaToolOutput out = ParseRdmaToolOutput(
      "$ rdma -j statistic show\n"
      "[{\"ifname\":\"mlx5_0\",\"port\":1,\"rx_write_requests\":0,\"out_of_buffer\":135,"
      "\"req_cqe_error\":18446744073709551615}]\n"
      "$ rdma -j -p link show\n"
      "[ {\n"
      "        \"ifindex\": 0,\n"
      "        \"ifname\": \"mlx5_1\",\n"
      "        \"port\": 1,\n"
      "        \"state\": \"DOWN\",\n"
      "        \"physical_state\": \"DISABLED\",\n"
      "        \"netdev\": \"p1p2\",\n"
      "        \"netdev_index\": 5\n"
      "    } ]\n");
  EXPECT_TRUE(out.problems.empty()) << out.problems[0].line << ": " << out.problems[0].reason;
  ASSERT_EQ(out.ports.size(), 2u);
  EXPECT_EQ(out.ports[0].Value("out_of_buffer"), 135u);
  EXPECT_EQ(out.ports[0].Value("req_cqe_error"), UINT64_MAX);
  EXPECT_EQ(out.ports[0].line, 2);
  EXPECT_EQ(out.ports[1].Name(), "mlx5_1/1");
  EXPECT_EQ(out.ports[1].line, 4);
  EXPECT_TRUE(out.ports[1].counters.empty());
  EXPECT_EQ(*out.ports[1].Attribute("netdev_index"), "5");
  EXPECT_EQ(*out.ports[1].Attribute("physical_state"), "DISABLED");
}

TEST(RdmaToolOutput, BadLinesGiveTheirLineNumberAndTheRestIsParsed) {
  RdmaToolOutput out = ParseRdmaToolOutput(
      "link mlx5_0/1 out_of_buffer 7 local_ack_timeout_err lots req_cqe_error 3\n"  // 1
      "link mlx5_0 state ACTIVE\n"                                                  // 2
      " physical_state LINK_UP\n"                                                   // 3
      "link mlx5_2/x out_of_buffer 1\n"                                             // 4
      "this is not rdma output\n"                                                   // 5
      "link mlx5_3/1 out_of_sequence 99999999999999999999 packet_seq_err 4\n"       // 6
      "link mlx5_4/1 rnr_nak_retry_err packet_seq_err 2 -5 out_of_buffer\n");       // 7
  ASSERT_EQ(out.ports.size(), 3u);
  EXPECT_EQ(out.ports[0].Value("out_of_buffer"), 7u);
  EXPECT_EQ(out.ports[0].Value("req_cqe_error"), 3u);
  EXPECT_EQ(out.ports[0].Counter("local_ack_timeout_err"), nullptr);
  EXPECT_EQ(out.ports[1].Name(), "mlx5_3/1");
  EXPECT_EQ(out.ports[1].Value("packet_seq_err"), 4u);
  EXPECT_EQ(out.ports[2].Name(), "mlx5_4/1");
  EXPECT_EQ(out.ports[2].Value("packet_seq_err"), 2u);
  std::vector<std::string> problems;
  for (const RdmaToolProblem& p : out.problems) {
    problems.push_back(std::to_string(p.line) + ": " + p.reason);
  }
  EXPECT_THAT(
      problems,
      ElementsAre(
          "1: counter 'local_ack_timeout_err': value 'lots' is not an unsigned 64-bit integer",
          "2: expected DEV/PORT after 'link', got 'mlx5_0'",
          "4: expected DEV/PORT after 'link', got 'mlx5_2/x'",
          "5: not rdma output (expected 'link DEV/PORT ...' or `rdma -j` JSON): 'this is not "
          "rdma output'",
          "6: counter 'out_of_sequence': value '99999999999999999999' is not an unsigned 64-bit "
          "integer",
          "7: counter 'rnr_nak_retry_err' has no value",
          "7: expected a counter or attribute name, got '-5'",
          "7: counter 'out_of_buffer' has no value"));
}

TEST(RdmaToolOutput, LineTwoIsNotAContinuationOfABadHeaderProblem) {
  // The continuation of a record whose header was bad is taken with it: one problem, not two.
  RdmaToolOutput out = ParseRdmaToolOutput("link mlx5_0 out_of_buffer 1\n duplicate_request 0\n");
  ASSERT_EQ(out.problems.size(), 1u);
  EXPECT_EQ(out.problems[0].line, 1);
  EXPECT_TRUE(out.ports.empty());
}

TEST(RdmaToolOutput, ValueWrappedOntoTheNextLine) {
  RdmaToolOutput out =
      ParseRdmaToolOutput("link mlx5_0/1 out_of_buffer 5 local_ack_timeout_err\n 12 np_cnp_sent 3\n");
  EXPECT_TRUE(out.problems.empty());
  ASSERT_EQ(out.ports.size(), 1u);
  EXPECT_EQ(out.ports[0].Value("local_ack_timeout_err"), 12u);
  EXPECT_EQ(out.ports[0].Value("np_cnp_sent"), 3u);
}

TEST(RdmaToolOutput, BrokenJsonNamesItsLine) {
  RdmaToolOutput out = ParseRdmaToolOutput(
      "[{\"ifname\":\"mlx5_0\",\"port\":1},\n"
      " {\"ifname\":\"mlx5_1\",\"port\":1,\"out_of_buffer\":-3},\n"
      " {\"port\":2},\n"
      " {\"ifname\":\"mlx5_2\",\"port\":1,,}]\n"
      "[{\"ifname\":\"mlx5_3\",\"port\":1,\"out_of_buffer\":2}]\n"
      "[{\"ifname\":\"mlx5_4\"\n");
  ASSERT_EQ(out.ports.size(), 1u);
  EXPECT_EQ(out.ports[0].Name(), "mlx5_3/1");
  ASSERT_EQ(out.problems.size(), 2u);
  EXPECT_EQ(out.problems[0].line, 4);
  EXPECT_THAT(out.problems[0].reason, HasSubstr("invalid JSON"));
  EXPECT_EQ(out.problems[1].line, 6);
  EXPECT_THAT(out.problems[1].reason, HasSubstr("not closed"));
}

TEST(RdmaToolOutput, JsonObjectsWithoutNamesOrWithBadNumbers) {
  RdmaToolOutput out = ParseRdmaToolOutput(
      "[{\"ifname\":\"mlx5_1\",\"port\":1,\"out_of_buffer\":-3,\"np_cnp_sent\":1.5},\n"
      " {\"port\":2}, 7]\n");
  ASSERT_EQ(out.ports.size(), 1u);
  EXPECT_TRUE(out.ports[0].counters.empty());
  ASSERT_EQ(out.problems.size(), 4u);
  EXPECT_THAT(out.problems[0].reason, HasSubstr("'out_of_buffer': -3 is not an unsigned"));
  EXPECT_THAT(out.problems[2].reason, HasSubstr("without \"ifname\""));
  EXPECT_THAT(out.problems[3].reason, HasSubstr("expected an object"));
}

TEST(RdmaToolOutput, DeepJsonIsRefusedNotRecursedInto) {
  std::string deep = "[{\"ifname\":\"mlx5_0\",\"port\":1,\"x\":" + std::string(100000, '[');
  deep += std::string(100000, ']') + "}]";
  RdmaToolOutput out = ParseRdmaToolOutput(deep);
  ASSERT_EQ(out.problems.size(), 1u);
  EXPECT_THAT(out.problems[0].reason, HasSubstr("nested deeper"));
}

TEST(RdmaToolOutput, ProblemsAreBounded) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "link x out_of_buffer 1\n";
  RdmaToolOutput out = ParseRdmaToolOutput(text);
  EXPECT_LE(out.problems.size(), 101u);
  EXPECT_THAT(out.problems.back().reason, HasSubstr("more problems"));
}

TEST(RdmaToolParser, OnlyRdmaJsonOpensADocument) {
  // A bracket alone, or JSON that is not rdma's, is left to the caller: an unbalanced one would
  // otherwise swallow the rest of a log.
  RdmaToolParser parser;
  EXPECT_FALSE(parser.Feed("[", 1));
  EXPECT_FALSE(parser.Feed("{", 2));
  EXPECT_FALSE(parser.Feed("{\"level\":\"info\",\"msg\":\"step 10\"}", 3));
  EXPECT_FALSE(parser.Feed("host:1:2 [0] NCCL WARN NET/IB : Got completion", 4));
  EXPECT_TRUE(parser.Feed("[ {", 5));
  EXPECT_TRUE(parser.Feed("  \"ifname\": \"mlx5_0\", \"port\": 1, \"out_of_buffer\": 4", 6));
  EXPECT_TRUE(parser.Feed("} ]", 7));
  EXPECT_FALSE(parser.Feed("host:1:2 [0] NCCL INFO x", 8));
  parser.Finish();
  ASSERT_EQ(parser.output().ports.size(), 1u);
  EXPECT_EQ(parser.output().ports[0].Value("out_of_buffer"), 4u);
  EXPECT_TRUE(parser.output().problems.empty());
}

TEST(RdmaToolParser, DeclinesOtherLinesSoALogCanSurroundIt) {
  RdmaToolParser parser;
  EXPECT_FALSE(parser.Feed("host:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE", 1));
  EXPECT_TRUE(parser.Feed("link mlx5_0/1 out_of_buffer 1", 2));
  EXPECT_TRUE(parser.Feed(" np_cnp_sent 2", 3));
  EXPECT_FALSE(parser.Feed("  Time(s) out-of-place  in-place", 4));  // not name/value pairs
  EXPECT_FALSE(parser.Feed(" np_cnp_sent 2", 5));  // the record closed at line 4
  parser.Finish();
  ASSERT_EQ(parser.output().ports.size(), 1u);
  EXPECT_EQ(parser.output().ports[0].Value("np_cnp_sent"), 2u);
  EXPECT_EQ(parser.output().lines, 2);
}

TEST(RdmaToolOutput, CommandEchoes) {
  EXPECT_TRUE(IsRdmaCommandEcho("sudo rdma statistic"));
  EXPECT_TRUE(IsRdmaCommandEcho("# /opt/mellanox/iproute2/sbin/rdma statistic show"));
  EXPECT_TRUE(IsRdmaCommandEcho("[root@node75 ~]# "));
  EXPECT_TRUE(IsRdmaCommandEcho("user@gpu-1:~$ rdma -j link"));
  EXPECT_FALSE(IsRdmaCommandEcho("link mlx5_0/1 state ACTIVE"));
  EXPECT_FALSE(IsRdmaCommandEcho(""));
}

}  // namespace
}  // namespace railwatch
