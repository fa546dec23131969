// `railwatch top` and `railwatch series` against a fake daemon: the expressions sent, the
// ranking, the per-port sums, the tables and JSON, and the windows requested.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cli/commands.h"
#include "cli_fake_query.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace railwatch::testing {
namespace cli_fabric_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int64_t kT0 = 1714564800LL * 1000000000;  // 2024-05-01T12:00:00Z
constexpr int64_t kSecond = 1000000000;

using Labels = std::vector<std::pair<std::string, std::string>>;

std::string TopQuery(const std::string& metric, const std::string& window = "1m") {
  return absl::StrCat("topology(rate(", metric, "[", window, "])) > 0");
}

// An expression's result: one point per element.
v1::QuerySeriesResponse Rates(std::vector<std::pair<Labels, double>> elements) {
  v1::QuerySeriesResponse r;
  r.set_query_type("expression");
  for (const auto& [labels, value] : elements) *r.add_series() = MakeSeries("", labels, {{kT0, value}});
  r.set_matched(r.series_size());
  return r;
}

const std::vector<std::string> kErrorCounters = {
    "fabric_rdma_symbol_errors_total",
    "fabric_rdma_port_receive_errors_total",
    "fabric_rdma_link_downed_total",
    "fabric_rdma_out_of_sequence_total",
    "fabric_rdma_packet_sequence_errors_total",
    "fabric_rdma_local_ack_timeout_errors_total",
    "fabric_switch_interface_receive_errors_total",
    "fabric_switch_interface_transmit_errors_total",
    "fabric_switch_interface_receive_discards_total",
    "fabric_switch_interface_transmit_discards_total",
};

FakeQueryData FabricData() {
  FakeQueryData data;
  data.series[TopQuery("fabric_pfc_pause_frames_total")] = Rates({
      {{{"direction", "rx"}, {"host", "gpu-node-001"}, {"interface", "eth0"}, {"priority", "3"}},
       5},
      {{{"direction", "rx"}, {"interface", "Ethernet1"}, {"priority", "3"}, {"switch", "spine-1"}},
       400},
      {{{"device", "mlx5_2"}, {"direction", "tx"}, {"host", "gpu-node-003"}, {"interface", "eth2"},
        {"leaf", "leaf-r2"}, {"priority", "3"}, {"rail", "2"}},
       800},
      {{{"direction", "rx"}, {"interface", "Ethernet8"}, {"leaf", "leaf-r2"}, {"priority", "3"},
        {"rail", "2"}, {"switch", "leaf-r2"}},
       790},
  });
  data.series[TopQuery("fabric_pfc_pause_frames_total", "30s")] = Rates({});
  for (const std::string& metric : kErrorCounters) data.series[TopQuery(metric)] = Rates({});
  data.series[TopQuery("fabric_rdma_symbol_errors_total")] =
      Rates({{{{"device", "mlx5_1"}, {"host", "gpu-node-005"}, {"port", "1"}}, 2}});
  data.series[TopQuery("fabric_rdma_port_receive_errors_total")] =
      Rates({{{{"device", "mlx5_1"}, {"host", "gpu-node-005"}, {"port", "1"}}, 1}});
  data.series[TopQuery("fabric_switch_interface_receive_errors_total")] =
      Rates({{{{"interface", "Ethernet4"}, {"switch", "leaf-r1"}}, 0.5}});
  data.series[TopQuery("fabric_switch_interface_transmit_discards_total")] =
      Rates({{{{"interface", "Ethernet4"}, {"switch", "leaf-r1"}}, 4}});
  data.series[TopQuery("fabric_switch_queue_ecn_marked_packets_total")] =
      Rates({{{{"interface", "Ethernet4"}, {"queue", "3"}, {"switch", "leaf-r1"}}, 1000}});
  data.series[TopQuery("fabric_roce_ecn_marked_packets_total")] =
      Rates({{{{"device", "mlx5_0"}, {"host", "gpu-node-002"}, {"port", "1"}}, 900}});
  data.series[TopQuery("fabric_roce_cnp_sent_total")] =
      Rates({{{{"device", "mlx5_0"}, {"host", "gpu-node-002"}, {"port", "1"}}, 850}});

  v1::QuerySeriesResponse selector;
  selector.set_query_type("selector");
  *selector.add_series() = MakeSeries(
      "fabric_rdma_port_transmit_bytes_total",
      {{"device", "mlx5_0"}, {"host", "gpu-node-001"}, {"port", "1"}},
      {{kT0, 1000}, {kT0 + kSecond, 1500}, {kT0 + 2 * kSecond, 2500}});
  *selector.add_series() = MakeSeries("fabric_rdma_port_transmit_bytes_total",
                                      {{"device", "mlx5_1"}, {"host", "gpu-node-001"}, {"port", "1"}},
                                      {});
  selector.set_matched(3);
  selector.set_truncated(true);
  data.series["fabric_rdma_port_transmit_bytes_total{host=\"gpu-node-001\"}"] = selector;
  data.series["rate(fabric_roce_cnp_sent_total[1m]) > 100"] =
      Rates({{{{"device", "mlx5_0"}, {"host", "gpu-node-002"}, {"port", "1"}}, 850},
             {{{"host", "gpu-node-003"}, {"rail", "3"}}, 120.5}});
  return data;
}

class CliFabricTest : public ::testing::Test {
 protected:
  CliFabricTest() : server_(FabricData()) {}
  void SetUp() override { ASSERT_FALSE(server_.address().empty()); }
  CliOptions Options() { return OptionsFor(server_); }
  // The command's --json output, parsed.
  nlohmann::json Json(const std::vector<std::string>& args) {
    CliOptions o = Options();
    o.json = true;
    CliRun r = RunCli(args, o);
    EXPECT_EQ(r.code, kExitOk) << r.err;
    return nlohmann::json::parse(r.out);
  }

  FakeQueryServer server_;
};

TEST_F(CliFabricTest, TopPfcRanksTheWorstPortsFirst) {
  CliOptions o = Options();
  o.limit = 3;
  CliRun r = RunCli({"top", "pfc"}, o);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out,
            "WHERE         PORT           PRIORITY  DIRECTION  RATE/s  RAIL  LEAF\n"
            "gpu-node-003  eth2 (mlx5_2)  3         tx         800     2     leaf-r2\n"
            "leaf-r2       Ethernet8      3         rx         790     2     leaf-r2\n"
            "spine-1       Ethernet1      3         rx         400     -     -\n");
  ASSERT_EQ(server_.series_requests().size(), 1u);
  EXPECT_EQ(server_.series_requests()[0].query(), TopQuery("fabric_pfc_pause_frames_total"));
}

TEST_F(CliFabricTest, TopJsonNamesHostOrSwitch) {
  nlohmann::json j = Json({"top", "pfc"});
  EXPECT_EQ(j["view"], "pfc");
  ASSERT_EQ(j["ports"].size(), 4u);  // the default limit is 10
  EXPECT_EQ(j["ports"][0]["host"], "gpu-node-003");
  EXPECT_EQ(j["ports"][0]["rate"], 800);
  EXPECT_EQ(j["ports"][0]["labels"]["rail"], "2");
  EXPECT_EQ(j["ports"][1]["switch"], "leaf-r2");
  EXPECT_EQ(j["ports"][3]["host"], "gpu-node-001");
}

TEST_F(CliFabricTest, TopErrorsAddsTheCountersOfEachPort) {
  CliRun r = RunCli({"top", "errors"}, Options());
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out,
            "WHERE         PORT       RATE/s  COUNTERS/s\n"
            "leaf-r1       Ethernet4  4.5     in_errors 0.5, out_discards 4\n"
            "gpu-node-005  mlx5_1/1   3       receive_errors 1, symbol_errors 2\n");
  std::vector<std::string> queries;
  for (const v1::QuerySeriesRequest& q : server_.series_requests()) queries.push_back(q.query());
  ASSERT_EQ(queries.size(), kErrorCounters.size());
  for (size_t i = 0; i < queries.size(); ++i) EXPECT_EQ(queries[i], TopQuery(kErrorCounters[i]));
}

TEST_F(CliFabricTest, TopEcnShowsQueuesAndNics) {
  CliRun r = RunCli({"top", "ecn"}, Options());
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out,
            "WHERE         PORT       QUEUE  COUNTER          DIRECTION  RATE/s\n"
            "leaf-r1       Ethernet4  3      ecn_marked       tx         1000\n"
            "gpu-node-002  mlx5_0/1   -      roce_ecn_marked  rx         900\n"
            "gpu-node-002  mlx5_0/1   -      cnp_sent         tx         850\n");
}

TEST_F(CliFabricTest, TopWindowAndEmptyResults) {
  CliOptions o = Options();
  o.window = "30s";
  CliRun r = RunCli({"top", "pfc"}, o);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, "No port sent or received PFC pause frames in the last 30s.\n");
  o.window = "soon";
  EXPECT_EQ(RunCli({"top", "pfc"}, o).code, kExitUsage);
  o.window = "1m";
  o.limit = 0;
  EXPECT_EQ(RunCli({"top", "pfc"}, o).code, kExitUsage);
  EXPECT_EQ(RunCli({"top"}, Options()).code, kExitUsage);
  EXPECT_EQ(RunCli({"top", "latency"}, Options()).code, kExitUsage);
}

TEST_F(CliFabricTest, SeriesSelectorTableAndWindow) {
  CliOptions o = Options();
  o.range = "10m";
  const int64_t before = absl::ToUnixNanos(absl::Now());
  CliRun r = RunCli({"series", "fabric_rdma_port_transmit_bytes_total{host=\"gpu-node-001\"}"}, o);
  const int64_t after = absl::ToUnixNanos(absl::Now());
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, StartsWith("SERIES  "));
  EXPECT_THAT(r.out, HasSubstr("fabric_rdma_port_transmit_bytes_total{device=\"mlx5_0\","
                               "host=\"gpu-node-001\",port=\"1\"}  3       1000   2500  "
                               "2024-05-01T12:00:02.000Z\n"));
  EXPECT_THAT(r.out, HasSubstr("port=\"1\"}  0       -      -     -\n"));
  EXPECT_THAT(r.err, HasSubstr("3 series matched; showing the first 2"));
  const v1::QuerySeriesRequest req = server_.series_requests()[0];
  EXPECT_GE(req.end_unix_nano(), before);
  EXPECT_LE(req.end_unix_nano(), after);
  EXPECT_EQ(req.end_unix_nano() - req.start_unix_nano(), 600 * kSecond);
}

TEST_F(CliFabricTest, SeriesStartAndEnd) {
  CliOptions o = Options();
  o.start = "2024-05-01T11:00:00Z";
  o.end = "2024-05-01T12:00:00Z";
  o.limit = 50;
  ASSERT_EQ(RunCli({"series", "fabric_rdma_port_transmit_bytes_total{host=\"gpu-node-001\"}"}, o)
                .code,
            kExitOk);
  const v1::QuerySeriesRequest req = server_.series_requests()[0];
  EXPECT_EQ(req.start_unix_nano(), kT0 - 3600 * kSecond);
  EXPECT_EQ(req.end_unix_nano(), kT0);
  EXPECT_EQ(req.limit(), 50u);
  o.range = "5m";  // with --start: one or the other
  EXPECT_EQ(RunCli({"series", "x"}, o).code, kExitUsage);
}

TEST_F(CliFabricTest, SeriesExpressionTableHasAColumnPerLabel) {
  // The query may come in several shell words.
  CliRun r = RunCli({"series", "rate(fabric_roce_cnp_sent_total[1m])", ">", "100"}, Options());
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out,
            "device  host          port  rail  VALUE\n"
            "mlx5_0  gpu-node-002  1     -     850\n"
            "-       gpu-node-003  -     3     120.5\n");
}

TEST_F(CliFabricTest, SeriesJsonAndErrors) {
  nlohmann::json j =
      Json({"series", "fabric_rdma_port_transmit_bytes_total{host=\"gpu-node-001\"}"});
  EXPECT_EQ(j["query_type"], "selector");
  EXPECT_EQ(j["series"][0]["points"].size(), 3u);
  EXPECT_EQ(j["series"][0]["points"][2]["value"], 2500);
  // The daemon refuses a query it cannot parse: invalid input.
  CliRun r = RunCli({"series", "rate(("}, Options());
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("refused the request"));
  EXPECT_EQ(RunCli({"series"}, Options()).code, kExitUsage);
}

}  // namespace
}  // namespace railwatch::testing
