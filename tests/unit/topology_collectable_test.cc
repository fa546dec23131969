#include "exporters/topology_collectable.h"

#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "logs/log_parser.h"
#include "prometheus/text_serializer.h"

namespace railwatch {
namespace topology_collectable_test {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Key;
using ::testing::Not;
using ::testing::Pair;

// Two leaves and a spine; leaf-r0's uplink is written on its own end, leaf-r1's on both ends;
// gpu-node-002's second NIC is on no rail and not cabled.
constexpr char kTopology[] = R"(
switches:
  - name: leaf-r0
    role: leaf
    dialect: sonic
    links:
      - {port: Ethernet64, peer: spine-0, peer_port: Ethernet0}
  - name: leaf-r1
    role: leaf
    dialect: arista-eos
    links:
      - {port: Ethernet65, peer: spine-0, peer_port: Ethernet4}
  - name: spine-0
    role: spine
    dialect: arista-eos
    links:
      - {port: Ethernet4, peer: leaf-r1, peer_port: Ethernet65}
hosts:
  - name: gpu-node-001
    nics:
      - {device: mlx5_0, netdev: enp1s0, rail: 0, switch: leaf-r0, port: Ethernet0}
      - {device: mlx5_1, netdev: enp2s0, rail: 1, switch: leaf-r1, port: Ethernet1}
  - name: gpu-node-002
    nics:
      - {device: mlx5_0, netdev: enp1s0, rail: 0, switch: leaf-r0, port: Ethernet4}
      - {device: mlx5_1}
jobs:
  - name: train
    hosts: [gpu-node-001, gpu-node-002]
    gpus_per_host: 4
)";

// Every sample as `name{label="value",...}` (labels in the order the collectable wrote them)
// -> value.
std::map<std::string, double> Samples(const std::vector<prometheus::MetricFamily>& families) {
  std::map<std::string, double> out;
  for (const prometheus::MetricFamily& f : families) {
    for (const prometheus::ClientMetric& m : f.metric) {
      std::vector<std::string> labels;
      for (const auto& l : m.label) labels.push_back(absl::StrCat(l.name, "=\"", l.value, "\""));
      const double value =
          f.type == prometheus::MetricType::Counter ? m.counter.value : m.gauge.value;
      out[absl::StrCat(f.name, "{", absl::StrJoin(labels, ","), "}")] = value;
    }
  }
  return out;
}

std::shared_ptr<const Topology> LoadTopology() {
  absl::StatusOr<Topology> t = Topology::LoadString(kTopology, "topology.yaml");
  EXPECT_TRUE(t.ok()) << t.status();
  return std::make_shared<const Topology>(std::move(*t));
}

TEST(TopologyCollectableTest, NicsWithRailsAndSwitchPorts) {
  std::shared_ptr<const Topology> topology = LoadTopology();
  JobRegistry jobs;
  const std::map<std::string, double> s = Samples(TopologyCollectable(topology, jobs).Collect());
  EXPECT_THAT(s, Contains(Pair("railwatch_topology_nic_info{host=\"gpu-node-001\","
                               "device=\"mlx5_1\",netdev=\"enp2s0\",rail=\"1\","
                               "switch=\"leaf-r1\",switch_port=\"Ethernet1\"}",
                               1)));
  // Not on a rail, not cabled: empty values, which Prometheus stores as absent labels.
  EXPECT_THAT(s, Contains(Pair("railwatch_topology_nic_info{host=\"gpu-node-002\","
                               "device=\"mlx5_1\",netdev=\"\",rail=\"\",switch=\"\","
                               "switch_port=\"\"}",
                               1)));
  EXPECT_THAT(s, Contains(Pair("railwatch_topology_switch_info{switch=\"spine-0\","
                               "role=\"spine\",dialect=\"arista-eos\"}",
                               1)));
}

TEST(TopologyCollectableTest, EachCableOnceFromEachEnd) {
  std::shared_ptr<const Topology> topology = LoadTopology();
  JobRegistry jobs;
  std::vector<std::string> links;
  for (const auto& [series, value] : Samples(TopologyCollectable(topology, jobs).Collect())) {
    if (series.rfind("railwatch_topology_link_info{", 0) == 0) links.push_back(series);
  }
  // leaf-r1 <-> spine-0 is written on both ends and still gives two series, not four.
  EXPECT_THAT(links,
              ElementsAre("railwatch_topology_link_info{switch=\"leaf-r0\",interface="
                          "\"Ethernet64\",peer_switch=\"spine-0\",peer_interface=\"Ethernet0\"}",
                          "railwatch_topology_link_info{switch=\"leaf-r1\",interface="
                          "\"Ethernet65\",peer_switch=\"spine-0\",peer_interface=\"Ethernet4\"}",
                          "railwatch_topology_link_info{switch=\"spine-0\",interface="
                          "\"Ethernet0\",peer_switch=\"leaf-r0\",peer_interface=\"Ethernet64\"}",
                          "railwatch_topology_link_info{switch=\"spine-0\",interface="
                          "\"Ethernet4\",peer_switch=\"leaf-r1\",peer_interface=\"Ethernet65\"}"));
}

std::vector<std::string> FixtureLines(const std::string& name) {
  std::ifstream in(std::string(RAILWATCH_FIXTURES_DIR) + "/logs/" + name);
  EXPECT_TRUE(in) << name;
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// A log through the real parser, as the host agent on `host` would send its events.
std::vector<StoredEvent> ParseLog(const std::vector<std::string>& lines, const std::string& host,
                                  int64_t time_unix_nano) {
  logs::LogParser parser("test.log");
  std::vector<logs::LogEvent> parsed;
  for (const std::string& line : lines) parser.Feed(line, parsed);
  parser.Finish(parsed);
  std::vector<StoredEvent> out;
  for (logs::LogEvent& e : parsed) {
    StoredEvent s;
    s.kind = e.kind;
    s.time_unix_nano = e.time_unix_nano != 0 ? e.time_unix_nano : time_unix_nano;
    if (!host.empty()) s.labels = {{"host", host}};
    s.attributes = std::move(e.fields);
    out.push_back(std::move(s));
  }
  return out;
}

TEST(TopologyCollectableTest, StaticAndLearntJobs) {
  std::shared_ptr<const Topology> topology = LoadTopology();
  JobRegistry jobs;
  jobs.SetStatic(topology->jobs());
  // A pasted two-node NCCL 2.11 log (no commId, no host label): each host's communicator is
  // learnt as a job of its own, with the host its line prefix names.
  for (const StoredEvent& e :
       ParseLog(FixtureLines("nccl_01_v2.11.4_net_socket_2node_allreduce_perf.log"), "", 1'000)) {
    jobs.Observe(e);
  }
  const std::map<std::string, double> s = Samples(TopologyCollectable(topology, jobs).Collect());
  EXPECT_THAT(s, Contains(Pair("railwatch_job_host_info{training_job=\"train\",host=\"gpu-node-002\","
                               "source=\"topology\"}",
                               1)));
  EXPECT_THAT(s, Contains(Pair("railwatch_job_gpus{training_job=\"train\",source=\"topology\"}", 8)));
  EXPECT_THAT(s, Contains(Pair("railwatch_job_host_info{training_job=\"nccl-ip-10-0-139-244-7f85a4000fa0\","
                               "host=\"ip-10-0-139-244\",source=\"nccl\"}",
                               1)));
  EXPECT_THAT(s, Contains(Pair("railwatch_job_gpus{training_job=\"nccl-ip-10-0-139-244-7f85a4000fa0\","
                               "source=\"nccl\"}",
                               2)));
}

TEST(TopologyCollectableTest, WithoutTopologyOnlyJobs) {
  JobRegistry jobs;
  TopologyCollectable collectable(nullptr, jobs);
  std::vector<std::string> names;
  for (const prometheus::MetricFamily& f : collectable.Collect()) names.push_back(f.name);
  EXPECT_THAT(names, ElementsAre("railwatch_job_host_info", "railwatch_job_gpus"));
  EXPECT_THAT(Samples(collectable.Collect()), IsEmpty());
}

StoredEvent Summary(const std::string& host, const std::string& test, const std::string& busbw,
                    int64_t time_unix_nano) {
  StoredEvent e;
  e.kind = "nccltests.summary";
  e.time_unix_nano = time_unix_nano;
  e.labels = {{"host", host}};
  if (!test.empty()) e.attributes.emplace_back("test", test);
  e.attributes.emplace_back("avg_busbw_gbps", busbw);
  e.attributes.emplace_back("complete", busbw.empty() ? "0" : "1");
  return e;
}

constexpr char kBusbw[] = "fabric_nccl_tests_bus_bandwidth_bytes_per_second";

std::string BusbwSeries(const std::string& host, const std::string& test) {
  return absl::StrCat(kBusbw, "{host=\"", host, "\",test=\"", test, "\"}");
}

TEST(NcclTestsCollectableTest, RealRunsThroughTheParser) {
  EventStore events(EventStore::Options{});
  // A whole single-GPU all_reduce_perf run (header, "# Avg bus bandwidth : 0"), then the end
  // of a 16-rank table whose header was cut off (no test name: "unknown").
  for (const char* log : {"nccltests_05_single_node_a10g_header_error_column.txt",
                          "nccltests_01_allreduce_2node_h100_16ranks_table.txt"}) {
    for (StoredEvent& e : ParseLog(FixtureLines(log), "gpu-node-001", 5'000'000'000)) {
      events.Append(std::move(e));
    }
  }
  const std::map<std::string, double> s = Samples(NcclTestsCollectable(events).Collect());
  ASSERT_EQ(s.count(BusbwSeries("gpu-node-001", "unknown")), 1u)
      << absl::StrJoin(s, "\n", absl::PairFormatter("="));
  EXPECT_DOUBLE_EQ(s.at(BusbwSeries("gpu-node-001", "unknown")), 406.034e9);
  ASSERT_EQ(s.count(BusbwSeries("gpu-node-001", "all_reduce_perf")), 1u);
  EXPECT_DOUBLE_EQ(s.at(BusbwSeries("gpu-node-001", "all_reduce_perf")), 0);
  EXPECT_DOUBLE_EQ(s.at("fabric_nccl_tests_last_run_timestamp_seconds{host=\"gpu-node-001\","
                        "test=\"unknown\"}"),
                   5.0);
}

TEST(NcclTestsCollectableTest, LatestRunPerHostAndTest) {
  EventStore events(EventStore::Options{});
  NcclTestsCollectable collectable(events);
  events.Append(Summary("h1", "all_reduce_perf", "100.5", 10));
  events.Append(Summary("h1", "all_gather_perf", "50", 11));
  events.Append(Summary("h2", "", "75", 12));
  EXPECT_DOUBLE_EQ(Samples(collectable.Collect()).at(BusbwSeries("h1", "all_reduce_perf")),
                   100.5e9);

  events.Append(Summary("h1", "all_reduce_perf", "200", 20));
  // An older run replayed after an agent's reconnect does not replace the newer one.
  events.Append(Summary("h1", "all_reduce_perf", "1", 15));
  // A run cut short has no average: the previous result stays.
  events.Append(Summary("h1", "all_gather_perf", "", 30));
  const std::map<std::string, double> s = Samples(collectable.Collect());
  EXPECT_DOUBLE_EQ(s.at(BusbwSeries("h1", "all_reduce_perf")), 200e9);
  EXPECT_DOUBLE_EQ(s.at(BusbwSeries("h1", "all_gather_perf")), 50e9);
  EXPECT_DOUBLE_EQ(s.at(BusbwSeries("h2", "unknown")), 75e9);
  EXPECT_DOUBLE_EQ(s.at("railwatch_nccl_tests_invalid_summaries_total{}"), 0);
}

TEST(NcclTestsCollectableTest, ResultsOutliveTheEventLog) {
  EventStore events(EventStore::Options{.capacity = 2});
  NcclTestsCollectable collectable(events);
  events.Append(Summary("h1", "all_reduce_perf", "300", 10));
  EXPECT_THAT(Samples(collectable.Collect()), Contains(Key(BusbwSeries("h1", "all_reduce_perf"))));
  for (int i = 0; i < 5; ++i) {
    StoredEvent other;
    other.kind = "nccl.comm_init";
    other.time_unix_nano = 100 + i;
    events.Append(std::move(other));
  }
  ASSERT_EQ(events.size(), 2u);
  EXPECT_DOUBLE_EQ(Samples(collectable.Collect()).at(BusbwSeries("h1", "all_reduce_perf")), 300e9);
}

TEST(NcclTestsCollectableTest, UnreadableSummariesAreCountedAndLeftOut) {
  EventStore events(EventStore::Options{});
  NcclTestsCollectable collectable(events);
  events.Append(Summary("h1", "all_reduce_perf", "fast", 10));
  events.Append(Summary("", "all_reduce_perf", "10", 11));  // no host label
  events.Append(Summary("h1", "all_reduce_perf", "-3", 12));
  events.Append(Summary("h2", "all_reduce_perf", "12.5", 13));
  const std::map<std::string, double> s = Samples(collectable.Collect());
  EXPECT_DOUBLE_EQ(s.at("railwatch_nccl_tests_invalid_summaries_total{}"), 3);
  EXPECT_THAT(s, Not(Contains(Key(BusbwSeries("h1", "all_reduce_perf")))));
  EXPECT_DOUBLE_EQ(s.at(BusbwSeries("h2", "all_reduce_perf")), 12.5e9);
  // Counted once, not again at the next scrape.
  EXPECT_DOUBLE_EQ(
      Samples(collectable.Collect()).at("railwatch_nccl_tests_invalid_summaries_total{}"), 3);
}

TEST(NcclTestsCollectableTest, SerialisesAsPrometheusText) {
  EventStore events(EventStore::Options{});
  events.Append(Summary("h1", "all_reduce_perf", "100", 10));
  const std::string text =
      prometheus::TextSerializer().Serialize(NcclTestsCollectable(events).Collect());
  EXPECT_THAT(text, ::testing::HasSubstr(
                        "# TYPE fabric_nccl_tests_bus_bandwidth_bytes_per_second gauge\n"
                        "fabric_nccl_tests_bus_bandwidth_bytes_per_second{host=\"h1\","
                        "test=\"all_reduce_perf\"} 100000000000\n"));
  EXPECT_THAT(text, ::testing::HasSubstr("railwatch_nccl_tests_invalid_summaries_total 0\n"));
}

}  // namespace
}  // namespace railwatch
