// Topology discovery (topology/discovery.h): the map built from what the simulated switches
// announce over LLDP equals the topology file the simulator writes, for every scenario of the
// suite; both ends, one end, conflicts with a declared file, and the YAML it prints.
#include "topology/discovery.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "collectors/lldp_neighbors.h"
#include "common/text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/scenario.h"
#include "sim/switch_model.h"
#include "sim/sysfs_fabric.h"
#include "sim/topology_writer.h"
#include "support/ttar.h"

namespace railwatch {
namespace topology_discovery_test {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string DiffText(const std::vector<TopologyDifference>& diffs) {
  std::vector<std::string> lines;
  for (const TopologyDifference& d : diffs) {
    lines.push_back(absl::StrCat(d.where, " ", d.what, ": declared \"", d.declared,
                                 "\", discovered \"", d.discovered, "\""));
  }
  return absl::StrJoin(lines, "\n");
}

// What the agents report of a simulated fabric: every NIC's identity (the host agents' sysfs
// reading) and every switch port's LLDP neighbour (the switch agent's openconfig-lldp).
DiscoveryFacts FactsOf(const std::vector<sim::SimSwitch>& switches, int hosts, int nics) {
  DiscoveryFacts facts;
  for (int h = 1; h <= hosts; ++h) {
    for (int k = 0; k < nics; ++k) {
      facts.nics.push_back({sim::SysfsFabric::HostName(h), absl::StrCat("mlx5_", k),
                            sim::SysfsFabric::NetdevName(k), "", "", "", "Ethernet"});
    }
  }
  for (const sim::SimSwitch& sw : switches) {
    facts.switches.push_back(sw.name);
    for (const sim::SwitchPort& p : sw.ports) {
      facts.switch_ports.push_back(
          {sw.name, p.name, p.lldp_system_name, p.lldp_port_id, p.lldp_chassis_id, 1});
    }
  }
  return facts;
}

struct Fabric {
  std::unique_ptr<sim::SwitchFabric> switches;
  Topology truth;
};

Fabric Simulate(const sim::ScenarioTopology& t, const std::string& dir) {
  sim::SwitchFabric::Options o;
  o.hosts = t.hosts;
  o.nics_per_host = t.nics;
  o.hosts_per_leaf = t.hosts_per_leaf;
  o.spines = t.spines;
  o.dialects = t.dialects;
  absl::StatusOr<std::unique_ptr<sim::SwitchFabric>> f =
      sim::SwitchFabric::Create(o, absl::FromUnixSeconds(1'800'000'000));
  EXPECT_TRUE(f.ok()) << f.status();
  if (!f.ok()) return {};
  const std::string path = dir + "/topology.yaml";
  EXPECT_TRUE(sim::WriteTopologyFile(path, (*f)->switches(), t.hosts, t.nics, {}).ok());
  absl::StatusOr<Topology> truth = Topology::LoadFile(path);
  EXPECT_TRUE(truth.ok()) << truth.status();
  return {std::move(*f), truth.ok() ? std::move(*truth) : Topology()};
}

// The exact comparison: for every scenario of the suite, the discovered map is the
// simulator's ground-truth topology, and the YAML printed for it reads back as the same.
TEST(TopologyDiscovery, EveryScenarioIsDiscoveredExactly) {
  testing::TempDir dir;
  size_t scenarios = 0;
  for (const fs::directory_entry& e :
       fs::directory_iterator(std::string(RAILWATCH_SOURCE_DIR) + "/sim/scenarios")) {
    if (e.path().extension() != ".yaml") continue;
    absl::StatusOr<sim::Scenario> s = sim::LoadScenarioFile(e.path().string());
    ASSERT_TRUE(s.ok()) << s.status();
    SCOPED_TRACE(e.path().filename().string());
    ++scenarios;
    Fabric f = Simulate(s->topology, dir.path());
    ASSERT_NE(f.switches, nullptr);
    const DiscoveredTopology d =
        DiscoverTopology(FactsOf(f.switches->switches(), s->topology.hosts, s->topology.nics));
    EXPECT_THAT(d.notes, IsEmpty());
    EXPECT_EQ(DiffText(DiffTopologies(f.truth, d.topology)), "");
    size_t nics = 0;
    for (const TopologyHost& h : d.topology.hosts()) nics += h.nics.size();
    EXPECT_EQ(nics, static_cast<size_t>(s->topology.hosts * s->topology.nics));

    absl::StatusOr<Topology> back =
        Topology::LoadString(TopologyToYaml(d.topology, &d.provenance), "discovered.yaml");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(DiffText(DiffTopologies(f.truth, *back)), "");

    // The hosts' end too, as their agents read the lldpd answers the simulator writes: every
    // NIC cable is then heard from both ends, and the map is the same.
    const std::string root = dir.path() + "/sys";
    ASSERT_TRUE(sim::WriteHostLldpFiles(root, f.switches->switches()).ok());
    DiscoveryFacts facts = FactsOf(f.switches->switches(), s->topology.hosts, s->topology.nics);
    for (int h = 1; h <= s->topology.hosts; ++h) {
      const std::string host = sim::SysfsFabric::HostName(h);
      absl::StatusOr<std::string> json = ReadFile(root + "/" + host + "/lldpd.json");
      ASSERT_TRUE(json.ok()) << json.status();
      const LldpParseResult parsed = ParseLldpNeighbors(*json, host);
      EXPECT_TRUE(parsed.problems.empty()) << host;
      EXPECT_EQ(parsed.neighbors.size(), static_cast<size_t>(s->topology.nics)) << host;
      for (const LldpNeighbor& n : parsed.neighbors) {
        facts.host_ports.push_back({host, n.local_interface, n.system_name, n.PortName(), "", 1});
      }
    }
    const DiscoveredTopology both = DiscoverTopology(facts);
    EXPECT_THAT(both.notes, IsEmpty());
    EXPECT_EQ(DiffText(DiffTopologies(f.truth, both.topology)), "");
    for (const TopologyHost& h : both.topology.hosts()) {
      for (const TopologyNic& n : h.nics) {
        EXPECT_EQ(both.provenance.at(h.name + "/" + n.device), Provenance::kBothEnds);
      }
    }
  }
  EXPECT_GE(scenarios, 30u);
}

// A small fabric by hand: two hosts with two NICs each, two leaves, one spine.
DiscoveryFacts Small() {
  DiscoveryFacts f;
  for (const char* host : {"gpu-1", "gpu-2"}) {
    for (int k = 0; k < 2; ++k) {
      f.nics.push_back({host, absl::StrCat("mlx5_", k), absl::StrCat("eth", k),
                        absl::StrCat("0c:42:a1:00:0", host[4] - '0', ":0", k), "", "",
                        "Ethernet"});
    }
  }
  f.switches = {"leaf-a", "leaf-b", "spine"};
  auto port = [&](const char* sw, std::string p, std::string ns, std::string np) {
    f.switch_ports.push_back({sw, std::move(p), std::move(ns), std::move(np), "", 1});
  };
  port("leaf-a", "Ethernet0", "gpu-1", "eth0");
  port("leaf-a", "Ethernet4", "gpu-2", "eth0");
  port("leaf-b", "Ethernet0", "gpu-1", "eth1");
  port("leaf-b", "Ethernet4", "gpu-2", "eth1");
  port("leaf-a", "Ethernet32", "spine", "Ethernet0");
  port("leaf-b", "Ethernet32", "spine", "Ethernet1");
  port("spine", "Ethernet0", "leaf-a", "Ethernet32");
  return f;
}

const TopologyNic* NicOf(const Topology& t, std::string_view host, std::string_view device) {
  for (const TopologyHost& h : t.hosts()) {
    for (const TopologyNic& n : h.nics) {
      if (h.name == host && n.device == device) return &n;
    }
  }
  return nullptr;
}

TEST(TopologyDiscovery, RolesRailsAndProvenanceFromOneOrBothEnds) {
  DiscoveryFacts f = Small();
  // gpu-1's lldpd hears leaf-a (as its FQDN) on eth0: both ends agree.
  f.host_ports.push_back({"gpu-1", "eth0", "leaf-a.example.net", "Ethernet0", "", 1});
  const DiscoveredTopology d = DiscoverTopology(f);
  EXPECT_THAT(d.notes, IsEmpty());
  const TopologyNic* n = NicOf(d.topology, "gpu-2", "mlx5_1");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->switch_name, "leaf-b");
  EXPECT_EQ(n->switch_port, "Ethernet4");
  EXPECT_EQ(n->rail, 1);
  EXPECT_EQ(NicOf(d.topology, "gpu-1", "mlx5_0")->rail, 0);
  EXPECT_EQ(d.provenance.at("gpu-1/mlx5_0"), Provenance::kBothEnds);
  EXPECT_EQ(d.provenance.at("gpu-2/mlx5_0"), Provenance::kSwitchEnd);
  // leaf-a <-> spine is heard from both switches; leaf-b <-> spine from leaf-b only.
  EXPECT_EQ(d.provenance.at("leaf-a/Ethernet32"), Provenance::kBothEnds);
  EXPECT_EQ(d.provenance.at("leaf-b/Ethernet32"), Provenance::kSwitchEnd);
  std::vector<std::string> roles;
  for (const TopologySwitch& s : d.topology.switches()) roles.push_back(s.name + "=" + s.role);
  EXPECT_THAT(roles, ElementsAre("leaf-a=leaf", "leaf-b=leaf", "spine=spine"));
  const std::string yaml = TopologyToYaml(d.topology, &d.provenance);
  EXPECT_THAT(yaml, HasSubstr("- {device: mlx5_0, netdev: eth0, rail: 0, switch: leaf-a, port: "
                              "Ethernet0}  # both ends"));
  EXPECT_THAT(yaml, HasSubstr("- {port: Ethernet32, peer: spine, peer_port: Ethernet1}  # "
                              "switch end"));
}

TEST(TopologyDiscovery, MacPortIdsHostEndOnlyAndAnUnreachedSwitch) {
  DiscoveryFacts f;
  f.nics.push_back({"gpu-1", "mlx5_0", "eth0", "0C-42-A1-00-01-00", "", "", "Ethernet"});
  f.nics.push_back({"gpu-1", "mlx5_1", "eth1", "0c:42:a1:00:01:01", "", "", "Ethernet"});
  f.switches = {"leaf-a"};
  // NIC firmware that announces its MAC as port-id.
  f.switch_ports.push_back({"leaf-a", "Ethernet0", "gpu-1", "0c:42:a1:00:01:00", "", 1});
  // leaf-b has no agent: only gpu-1's lldpd knows it.
  f.host_ports.push_back({"gpu-1", "eth1", "leaf-b", "swp1", "", 1});
  // A management port is not an RDMA NIC: ignored.
  f.host_ports.push_back({"gpu-1", "eno1", "mgmt-sw", "ge-0/0/1", "", 1});
  const DiscoveredTopology d = DiscoverTopology(f);
  EXPECT_THAT(d.notes, IsEmpty());
  EXPECT_EQ(NicOf(d.topology, "gpu-1", "mlx5_0")->switch_port, "Ethernet0");
  EXPECT_EQ(NicOf(d.topology, "gpu-1", "mlx5_1")->switch_name, "leaf-b");
  EXPECT_EQ(d.provenance.at("gpu-1/mlx5_1"), Provenance::kHostEnd);
  EXPECT_EQ(d.topology.switches().size(), 2u);
  // The printed map reads back (leaf-b is listed although no agent reaches it).
  EXPECT_TRUE(Topology::LoadString(TopologyToYaml(d.topology, nullptr), "x.yaml").ok());
}

// Some switches announce a port by its MAC: the switch's own report of its ports' MACs
// (fabric_switch_interface_info) names the port, from a host's lldpd and from another switch.
TEST(TopologyDiscovery, PortIdsThatAreSwitchPortMacsNameThePort) {
  DiscoveryFacts f = Small();
  f.host_ports.push_back({"gpu-1", "eth0", "leaf-a", "02-00-01-AA-00-00", "", 1});
  f.switch_ports.push_back({"spine", "Ethernet1", "leaf-b", "02:00:21:bb:00:00", "", 1});
  // Without the ports' MACs the two reports name ports nobody has.
  const DiscoveredTopology before = DiscoverTopology(f);
  EXPECT_EQ(before.provenance.at("gpu-1/mlx5_0"), Provenance::kEndsDisagree);
  EXPECT_NE(before.provenance.at("leaf-b/Ethernet32"), Provenance::kBothEnds);

  f.switch_port_ids.push_back({"leaf-a", "Ethernet0", "02:00:01:aa:00:00"});
  f.switch_port_ids.push_back({"leaf-b", "Ethernet32", "02:00:21:BB:00:00"});
  f.switch_port_ids.push_back({"leaf-b", "Ethernet0", "not a mac"});  // ignored
  const DiscoveredTopology d = DiscoverTopology(f);
  EXPECT_THAT(d.notes, IsEmpty());
  EXPECT_EQ(d.provenance.at("gpu-1/mlx5_0"), Provenance::kBothEnds);
  EXPECT_EQ(NicOf(d.topology, "gpu-1", "mlx5_0")->switch_port, "Ethernet0");
  EXPECT_EQ(d.provenance.at("leaf-b/Ethernet32"), Provenance::kBothEnds);
}

// InfiniBand: the fabric scanner names an HCA neighbour by its host and port GUID, which the
// host agent reports from sysfs in another spelling (a GID's low half).
TEST(TopologyDiscovery, InfiniBandHcasArePlacedByTheirPortGuid) {
  DiscoveryFacts f;
  f.nics.push_back({"luna-0196", "mlx5_0", "ibp12s0", "", "", "0c42:a103:0025:554e", "InfiniBand"});
  f.nics.push_back({"luna-0196", "mlx5_1", "ibp75s0", "", "", "0c42:a103:0025:554f", "InfiniBand"});
  f.switch_ports.push_back({"LG12-01", "4", "luna-0196", "0x0c42a1030025554e", "", 1});
  f.switch_ports.push_back({"LG12-02", "4", "luna-0196", "c42a1030025554f", "", 1});
  f.switch_ports.push_back({"LG12-01", "39", "CSPINE1-80", "39", "", 1});
  f.switch_ports.push_back({"CSPINE1-80", "39", "LG12-01", "39", "", 1});
  // An HCA whose description does not name its host: found by its GUID alone.
  f.nics.push_back({"x5-node07", "mlx4_0", "ib0", "", "", "0030:48c7:49cd:0001", "InfiniBand"});
  f.switch_ports.push_back({"LG12-01", "9", "MT25408", "3048c749cd0001", "", 1});
  f.switches = {"LG12-01", "LG12-02", "CSPINE1-80"};
  const DiscoveredTopology d = DiscoverTopology(f);
  ASSERT_NE(NicOf(d.topology, "x5-node07", "mlx4_0"), nullptr);
  EXPECT_EQ(NicOf(d.topology, "x5-node07", "mlx4_0")->switch_port, "9");
  EXPECT_THAT(d.notes, IsEmpty());
  ASSERT_NE(NicOf(d.topology, "luna-0196", "mlx5_0"), nullptr);
  EXPECT_EQ(NicOf(d.topology, "luna-0196", "mlx5_0")->switch_name, "LG12-01");
  EXPECT_EQ(NicOf(d.topology, "luna-0196", "mlx5_0")->switch_port, "4");
  EXPECT_EQ(NicOf(d.topology, "luna-0196", "mlx5_1")->switch_name, "LG12-02");
  EXPECT_EQ(NicOf(d.topology, "luna-0196", "mlx5_1")->rail, 1);
  EXPECT_EQ(d.provenance.at("LG12-01/39"), Provenance::kBothEnds);
  std::vector<std::string> roles;
  for (const TopologySwitch& s : d.topology.switches()) roles.push_back(s.name + "=" + s.role);
  EXPECT_THAT(roles, ElementsAre("CSPINE1-80=spine", "LG12-01=leaf", "LG12-02=leaf"));
}

TEST(TopologyDiscovery, WhatCannotBePlacedIsANoteAndTheNewestNeighbourWins) {
  DiscoveryFacts f = Small();
  f.switch_ports.push_back({"leaf-a", "Ethernet8", "gpu-2", "eth7", "", 1});  // no such NIC
  f.switch_ports.push_back({"leaf-a", "Ethernet12", "printer", "p1", "", 1});
  // The ends disagree about gpu-2/mlx5_1.
  f.host_ports.push_back({"gpu-2", "eth1", "leaf-b", "Ethernet8", "", 1});
  // An older report for leaf-a/Ethernet0 (before a cable moved): the newest one wins.
  f.switch_ports.push_back({"leaf-a", "Ethernet0", "gpu-2", "eth1", "", 0});
  const DiscoveredTopology d = DiscoverTopology(f);
  EXPECT_THAT(d.notes,
              ElementsAre(HasSubstr("gpu-2/mlx5_1: switch leaf-b/Ethernet4 hears it, but its "
                                    "lldpd hears leaf-b/Ethernet8"),
                          HasSubstr("leaf-a/Ethernet12: neighbour \"printer\""),
                          HasSubstr("leaf-a/Ethernet8: host gpu-2 announces port \"eth7\"")));
  EXPECT_EQ(d.provenance.at("gpu-2/mlx5_1"), Provenance::kEndsDisagree);
  EXPECT_EQ(NicOf(d.topology, "gpu-1", "mlx5_0")->switch_port, "Ethernet0");
}

TEST(TopologyDiscovery, DeclaredPinsAndConflictsAreListed) {
  const DiscoveredTopology d = DiscoverTopology(Small());
  absl::StatusOr<Topology> declared = Topology::LoadString(R"(
switches:
  - {name: leaf-a, role: leaf, dialect: sonic}
  - {name: leaf-b, role: leaf}
  - name: spine
    role: spine
    links: [{port: Ethernet9, peer: leaf-b, peer_port: Ethernet32}]
  - {name: leaf-c, role: leaf}
hosts:
  - name: gpu-1
    nics:
      - {device: mlx5_0, netdev: eth0, rail: 4, switch: leaf-a, port: Ethernet0}
      - {device: mlx5_1, netdev: eth1, rail: 1, switch: leaf-c, port: Ethernet0}
  - {name: gpu-2, nics: []}
jobs:
  - {name: train, hosts: [gpu-1, gpu-2], gpus_per_host: 2}
)",
                                                           "declared.yaml");
  ASSERT_TRUE(declared.ok()) << declared.status();
  const std::vector<TopologyDifference> diffs = DiffTopologies(*declared, d.topology);
  EXPECT_EQ(DiffText(diffs),
            "gpu-1/mlx5_0 rail: declared \"4\", discovered \"0\"\n"
            "gpu-1/mlx5_1 switch port: declared \"leaf-c/Ethernet0\", discovered "
            "\"leaf-b/Ethernet0\"\n"
            "gpu-2/mlx5_0 nic: declared \"\", discovered \"leaf-a/Ethernet4\"\n"
            "gpu-2/mlx5_1 nic: declared \"\", discovered \"leaf-b/Ethernet4\"\n"
            "leaf-a/Ethernet32 link: declared \"\", discovered \"spine/Ethernet0\"\n"
            "leaf-b/Ethernet32 link: declared \"spine/Ethernet9\", discovered \"spine/Ethernet1\"\n"
            "leaf-c switch: declared \"leaf\", discovered \"\"\n"
            "spine/Ethernet1 link: declared \"\", discovered \"leaf-b/Ethernet32\"\n"
            "spine/Ethernet9 link: declared \"leaf-b/Ethernet32\", discovered \"\"");
  EXPECT_TRUE(diffs[0].conflict());
  EXPECT_FALSE(diffs[2].conflict());

  absl::flat_hash_map<std::string, Provenance> provenance = d.provenance;
  const Topology merged = MergeTopologies(*declared, d.topology, provenance);
  // The file wins where it speaks; discovery fills in the rest.
  const TopologyNic* pinned = NicOf(merged, "gpu-1", "mlx5_1");
  EXPECT_EQ(pinned->switch_name, "leaf-c");
  EXPECT_EQ(provenance.at("gpu-1/mlx5_1"), Provenance::kDeclared);
  EXPECT_EQ(NicOf(merged, "gpu-1", "mlx5_0")->rail, 4);
  EXPECT_EQ(provenance.at("gpu-1/mlx5_0"), Provenance::kSwitchEnd);
  EXPECT_EQ(NicOf(merged, "gpu-2", "mlx5_1")->switch_name, "leaf-b");
  ASSERT_NE(merged.PeerOf("spine", "Ethernet9"), nullptr);
  EXPECT_EQ(merged.PeerOf("spine", "Ethernet1"), nullptr);  // replaced by the declared link
  ASSERT_NE(merged.PeerOf("leaf-a", "Ethernet32"), nullptr);
  EXPECT_EQ(merged.jobs().size(), 1u);
  absl::StatusOr<Topology> back =
      Topology::LoadString(TopologyToYaml(merged, &provenance), "merged.yaml");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(DiffText(DiffTopologies(merged, *back)), "");
}

TEST(TopologyDiscovery, AFileThatPinsOnlyJobsLeavesTheRestToDiscovery) {
  const DiscoveredTopology d = DiscoverTopology(Small());
  absl::StatusOr<Topology> jobs_only = Topology::LoadString(R"(
hosts: [{name: gpu-1}, {name: gpu-2}]
jobs: [{name: train, hosts: [gpu-1, gpu-2], gpus_per_host: 2}]
)",
                                                            "jobs.yaml");
  ASSERT_TRUE(jobs_only.ok()) << jobs_only.status();
  absl::flat_hash_map<std::string, Provenance> provenance = d.provenance;
  const Topology merged = MergeTopologies(*jobs_only, d.topology, provenance);
  EXPECT_EQ(DiffText(DiffTopologies(d.topology, merged)), "");
  ASSERT_EQ(merged.jobs().size(), 1u);
  EXPECT_EQ(merged.jobs()[0].name, "train");
  // Nothing the file says conflicts: only NICs it does not list.
  for (const TopologyDifference& diff : DiffTopologies(*jobs_only, d.topology)) {
    EXPECT_FALSE(diff.conflict()) << diff.where;
  }
}

}  // namespace topology_discovery_test
}  // namespace railwatch
