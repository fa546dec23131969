// The daemon's map kept current (daemon/topology_watch.h): discovery from the series the
// agents send, a cable moved without a restart, the file pinning what it declares, conflicts
// as fabric_topology_mismatch, and the Query API's views of it.
#include "daemon/topology_watch.h"

#include <sstream>

#include "cli/commands.h"
#include "common/clock.h"
#include "common/vocabulary.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "query_test_server.h"

namespace railwatch::testing {
namespace {

using ::testing::HasSubstr;

class TopologyWatchTest : public ::testing::Test {
 protected:
  // Host gpu-1's two NICs, as its agent reports them.
  void ReportNics(const std::string& host) {
    for (int k = 0; k < 2; ++k) {
      Labels l = {{"host", host},
                  {"device", absl::StrCat("mlx5_", k)},
                  {"port", "1"},
                  {"netdev", absl::StrCat("eth", k)},
                  {"link_layer", "Ethernet"}};
      NormalizeLabels(l);
      Put("fabric_rdma_port_info", l);
    }
  }
  // What a switch port hears, as the switch agent reports it (openconfig-lldp).
  void SwitchHears(const std::string& sw, const std::string& port, const std::string& system,
                   const std::string& neighbor_port) {
    Labels l = {{"switch", sw},
                {"interface", port},
                {"neighbor_system", system},
                {"neighbor_port", neighbor_port}};
    NormalizeLabels(l);
    Put("fabric_lldp_neighbor_info", l);
  }
  void Put(const std::string& name, const Labels& l) {
    store_.Append(store_.Intern(name, l, TraitsOf(name, MetricKind::kGauge)), clock_.NowNanos(), 1);
  }
  void Advance() { clock_.Advance(absl::Seconds(10)); }

  std::string LeafPortOf(const std::string& host, const std::string& device) {
    Labels l = {{"host", host}, {"device", device}};
    fabric_.Enrich(l);
    const std::string* leaf = FindLabel(l, "leaf");
    const std::string* port = FindLabel(l, "leaf_port");
    const std::string* rail = FindLabel(l, "rail");
    if (leaf == nullptr || port == nullptr) return "-";
    return absl::StrCat(*leaf, "/", *port, " rail ", rail != nullptr ? *rail : "-");
  }

  FakeClock clock_;
  SeriesStore store_{SeriesStore::Options{.capacity = 600}};
  JobRegistry jobs_;
  FabricMap fabric_{nullptr, &jobs_};
};

TEST_F(TopologyWatchTest, TheMapComesFromTheAgentsAndFollowsAMovedCable) {
  TopologyWatch watch({}, nullptr, store_, fabric_, clock_);
  EXPECT_FALSE(watch.RunOnce());  // nothing reported yet: no map
  EXPECT_EQ(fabric_.topology(), nullptr);

  ReportNics("gpu-1");
  SwitchHears("leaf-a", "Ethernet0", "gpu-1", "eth0");
  SwitchHears("leaf-b", "Ethernet0", "gpu-1", "eth1");
  Advance();
  EXPECT_TRUE(watch.RunOnce());
  EXPECT_EQ(LeafPortOf("gpu-1", "mlx5_0"), "leaf-a/Ethernet0 rail 0");
  EXPECT_EQ(LeafPortOf("gpu-1", "mlx5_1"), "leaf-b/Ethernet0 rail 1");
  const uint64_t generation = fabric_.generation();
  const std::shared_ptr<const Topology> before = fabric_.topology();
  EXPECT_FALSE(watch.RunOnce());  // nothing changed: the map is not rebuilt
  EXPECT_EQ(fabric_.generation(), generation);

  // The cable of mlx5_1 moves to leaf-b's Ethernet8; Ethernet0's old report stays (switches
  // send LLDP on change): the newer report wins.
  Advance();
  SwitchHears("leaf-b", "Ethernet8", "gpu-1", "eth1");
  EXPECT_TRUE(watch.RunOnce());
  EXPECT_EQ(LeafPortOf("gpu-1", "mlx5_1"), "leaf-b/Ethernet8 rail 1");
  EXPECT_NE(fabric_.generation(), generation);
  // Whoever held the old map still has it as it was.
  ASSERT_NE(before->PeerOf("leaf-b", "Ethernet0"), nullptr);
  EXPECT_EQ(before->PeerOf("leaf-b", "Ethernet0")->system, "gpu-1");
  const TopologyWatch::View v = watch.view();
  EXPECT_EQ(v.changes, 2u);
  EXPECT_EQ(v.provenance.at("gpu-1/mlx5_1"), Provenance::kSwitchEnd);
  EXPECT_EQ(v.declared, nullptr);
}

TEST_F(TopologyWatchTest, TheFilePinsAndAConflictIsAMismatchSeriesUntilItIsFixed) {
  absl::StatusOr<Topology> file = Topology::LoadString(R"(
switches: [{name: leaf-a, role: leaf}, {name: leaf-b, role: leaf}]
hosts:
  - name: gpu-1
    nics:
      - {device: mlx5_0, netdev: eth0, rail: 0, switch: leaf-a, port: Ethernet0}
      - {device: mlx5_1, netdev: eth1, rail: 7, switch: leaf-b, port: Ethernet4}
)",
                                                       "topology.yaml");
  ASSERT_TRUE(file.ok()) << file.status();
  auto declared = std::make_shared<const Topology>(std::move(*file));
  fabric_.Set(declared);
  TopologyWatch watch({}, declared, store_, fabric_, clock_);
  ReportNics("gpu-1");
  SwitchHears("leaf-a", "Ethernet0", "gpu-1", "eth0");
  SwitchHears("leaf-b", "Ethernet0", "gpu-1", "eth1");  // the file says Ethernet4
  Advance();
  watch.RunOnce();
  // The file's view is kept: rail 7 and port Ethernet4.
  EXPECT_EQ(LeafPortOf("gpu-1", "mlx5_1"), "leaf-b/Ethernet4 rail 7");
  const std::vector<SeriesRef> mismatch = store_.Select("fabric_topology_mismatch");
  ASSERT_EQ(mismatch.size(), 2u);  // the switch port, the rail
  for (SeriesRef ref : mismatch) {
    const SeriesMeta meta = store_.Meta(ref);
    EXPECT_EQ(*FindLabel(meta.labels, "host"), "gpu-1");
    EXPECT_EQ(*FindLabel(meta.labels, "device"), "mlx5_1");
    EXPECT_EQ(store_.Latest(ref)->value, 1);
  }
  const TopologyWatch::View v = watch.view();
  EXPECT_EQ(v.provenance.at("gpu-1/mlx5_1"), Provenance::kDeclared);
  EXPECT_EQ(v.provenance.at("gpu-1/mlx5_0"), Provenance::kSwitchEnd);

  // Someone moves the cable to where the file says: the switch port conflict ends (the rail
  // the file pins stays a difference: rail 7 is a name, not an index).
  Advance();
  SwitchHears("leaf-b", "Ethernet4", "gpu-1", "eth1");
  watch.RunOnce();
  size_t on = 0;
  for (SeriesRef ref : store_.Select("fabric_topology_mismatch")) {
    const SeriesMeta meta = store_.Meta(ref);
    if (store_.Latest(ref)->value == 1) {
      ++on;
      EXPECT_EQ(*FindLabel(meta.labels, "what"), "rail");
    } else {
      EXPECT_EQ(*FindLabel(meta.labels, "what"), "switch port");
    }
  }
  EXPECT_EQ(on, 1u);
}

TEST(TopologyWatchQueryTest, TheQueryApiShowsEachViewItsYamlAndTheDifferences) {
  QueryTestServer::Options options;
  options.topology_watch = true;
  QueryTestServer server(options);
  // gpu-node-001's mlx5_0 is heard on leaf-1 Ethernet8; the file says Ethernet0.
  Labels nic = {{"host", "gpu-node-001"}, {"device", "mlx5_0"}, {"port", "1"},
                {"netdev", "eth0"}};
  NormalizeLabels(nic);
  server.store.Append(server.store.Intern("fabric_rdma_port_info", nic, MetricKind::kGauge),
                      server.clock.NowNanos(), 1);
  Labels port = {{"switch", "leaf-1"}, {"interface", "Ethernet8"},
                 {"neighbor_system", "gpu-node-001"}, {"neighbor_port", "eth0"}};
  NormalizeLabels(port);
  server.store.Append(server.store.Intern("fabric_lldp_neighbor_info", port, MetricKind::kGauge),
                      server.clock.NowNanos(), 1);
  server.topology_watch->RunOnce();

  auto ask = [&](const std::string& view, v1::TopologyResponse* r) {
    grpc::ClientContext ctx;
    v1::TopologyRequest request;
    request.set_view(view);
    return server.stub().Topology(&ctx, request, r);
  };
  v1::TopologyResponse effective, discovered, declared, bad;
  ASSERT_TRUE(ask("", &effective).ok());
  EXPECT_EQ(effective.view(), "effective");
  EXPECT_EQ(effective.source(), "file+discovered");
  ASSERT_EQ(effective.hosts(0).nics(0).switch_port(), "Ethernet0");  // the file pins it
  EXPECT_EQ(effective.hosts(0).nics(0).provenance(), "declared");
  EXPECT_THAT(effective.yaml(), HasSubstr("switch: leaf-1, port: Ethernet0}  # declared"));
  ASSERT_TRUE(ask("discovered", &discovered).ok());
  ASSERT_EQ(discovered.hosts_size(), 1);
  EXPECT_EQ(discovered.hosts(0).nics(0).switch_port(), "Ethernet8");
  EXPECT_EQ(discovered.hosts(0).nics(0).provenance(), "switch end");
  EXPECT_GT(discovered.discovered_unix_nano(), 0);
  ASSERT_TRUE(ask("declared", &declared).ok());
  EXPECT_EQ(declared.hosts_size(), 2);
  EXPECT_EQ(declared.hosts(0).nics(0).provenance(), "");
  bool conflict = false;
  for (const v1::TopologyDifference& d : effective.differences()) {
    if (d.where() == "gpu-node-001/mlx5_0" && d.what() == "switch port") {
      conflict = d.conflict();
      EXPECT_EQ(d.declared(), "leaf-1/Ethernet0");
      EXPECT_EQ(d.discovered(), "leaf-1/Ethernet8");
    }
  }
  EXPECT_TRUE(conflict);
  const grpc::Status s = ask("guessed", &bad);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("effective, discovered or declared"));
}

// The CLI on the same server: the map with its FROM column, --diff, -o yaml that reads back.
TEST(TopologyWatchQueryTest, TheCliShowsTheMapTheDiffAndYamlThatReadsBack) {
  QueryTestServer::Options options;
  options.topology_watch = true;
  QueryTestServer server(options);
  Labels nic = {{"host", "gpu-node-001"}, {"device", "mlx5_0"}, {"port", "1"},
                {"netdev", "eth0"}};
  NormalizeLabels(nic);
  server.store.Append(server.store.Intern("fabric_rdma_port_info", nic, MetricKind::kGauge),
                      server.clock.NowNanos(), 1);
  Labels port = {{"switch", "leaf-1"}, {"interface", "Ethernet8"},
                 {"neighbor_system", "gpu-node-001"}, {"neighbor_port", "eth0"}};
  NormalizeLabels(port);
  server.store.Append(server.store.Intern("fabric_lldp_neighbor_info", port, MetricKind::kGauge),
                      server.clock.NowNanos(), 1);
  server.topology_watch->RunOnce();

  CliOptions o;
  o.server = server.address();
  std::ostringstream out, err;
  ASSERT_EQ(RunCommand({"topology"}, o, out, err), kExitOk) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("Map from: file+discovered"));
  EXPECT_THAT(out.str(), HasSubstr("FROM"));
  EXPECT_THAT(out.str(), HasSubstr("1 conflicts between the file and discovery"));

  out.str("");
  o.diff = true;
  ASSERT_EQ(RunCommand({"topology"}, o, out, err), kExitOk) << err.str();
  EXPECT_THAT(out.str(), ::testing::ContainsRegex(
                             "gpu-node-001/mlx5_0 +switch port +leaf-1/Ethernet0 +leaf-1/Ethernet8 +yes"));

  out.str("");
  o.diff = false;
  o.discovered = true;
  o.output = "yaml";
  ASSERT_EQ(RunCommand({"topology"}, o, out, err), kExitOk) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("# railwatch topology --discovered -o yaml"));
  absl::StatusOr<Topology> back = Topology::LoadString(out.str(), "stdout");
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << out.str();
  ASSERT_NE(back->PeerOf("leaf-1", "Ethernet8"), nullptr);
  EXPECT_EQ(back->PeerOf("leaf-1", "Ethernet8")->device, "mlx5_0");

  o.declared = true;  // with --discovered: a usage error
  EXPECT_EQ(RunCommand({"topology"}, o, out, err), kExitUsage);
  o.declared = false;
  o.output = "json";
  EXPECT_EQ(RunCommand({"topology"}, o, out, err), kExitUsage);
}

}  // namespace
}  // namespace railwatch::testing
