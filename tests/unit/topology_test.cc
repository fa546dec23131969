#include "topology/topology.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "topology/lldp_check.h"

namespace railwatch {
namespace topology_test {

using ::testing::HasSubstr;

constexpr char kGood[] = R"(
switches:
  - {name: leaf-r0, role: leaf, dialect: sonic,
     links: [{port: Ethernet64, peer: spine-0, peer_port: Ethernet0}]}
  - {name: spine-0, role: spine, dialect: arista-eos}
hosts:
  - name: gpu-node-001
    nics:
      - {device: mlx5_0, netdev: enp12s0np0, rail: 0, switch: leaf-r0, port: Ethernet0}
      - {device: mlx5_1, netdev: enp13s0np0, rail: 1}
)";

TEST(TopologyTest, LoadsHostsSwitchesAndPortPeers) {
  absl::StatusOr<Topology> t = Topology::LoadString(kGood, "topo.yaml");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->hosts().size(), 1u);
  EXPECT_EQ(t->hosts()[0].nics[0].rail, 0);
  EXPECT_EQ(t->hosts()[0].nics[1].switch_name, "");
  ASSERT_EQ(t->switches().size(), 2u);

  const TopologyPortPeer* p = t->PeerOf("leaf-r0", "Ethernet0");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->kind, TopologyPortPeer::Kind::kHost);
  EXPECT_EQ(p->system, "gpu-node-001");
  EXPECT_EQ(p->port, "enp12s0np0");
  EXPECT_EQ(p->device, "mlx5_0");
  // A link written on one side is known from both.
  const TopologyPortPeer* up = t->PeerOf("spine-0", "Ethernet0");
  ASSERT_NE(up, nullptr);
  EXPECT_EQ(up->system, "leaf-r0");
  EXPECT_EQ(up->port, "Ethernet64");
  EXPECT_EQ(t->PeerOf("leaf-r0", "Ethernet4"), nullptr);
}

TEST(TopologyTest, ReportsEveryProblemWithFileLineColumn) {
  constexpr char kBad[] = R"(switches:
  - {name: leaf-r0}
  - {name: leaf-r0}
  - {name: leaf-r1, links: [{port: Ethernet1, peer: nowhere, peer_port: Ethernet9}]}
hosts:
  - name: h1
    nics:
      - {device: mlx5_0, rail: -2, switch: leaf-r9, port: Ethernet0}
      - {device: mlx5_0, switch: leaf-r0}
      - {device: mlx5_1, switch: leaf-r0, port: Ethernet4, colour: blue}
  - name: h2
    nics:
      - {device: mlx5_0, switch: leaf-r0, port: Ethernet4}
)";
  absl::StatusOr<Topology> t = Topology::LoadString(kBad, "bad.yaml");
  ASSERT_FALSE(t.ok());
  const std::string msg(t.status().message());
  EXPECT_THAT(msg, HasSubstr("bad.yaml:3:12: error[duplicate]: switch `leaf-r0` is defined twice"));
  EXPECT_THAT(msg, HasSubstr("error[unknown-switch]: link from leaf-r1/Ethernet1 names switch `nowhere`"));
  EXPECT_THAT(msg, HasSubstr("bad.yaml:8:32: error[bad-value]: rail `-2` is not a whole number >= 0"));
  EXPECT_THAT(msg, HasSubstr("error[unknown-switch]: NIC h1/mlx5_0 plugs into switch `leaf-r9`"));
  EXPECT_THAT(msg, HasSubstr("bad.yaml:9:9: error[duplicate]: NIC `mlx5_0` is listed twice on h1"));
  EXPECT_THAT(msg, HasSubstr("bad.yaml:9:9: error[bad-value]: a NIC's `switch` and `port` go together"));
  EXPECT_THAT(msg, HasSubstr("bad.yaml:10:60: error[unknown-key]: unknown key `colour` in a NIC"));
  EXPECT_THAT(msg, HasSubstr("bad.yaml:13:9: error[port-in-use]: switch port leaf-r0/Ethernet4 is used by h1/mlx5_1 and by h2/mlx5_0"));
}

TEST(TopologyTest, SyntaxErrorAndMissingFile) {
  absl::StatusOr<Topology> t = Topology::LoadString("hosts: [\n  {name: a", "x.yaml");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("x.yaml:"));
  absl::StatusOr<Topology> missing = Topology::LoadFile("/nonexistent/topology.yaml");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
}

TEST(LldpCheckTest, MatchesShortNameFqdnNetdevDeviceAndMac) {
  absl::StatusOr<Topology> t = Topology::LoadString(kGood, "topo.yaml");
  ASSERT_TRUE(t.ok()) << t.status();
  using V = LldpCheck::Verdict;
  EXPECT_EQ(CheckLldpNeighbor(*t, "leaf-r0", "Ethernet0", "gpu-node-001", "enp12s0np0").verdict,
            V::kMatch);
  EXPECT_EQ(CheckLldpNeighbor(*t, "leaf-r0", "Ethernet0", "GPU-node-001.pod.example", "mlx5_0")
                .verdict,
            V::kMatch);
  EXPECT_EQ(
      CheckLldpNeighbor(*t, "leaf-r0", "Ethernet0", "gpu-node-001", "b8:59:9f:01:02:03").verdict,
      V::kMatch);
  EXPECT_EQ(CheckLldpNeighbor(*t, "spine-0", "Ethernet0", "leaf-r0", "Ethernet64").verdict,
            V::kMatch);
}

TEST(TopologyTest, AnEmptyFileOrOneThatIsNotAMappingAndAMisspeltSection) {
  absl::StatusOr<Topology> empty = Topology::LoadString("", "e.yaml");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().message(),
            "e.yaml: error[missing-key]: the topology is empty (give `hosts` and `switches`)");
  absl::StatusOr<Topology> list = Topology::LoadString("- a\n", "l.yaml");
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().message(),
            "l.yaml:1:1: error[bad-type]: the topology must be a mapping with `hosts` and "
            "`switches`");
  absl::StatusOr<Topology> typo = Topology::LoadString("switches: []\nhots: []\n", "t.yaml");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().message(),
            "t.yaml:2:1: error[unknown-key]: unknown key `hots` in the topology (did you mean "
            "`hosts`?)");
}

TEST(LldpCheckTest, MismatchNamesWhatWasExpected) {
  absl::StatusOr<Topology> t = Topology::LoadString(kGood, "topo.yaml");
  ASSERT_TRUE(t.ok()) << t.status();
  LldpCheck c = CheckLldpNeighbor(*t, "leaf-r0", "Ethernet0", "gpu-node-002", "enp12s0np0");
  EXPECT_EQ(c.verdict, LldpCheck::Verdict::kMismatch);
  EXPECT_EQ(c.expected, "gpu-node-001/enp12s0np0");
  // Right host, wrong cable end.
  EXPECT_EQ(CheckLldpNeighbor(*t, "leaf-r0", "Ethernet0", "gpu-node-001", "enp99s0np0").verdict,
            LldpCheck::Verdict::kMismatch);
  // gpu-node-0010 is not an FQDN of gpu-node-001.
  EXPECT_EQ(CheckLldpNeighbor(*t, "leaf-r0", "Ethernet0", "gpu-node-0010", "mlx5_0").verdict,
            LldpCheck::Verdict::kMismatch);
  EXPECT_EQ(CheckLldpNeighbor(*t, "leaf-r0", "Ethernet8", "x", "y").verdict,
            LldpCheck::Verdict::kNotInTopology);
  EXPECT_EQ(LldpVerdictName(LldpCheck::Verdict::kMismatch), "mismatch");
}

}  // namespace
}  // namespace railwatch
