// Rail groups (--hosts_per_leaf): the plan, the files written for it, and the faults that
// name a group's leaf.
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "sim/switch_model.h"
#include "unit/sim_gnmi/sim_gnmi_fixture.h"
#include "sim/topology_writer.h"
#include "support/ttar.h"
#include "topology/topology.h"
#include "yaml-cpp/yaml.h"

namespace railwatch::sim {
namespace switch_groups_test {

const absl::Time kStart = absl::FromUnixSeconds(1'800'000'000);

// 5 hosts x 2 NICs in groups of 2 (the last group holds one host), 2 spines.
SwitchFabric::Options Groups() {
  SwitchFabric::Options o;
  o.hosts = 5;
  o.nics_per_host = 2;
  o.hosts_per_leaf = 2;
  o.spines = 2;
  o.dialects = {"sonic", "arista-eos"};
  return o;
}

std::unique_ptr<SwitchFabric> Build(const SwitchFabric::Options& o) {
  absl::StatusOr<std::unique_ptr<SwitchFabric>> f = SwitchFabric::Create(o, kStart);
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? std::move(*f) : nullptr;
}

TEST(SwitchGroups, OneLeafPerRailAndGroupEachHostOnItsGroupPosition) {
  auto f = Build(Groups());
  ASSERT_NE(f, nullptr);
  const std::vector<SimSwitch>& sw = f->switches();
  ASSERT_EQ(f->leaves(), 6);
  ASSERT_EQ(sw.size(), 8u);
  const std::vector<std::string> names = {"leaf-g0-r0", "leaf-g0-r1", "leaf-g1-r0", "leaf-g1-r1",
                                          "leaf-g2-r0", "leaf-g2-r1", "spine-0",    "spine-1"};
  for (size_t i = 0; i < names.size(); ++i) EXPECT_EQ(sw[i].name, names[i]);
  EXPECT_EQ(sw[3].group, 1);
  EXPECT_EQ(sw[3].rail, 1);
  EXPECT_EQ(sw[3].dialect, Dialect::kAristaEos);
  EXPECT_EQ(sw[6].group, -1);
  // Host 3 is the first of group 1: panel position 0 on leaf-g1-r<k>; host 4 position 1.
  EXPECT_EQ(f->LeafPortOf("gpu-node-003", "mlx5_1"), std::make_pair(3, 0));
  EXPECT_EQ(f->LeafPortOf("gpu-node-004", "mlx5_0"), std::make_pair(2, 1));
  EXPECT_EQ(f->LeafPortOf("gpu-node-005", "mlx5_1"), std::make_pair(5, 0));
  EXPECT_EQ(f->LeafPortOf("gpu-node-006", "mlx5_0"), std::make_pair(-1, -1));
  EXPECT_EQ(f->LeafPortOf("gpu-node-003", "mlx5_2"), std::make_pair(-1, -1));
  EXPECT_EQ(sw[2].ports[1].name, "Ethernet4");  // SONiC, position 1
  EXPECT_EQ(sw[2].ports[1].peer, "gpu-node-004");
  EXPECT_EQ(sw[3].ports[0].name, "Ethernet1");  // EOS, position 0
  // Uplinks follow the group's panel (positions 2 and 3), even on the last, half-empty group.
  ASSERT_EQ(sw[4].ports.size(), 3u);
  EXPECT_EQ(sw[4].ports[0].peer, "gpu-node-005");
  EXPECT_TRUE(sw[4].ports[1].uplink);
  EXPECT_EQ(sw[4].ports[1].name, "Ethernet8");
  EXPECT_EQ(sw[4].ports[2].name, "Ethernet12");
  EXPECT_EQ(sw[4].ports[2].peer, "spine-1");
  // Spine port = leaf index: every leaf on its own spine port, both ends agreeing.
  for (int s = 6; s < 8; ++s) {
    ASSERT_EQ(sw[s].ports.size(), 6u);
    std::set<std::string> port_names;
    for (int l = 0; l < 6; ++l) {
      const SwitchPort& p = sw[s].ports[l];
      port_names.insert(p.name);
      EXPECT_EQ(p.peer, names[l]);
      const SwitchPort& up = sw[l].ports[p.peer_port_index];
      EXPECT_TRUE(up.uplink);
      EXPECT_EQ(up.peer, sw[s].name);
      EXPECT_EQ(up.peer_port, p.name);
      EXPECT_EQ(p.peer_port, up.name);
    }
    EXPECT_EQ(port_names.size(), 6u);
  }
  EXPECT_EQ(sw[6].ports[5].name, "Ethernet20");  // spine-0 runs SONiC: position 5
}

TEST(SwitchGroups, TopologyAndTargetsFilesNameTheGroupLeaves) {
  railwatch::testing::TempDir dir;
  SwitchFabric::Options o = Groups();
  o.miswires.push_back({"leaf-g1-r0", "Ethernet0"});
  auto f = Build(o);
  ASSERT_NE(f, nullptr);
  const std::string topo = dir.path() + "/topology.yaml";
  ASSERT_TRUE(WriteTopologyFile(topo, f->switches(), 5, 2, {{"train", 1, 5}}).ok());
  absl::StatusOr<Topology> t = Topology::LoadFile(topo);
  ASSERT_TRUE(t.ok()) << t.status();
  YAML::Node y = YAML::LoadFile(topo);
  YAML::Node nic = y["hosts"][3]["nics"][1];  // gpu-node-004/mlx5_1
  EXPECT_EQ(nic["switch"].as<std::string>(), "leaf-g1-r1");
  EXPECT_EQ(nic["port"].as<std::string>(), "Ethernet2");
  EXPECT_EQ(nic["rail"].as<int>(), 1);
  EXPECT_EQ(y["switches"][4]["links"][1]["peer_port"].as<std::string>(), "Ethernet5");
  // The miswired port reports the other host of its group.
  EXPECT_EQ(f->switches()[2].ports[0].lldp_system_name, "gpu-node-004");

  std::vector<std::string> addresses;
  for (size_t i = 0; i < f->switches().size(); ++i) addresses.push_back(absl::StrCat("127.0.0.1:", 50000 + i));
  const std::string targets = dir.path() + "/targets.yaml";
  ASSERT_TRUE(WriteTargetsFile(targets, f->switches(), addresses, {}).ok());
  YAML::Node tt = YAML::LoadFile(targets);
  ASSERT_EQ(tt["targets"].size(), 8u);
  EXPECT_EQ(tt["targets"][5]["name"].as<std::string>(), "leaf-g2-r1");
  EXPECT_EQ(tt["targets"][5]["profile"].as<std::string>(), "arista-eos");
}

using testing::CountersOf;
using testing::EveryNic;

TEST(SwitchGroups, NicsDriveTheirGroupLeafAndAnEcnMisconfigHitsOneLeaf) {
  SwitchFabric::Options o = Groups();
  // The switch side finds the leaf by name (the ecn_misconfig kind fills group and rail).
  o.ecn_misconfigs.push_back({"leaf-g1-r0", 0, absl::Seconds(1), 3});
  auto f = Build(o);
  ASSERT_NE(f, nullptr);
  // 0.8 of 400 Gb/s (4 GB per 100 ms) on every NIC for 10 s.
  for (int i = 1; i <= 100; ++i) {
    ASSERT_TRUE(f->Update(kStart + absl::Milliseconds(100 * i), EveryNic(5, 2, 4'000'000'000ull * i, 4'000'000'000ull * i)).ok());
  }
  EXPECT_EQ(CountersOf(*f, 3, 1).in_octets, 400'000'000'000ull) << "gpu-node-004/mlx5_1";
  for (int l = 0; l < 6; ++l) {
    const PortCounters host = CountersOf(*f, l, 0);
    const double pauses_per_s = static_cast<double>(host.out_pfc[kRocePriority]) / 10;
    if (l == 2) {
      EXPECT_GT(pauses_per_s, 300) << "leaf-g1-r0 pauses its NICs";
    } else {
      EXPECT_LT(pauses_per_s, 10) << "leaf " << l << " pauses at the benign rate";
    }
  }

  // A leaf that the plan does not have is refused with the range that exists.
  o.ecn_misconfigs = {{"leaf-g3-r0", 0, absl::Seconds(1), 3}};
  absl::StatusOr<std::unique_ptr<SwitchFabric>> bad = SwitchFabric::Create(o, kStart);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("leaf-g3-r0 is not a simulated leaf (leaf-g0-r0 .. leaf-g2-r1)"),
            std::string::npos)
      << bad.status();
  o.ecn_misconfigs = {{"leaf-r0", 0, absl::Seconds(1), 3}};
  EXPECT_FALSE(SwitchFabric::Create(o, kStart).ok()) << "no leaf-r<k> in a grouped fabric";
  o.ecn_misconfigs.clear();
  o.hosts_per_leaf = -1;
  EXPECT_FALSE(SwitchFabric::Create(o, kStart).ok());
}

}  // namespace
}  // namespace railwatch::sim
