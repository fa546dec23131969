#include "topology/fabric_map.h"

#include <algorithm>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "logs/log_parser.h"
#include "store/event_store.h"
#include "topology/topology.h"

namespace railwatch {
namespace fabric_map_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Two spines, two leaves, three hosts with a NIC on rail 0 and one on rail 1; gpu-node-003's
// rail-1 NIC is not cabled yet, so leaf-r1 holds fewer hosts than rail 1. leaf-r0's uplinks are
// written on its own end, leaf-r1's once on each side.
constexpr char kTopology[] = R"(
switches:
  - name: leaf-r0
    role: leaf
    links:
      - {port: Ethernet64, peer: spine-0, peer_port: Ethernet0}
      - {port: Ethernet68, peer: spine-1, peer_port: Ethernet0}
  - name: leaf-r1
    role: leaf
    links:
      - {port: Ethernet64, peer: spine-0, peer_port: Ethernet4}
  - {name: spine-0, role: spine}
  - name: spine-1
    role: spine
    links:
      - {port: Ethernet4, peer: leaf-r1, peer_port: Ethernet68}
hosts:
  - name: gpu-node-001
    nics:
      - {device: mlx5_0, netdev: enp12s0np0, rail: 0, switch: leaf-r0, port: Ethernet0}
      - {device: mlx5_1, netdev: enp13s0np0, rail: 1, switch: leaf-r1, port: Ethernet0}
  - name: gpu-node-002
    nics:
      - {device: mlx5_0, netdev: enp12s0np0, rail: 0, switch: leaf-r0, port: Ethernet4}
      - {device: mlx5_1, netdev: enp13s0np0, rail: 1, switch: leaf-r1, port: Ethernet4}
  - name: gpu-node-003
    nics:
      - {device: mlx5_0, netdev: enp12s0np0, rail: 0, switch: leaf-r0, port: Ethernet8}
      - {device: mlx5_1, netdev: enp13s0np0, rail: 1}
jobs:
  - name: train-a
    hosts: [gpu-node-001, gpu-node-002]
  - name: eval-b
    gpus_per_host: 4
    hosts: [gpu-node-003]
)";

// "a=1,b=2": readable in failure messages.
std::string Str(const Labels& labels) {
  std::string out;
  for (const Label& l : labels) {
    if (!out.empty()) out += ",";
    out += l.name + "=" + l.value;
  }
  return out;
}

Labels L(std::initializer_list<Label> labels) {
  Labels out(labels);
  NormalizeLabels(out);
  return out;
}

class FabricMapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<Topology> t = Topology::LoadString(kTopology, "fabric.yaml");
    ASSERT_TRUE(t.ok()) << t.status();
    topology_ = std::make_shared<const Topology>(*std::move(t));
    registry_.SetStatic(topology_->jobs());
    fabric_ = std::make_unique<FabricMap>(topology_, &registry_);
  }

  Labels Enriched(Labels labels) {
    fabric_->Enrich(labels);
    return labels;
  }

  std::shared_ptr<const Topology> topology_;
  JobRegistry registry_;
  std::unique_ptr<FabricMap> fabric_;
};

TEST_F(FabricMapTest, EnrichesANicNamedByDevice) {
  Labels l = L({{"host", "gpu-node-001"}, {"device", "mlx5_0"}, {"port", "1"}});
  EXPECT_TRUE(fabric_->Enrich(l));
  EXPECT_EQ(Str(l),
            "device=mlx5_0,host=gpu-node-001,job=train-a,leaf=leaf-r0,leaf_port=Ethernet0,"
            "link=gpu-node-001/mlx5_0 <-> leaf-r0/Ethernet0,netdev=enp12s0np0,"
            "node=gpu-node-001/mlx5_0,port=1,rail=0");
}

TEST_F(FabricMapTest, EnrichesANicNamedByNetdev) {
  Labels l = L({{"host", "gpu-node-002"}, {"interface", "enp13s0np0"}, {"priority", "3"},
                {"direction", "tx"}});
  EXPECT_TRUE(fabric_->Enrich(l));
  EXPECT_EQ(Str(l),
            "device=mlx5_1,direction=tx,host=gpu-node-002,interface=enp13s0np0,job=train-a,"
            "leaf=leaf-r1,leaf_port=Ethernet4,link=gpu-node-002/mlx5_1 <-> leaf-r1/Ethernet4,"
            "netdev=enp13s0np0,node=gpu-node-002/mlx5_1,priority=3,rail=1");
}

TEST_F(FabricMapTest, EnrichesAnNcclRankThroughItsLocalRank) {
  // GPU k uses the host's k-th NIC by rail number (rail-optimised); the rank's own labels stay.
  Labels l = L({{"host", "gpu-node-002"}, {"comm", "0xabc"}, {"rank", "3"}, {"local_rank", "1"}});
  EXPECT_TRUE(fabric_->Enrich(l));
  EXPECT_EQ(Str(l),
            "comm=0xabc,device=mlx5_1,gpu=1,host=gpu-node-002,job=train-a,leaf=leaf-r1,"
            "leaf_port=Ethernet4,link=gpu-node-002/mlx5_1 <-> leaf-r1/Ethernet4,local_rank=1,"
            "netdev=enp13s0np0,node=gpu-node-002/mlx5_1,rail=1,rank=3");
  // A local rank past the host's NICs names no NIC; a device, when there is one, wins.
  Labels beyond = L({{"host", "gpu-node-002"}, {"local_rank", "2"}});
  EXPECT_TRUE(fabric_->Enrich(beyond));
  EXPECT_EQ(FindLabel(beyond, "device"), nullptr);
  EXPECT_EQ(*FindLabel(beyond, "node"), "gpu-node-002");
  Labels both = L({{"host", "gpu-node-002"}, {"device", "mlx5_0"}, {"local_rank", "1"}});
  EXPECT_TRUE(fabric_->Enrich(both));
  EXPECT_EQ(*FindLabel(both, "rail"), "0");
  EXPECT_EQ(FindLabel(both, "gpu"), nullptr);
}

// A communicator that holds only some of a host's GPUs: its local rank 0 runs on GPU 1, as the
// rank's NCCL Init line says (cudaDev); the NIC is GPU 1's.
TEST_F(FabricMapTest, AnNcclRanksGpuFromItsInitLineWinsOverItsLocalRank) {
  StoredEvent init;
  init.kind = "nccl.comm_init";
  init.labels = {{"host", "gpu-node-002"}};
  init.attributes = {{"comm_id", "0xABC"}, {"cuda_dev", "1"}, {"nranks", "2"}, {"rank", "1"}};
  const uint64_t before = registry_.generation();
  EXPECT_TRUE(registry_.Observe(init));
  EXPECT_NE(registry_.generation(), before);  // cached topology() labels must be redone
  EXPECT_EQ(registry_.RankGpu("0xabc", 1), 1);
  EXPECT_EQ(registry_.RankGpu("abc", 1), 1);     // RAS's spelling
  EXPECT_EQ(registry_.RankGpu("0x0abc", 1), 1);  // zero-padded
  EXPECT_EQ(registry_.RankGpu("0xabc", 0), -1);
  Labels l = L({{"host", "gpu-node-002"}, {"comm", "0xabc"}, {"rank", "1"}, {"local_rank", "0"}});
  EXPECT_TRUE(fabric_->Enrich(l));
  EXPECT_EQ(*FindLabel(l, "gpu"), "1");
  EXPECT_EQ(*FindLabel(l, "device"), "mlx5_1");
}

TEST_F(FabricMapTest, EnrichNeverOverwritesALabel) {
  Labels l = L({{"host", "gpu-node-001"}, {"device", "mlx5_0"}, {"rail", "7"}, {"job", "mine"}});
  EXPECT_TRUE(fabric_->Enrich(l));
  EXPECT_EQ(*FindLabel(l, "rail"), "7");
  EXPECT_EQ(*FindLabel(l, "job"), "mine");
  EXPECT_EQ(*FindLabel(l, "leaf"), "leaf-r0");
}

TEST_F(FabricMapTest, EnrichSortsAnUnsortedElement) {
  Labels l = {{"switch", "leaf-r1"}, {"agent", "sw-agent-1"}};
  EXPECT_TRUE(fabric_->Enrich(l));
  EXPECT_EQ(Str(l), "agent=sw-agent-1,leaf=leaf-r1,node=leaf-r1,role=leaf,switch=leaf-r1");
}

TEST_F(FabricMapTest, EnrichesTheSwitchPortFacingANic) {
  Labels l = L({{"switch", "leaf-r0"}, {"interface", "Ethernet4"}, {"queue", "3"}});
  EXPECT_TRUE(fabric_->Enrich(l));
  EXPECT_EQ(Str(l),
            "interface=Ethernet4,job=train-a,leaf=leaf-r0,"
            "link=gpu-node-002/mlx5_0 <-> leaf-r0/Ethernet4,node=leaf-r0,peer_device=mlx5_0,"
            "peer_host=gpu-node-002,queue=3,rail=0,role=leaf,switch=leaf-r0");
}

TEST_F(FabricMapTest, EnrichesAnUplinkFacingASpine) {
  Labels l = L({{"switch", "leaf-r0"}, {"interface", "Ethernet68"}});
  EXPECT_TRUE(fabric_->Enrich(l));
  EXPECT_EQ(Str(l),
            "interface=Ethernet68,leaf=leaf-r0,link=leaf-r0/Ethernet68 <-> spine-1/Ethernet0,"
            "node=leaf-r0,peer_port=Ethernet0,peer_switch=spine-1,role=leaf,switch=leaf-r0");
}

TEST_F(FabricMapTest, EnrichesASpinePortFacingALeafFromEitherEndOfTheLinkList) {
  // Written on the spine's end.
  Labels l = L({{"switch", "spine-1"}, {"interface", "Ethernet4"}});
  EXPECT_TRUE(fabric_->Enrich(l));
  EXPECT_EQ(Str(l),
            "interface=Ethernet4,leaf=leaf-r1,link=leaf-r1/Ethernet68 <-> spine-1/Ethernet4,"
            "node=spine-1,peer_port=Ethernet68,peer_switch=leaf-r1,role=spine,switch=spine-1");
  // Written on the leaf's end only.
  Labels m = L({{"switch", "spine-0"}, {"interface", "Ethernet4"}});
  EXPECT_TRUE(fabric_->Enrich(m));
  EXPECT_EQ(*FindLabel(m, "peer_switch"), "leaf-r1");
  EXPECT_EQ(*FindLabel(m, "peer_port"), "Ethernet64");
  EXPECT_EQ(*FindLabel(m, "leaf"), "leaf-r1");
}

TEST_F(FabricMapTest, EnrichesHostsAndSwitchesWithoutAPort) {
  EXPECT_EQ(Str(Enriched(L({{"host", "gpu-node-003"}}))),
            "host=gpu-node-003,job=eval-b,node=gpu-node-003");
  // A spine is not a leaf: no leaf label.
  EXPECT_EQ(Str(Enriched(L({{"switch", "spine-0"}}))), "node=spine-0,role=spine,switch=spine-0");
}

TEST_F(FabricMapTest, UnknownElementsGainOnlyANode) {
  Labels sw = L({{"switch", "leaf-r9"}, {"interface", "Ethernet0"}});
  EXPECT_FALSE(fabric_->Enrich(sw));
  EXPECT_EQ(Str(sw), "interface=Ethernet0,node=leaf-r9,switch=leaf-r9");

  Labels nic = L({{"host", "gpu-node-404"}, {"device", "mlx5_0"}});
  EXPECT_FALSE(fabric_->Enrich(nic));
  EXPECT_EQ(Str(nic), "device=mlx5_0,host=gpu-node-404,node=gpu-node-404/mlx5_0");

  Labels bare = L({{"device", "mlx5_0"}});
  EXPECT_FALSE(fabric_->Enrich(bare));
  EXPECT_EQ(Str(bare), "device=mlx5_0");

  // A known host with a device the file does not list: the host's labels, the NIC's node.
  Labels other = L({{"host", "gpu-node-001"}, {"device", "mlx5_9"}});
  EXPECT_TRUE(fabric_->Enrich(other));
  EXPECT_EQ(Str(other), "device=mlx5_9,host=gpu-node-001,job=train-a,node=gpu-node-001/mlx5_9");
}

TEST_F(FabricMapTest, ToPeerTurnsALeafPortIntoTheNicBehindIt) {
  Labels l = Enriched(L({{"switch", "leaf-r0"}, {"interface", "Ethernet4"}, {"priority", "3"},
                         {"direction", "rx"}}));
  ASSERT_TRUE(fabric_->ToPeer(l));
  EXPECT_EQ(Str(l),
            "device=mlx5_0,direction=tx,host=gpu-node-002,interface=enp12s0np0,job=train-a,"
            "leaf=leaf-r0,leaf_port=Ethernet4,link=gpu-node-002/mlx5_0 <-> leaf-r0/Ethernet4,"
            "netdev=enp12s0np0,node=gpu-node-002/mlx5_0,priority=3,rail=0");
  // And back: the same port, the direction swapped again.
  ASSERT_TRUE(fabric_->ToPeer(l));
  EXPECT_EQ(*FindLabel(l, "switch"), "leaf-r0");
  EXPECT_EQ(*FindLabel(l, "interface"), "Ethernet4");
  EXPECT_EQ(*FindLabel(l, "direction"), "rx");
  EXPECT_EQ(FindLabel(l, "host"), nullptr);
  EXPECT_EQ(*FindLabel(l, "peer_host"), "gpu-node-002");
}

TEST_F(FabricMapTest, ToPeerTurnsANicIntoItsLeafPort) {
  Labels l = L({{"host", "gpu-node-001"}, {"device", "mlx5_1"}, {"port", "1"}, {"priority", "3"},
                {"direction", "tx"}});
  ASSERT_TRUE(fabric_->ToPeer(l));
  EXPECT_EQ(Str(l),
            "direction=rx,interface=Ethernet0,job=train-a,leaf=leaf-r1,"
            "link=gpu-node-001/mlx5_1 <-> leaf-r1/Ethernet0,node=leaf-r1,peer_device=mlx5_1,"
            "peer_host=gpu-node-001,priority=3,rail=1,role=leaf,switch=leaf-r1");
}

TEST_F(FabricMapTest, ToPeerCrossesASwitchToSwitchLink) {
  Labels l = L({{"switch", "spine-0"}, {"interface", "Ethernet4"}, {"direction", "tx"}});
  ASSERT_TRUE(fabric_->ToPeer(l));
  EXPECT_EQ(Str(l),
            "direction=rx,interface=Ethernet64,leaf=leaf-r1,"
            "link=leaf-r1/Ethernet64 <-> spine-0/Ethernet4,node=leaf-r1,peer_port=Ethernet4,"
            "peer_switch=spine-0,role=leaf,switch=leaf-r1");
}

TEST_F(FabricMapTest, ToPeerLeavesAnElementWithAnUnknownFarEndUntouched) {
  for (const Labels& before :
       {L({{"switch", "leaf-r0"}, {"interface", "Ethernet99"}, {"direction", "rx"}}),
        L({{"host", "gpu-node-003"}, {"device", "mlx5_1"}, {"direction", "tx"}}),  // uncabled
        L({{"host", "gpu-node-404"}, {"device", "mlx5_0"}}),
        L({{"switch", "leaf-r0"}}), L({{"job", "train-a"}})}) {
    Labels l = before;
    EXPECT_FALSE(fabric_->ToPeer(l)) << Str(before);
    EXPECT_EQ(Str(l), Str(before));
  }
}

TEST_F(FabricMapTest, HopDistance) {
  EXPECT_EQ(fabric_->HopDistance("gpu-node-001/mlx5_0", "gpu-node-001/mlx5_0"), 0);
  EXPECT_EQ(fabric_->HopDistance("gpu-node-001/mlx5_0", "leaf-r0"), 1);
  EXPECT_EQ(fabric_->HopDistance("leaf-r0", "gpu-node-001/mlx5_0"), 1);
  EXPECT_EQ(fabric_->HopDistance("gpu-node-001/mlx5_0", "spine-1"), 2);
  EXPECT_EQ(fabric_->HopDistance("gpu-node-001/mlx5_0", "gpu-node-002/mlx5_0"), 2);
  EXPECT_EQ(fabric_->HopDistance("gpu-node-001/mlx5_0", "gpu-node-002/mlx5_1"), 4);
  EXPECT_EQ(fabric_->HopDistance("leaf-r0", "leaf-r1"), 2);
  // A host stands for its NICs: the nearest one counts.
  EXPECT_EQ(fabric_->HopDistance("gpu-node-001", "gpu-node-001/mlx5_1"), 0);
  EXPECT_EQ(fabric_->HopDistance("gpu-node-001", "gpu-node-002"), 2);
  EXPECT_EQ(fabric_->HopDistance("gpu-node-003", "leaf-r1"), 3);
  EXPECT_EQ(fabric_->HopDistance("gpu-node-003/mlx5_0", "gpu-node-001"), 2);
  // Unknown, or known but not cabled.
  EXPECT_EQ(fabric_->HopDistance("gpu-node-404/mlx5_0", "leaf-r0"), -1);
  EXPECT_EQ(fabric_->HopDistance("leaf-r0", "nowhere"), -1);
  EXPECT_EQ(fabric_->HopDistance("gpu-node-003/mlx5_1", "leaf-r1"), -1);
  EXPECT_EQ(fabric_->HopDistance("", "leaf-r1"), -1);
}

TEST_F(FabricMapTest, HopDistanceIsTheSameAfterTheCacheFillsAndEmpties) {
  std::vector<std::string> nodes = {"leaf-r0", "leaf-r1", "spine-0", "spine-1"};
  for (const TopologyHost& h : topology_->hosts()) {
    nodes.push_back(h.name);
    for (const TopologyNic& n : h.nics) nodes.push_back(h.name + "/" + n.device);
  }
  std::vector<int> first;
  for (int round = 0; round < 12; ++round) {  // more sources than the cache holds
    size_t i = 0;
    for (const std::string& a : nodes) {
      for (const std::string& b : nodes) {
        const int d = fabric_->HopDistance(a, b);
        if (round == 0) {
          first.push_back(d);
          EXPECT_EQ(d, fabric_->HopDistance(b, a)) << a << " " << b;
        } else {
          EXPECT_EQ(d, first[i]) << a << " " << b;
        }
        ++i;
      }
    }
  }
}

TEST_F(FabricMapTest, BlastOfANicOnHostScope) {
  BlastRadius b = fabric_->Blast(Enriched(L({{"host", "gpu-node-001"}, {"device", "mlx5_0"}})),
                                 "host");
  EXPECT_EQ(b.scope, "host");
  EXPECT_THAT(b.hosts, ElementsAre("gpu-node-001"));
  ASSERT_EQ(b.jobs.size(), 1u);
  EXPECT_EQ(b.jobs[0].job, "train-a");
  EXPECT_EQ(b.jobs[0].gpus, 16u);
  EXPECT_EQ(b.jobs[0].ranks, 16u);
  EXPECT_THAT(b.jobs[0].hosts, ElementsAre("gpu-node-001"));
  EXPECT_EQ(b.gpus, 16u);
}

TEST_F(FabricMapTest, BlastOfSwitchPortsOnHostScope) {
  // The port facing a NIC stalls that NIC's host.
  BlastRadius b = fabric_->Blast(
      Enriched(L({{"switch", "leaf-r0"}, {"interface", "Ethernet8"}})), "host");
  EXPECT_THAT(b.hosts, ElementsAre("gpu-node-003"));
  ASSERT_EQ(b.jobs.size(), 1u);
  EXPECT_EQ(b.jobs[0].job, "eval-b");
  EXPECT_EQ(b.gpus, 4u);
  // An uplink has no host of its own: its leaf's hosts.
  BlastRadius up = fabric_->Blast(L({{"switch", "leaf-r1"}, {"interface", "Ethernet64"}}), "host");
  EXPECT_THAT(up.hosts, ElementsAre("gpu-node-001", "gpu-node-002"));
}

TEST_F(FabricMapTest, BlastOnLeafScope) {
  BlastRadius b = fabric_->Blast(Enriched(L({{"host", "gpu-node-001"}, {"device", "mlx5_1"}})),
                                 "leaf");
  EXPECT_THAT(b.hosts, ElementsAre("gpu-node-001", "gpu-node-002"));
  ASSERT_EQ(b.jobs.size(), 1u);
  EXPECT_THAT(b.jobs[0].hosts, ElementsAre("gpu-node-001", "gpu-node-002"));
  EXPECT_EQ(b.gpus, 16u);
  // A spine reaches every host on the leaves linked to it.
  BlastRadius spine = fabric_->Blast(L({{"switch", "spine-0"}}), "leaf");
  EXPECT_THAT(spine.hosts, ElementsAre("gpu-node-001", "gpu-node-002", "gpu-node-003"));
  ASSERT_EQ(spine.jobs.size(), 2u);
  EXPECT_EQ(spine.jobs[0].job, "eval-b");
  EXPECT_EQ(spine.jobs[1].job, "train-a");
  EXPECT_EQ(spine.gpus, 20u);
}

TEST_F(FabricMapTest, BlastOnRailScopeIncludesHostsOffTheLeaf) {
  BlastRadius b = fabric_->Blast(Enriched(L({{"host", "gpu-node-001"}, {"device", "mlx5_1"}})),
                                 "rail");
  EXPECT_THAT(b.hosts, ElementsAre("gpu-node-001", "gpu-node-002", "gpu-node-003"));
  EXPECT_EQ(b.gpus, 20u);
}

TEST_F(FabricMapTest, BlastOnJobScope) {
  BlastRadius b = fabric_->Blast(Enriched(L({{"host", "gpu-node-001"}})), "job");
  EXPECT_THAT(b.hosts, ElementsAre("gpu-node-001", "gpu-node-002"));
  ASSERT_EQ(b.jobs.size(), 1u);
  EXPECT_EQ(b.jobs[0].job, "train-a");
  EXPECT_EQ(b.gpus, 16u);
  // A culprit that names only its job.
  BlastRadius named = fabric_->Blast(L({{"job", "eval-b"}, {"rail", "0"}}), "job");
  EXPECT_THAT(named.hosts, ElementsAre("gpu-node-003"));
  EXPECT_EQ(named.gpus, 4u);
}

TEST_F(FabricMapTest, BlastOnFabricScope) {
  BlastRadius b = fabric_->Blast(L({{"switch", "leaf-r0"}}), "fabric");
  EXPECT_EQ(b.scope, "fabric");
  EXPECT_THAT(b.hosts, ElementsAre("gpu-node-001", "gpu-node-002", "gpu-node-003"));
  ASSERT_EQ(b.jobs.size(), 2u);
  EXPECT_EQ(b.gpus, 20u);
}

TEST_F(FabricMapTest, BlastWithoutJobsOrWithoutTopology) {
  FabricMap no_jobs(topology_, nullptr);
  BlastRadius b = no_jobs.Blast(L({{"host", "gpu-node-001"}, {"device", "mlx5_0"}}), "leaf");
  EXPECT_THAT(b.hosts, ElementsAre("gpu-node-001", "gpu-node-002", "gpu-node-003"));
  EXPECT_TRUE(b.jobs.empty());
  EXPECT_EQ(b.gpus, 0u);

  JobRegistry empty;
  FabricMap no_registered_jobs(topology_, &empty);
  EXPECT_EQ(no_registered_jobs.Blast(L({{"switch", "spine-0"}}), "fabric").gpus, 0u);

  // No topology: the culprit's own host, and the jobs the registry puts there.
  FabricMap no_topology(nullptr, &registry_);
  BlastRadius h = no_topology.Blast(L({{"host", "gpu-node-001"}}), "leaf");
  EXPECT_THAT(h.hosts, ElementsAre("gpu-node-001"));
  ASSERT_EQ(h.jobs.size(), 1u);
  EXPECT_EQ(h.gpus, 16u);
  Labels l = L({{"host", "gpu-node-001"}, {"device", "mlx5_0"}});
  EXPECT_FALSE(no_topology.Enrich(l));
  EXPECT_EQ(Str(l), "device=mlx5_0,host=gpu-node-001,job=train-a,node=gpu-node-001/mlx5_0");
  EXPECT_EQ(no_topology.HopDistance("gpu-node-001", "leaf-r0"), -1);
}

TEST(TopologyJobsTest, LoadsJobs) {
  absl::StatusOr<Topology> t = Topology::LoadString(kTopology, "fabric.yaml");
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->jobs().size(), 2u);
  EXPECT_EQ(t->jobs()[0].name, "train-a");
  EXPECT_EQ(t->jobs()[0].gpus_per_host, 8);
  EXPECT_THAT(t->jobs()[0].hosts, ElementsAre("gpu-node-001", "gpu-node-002"));
  EXPECT_EQ(t->jobs()[1].gpus_per_host, 4);
}

TEST(TopologyJobsTest, ReportsEveryJobProblemWithFileLineColumn) {
  constexpr char kBad[] = R"(switches: [{name: leaf-r0}]
hosts:
  - {name: h1}
  - {name: h2}
jobs:
  - {name: a, hosts: [h1, h9], gpus_per_host: 0}
  - {name: a, hosts: [h2, h2], colour: red}
  - {hosts: [h1]}
  - {name: c}
  - name: d
    gpus_per_host: many
    hosts: h1
)";
  absl::StatusOr<Topology> t = Topology::LoadString(kBad, "jobs.yaml");
  ASSERT_FALSE(t.ok());
  const std::string m(t.status().message());
  EXPECT_THAT(m, HasSubstr("jobs.yaml:6:27: error[unknown-host]: job `a` names host `h9`, which is not in `hosts`"));
  EXPECT_THAT(m, HasSubstr("jobs.yaml:6:47: error[bad-value]: gpus_per_host `0` is not a whole number >= 1"));
  EXPECT_THAT(m, HasSubstr("jobs.yaml:7:12: error[duplicate]: job `a` is defined twice"));
  EXPECT_THAT(m, HasSubstr("jobs.yaml:7:27: error[duplicate]: host `h2` is listed twice in job `a`"));
  EXPECT_THAT(m, HasSubstr("jobs.yaml:7:32: error[unknown-key]: unknown key `colour` in a job"));
  EXPECT_THAT(m, HasSubstr("jobs.yaml:8:5: error[missing-key]: `name` is required in a job"));
  EXPECT_THAT(m, HasSubstr("jobs.yaml:9:5: error[missing-key]: `hosts` is required in a job"));
  EXPECT_THAT(m, HasSubstr("jobs.yaml:11:20: error[bad-value]: gpus_per_host `many` is not a whole number >= 1"));
  EXPECT_THAT(m, HasSubstr("jobs.yaml:12:12: error[bad-type]: `hosts` must be a list"));
  EXPECT_EQ(std::count(m.begin(), m.end(), '\n'), 8) << m;

  absl::StatusOr<Topology> not_a_list =
      Topology::LoadString("hosts: [{name: h1}]\njobs: {a: 1}\n", "jobs.yaml");
  ASSERT_FALSE(not_a_list.ok());
  EXPECT_THAT(not_a_list.status().message(), HasSubstr("jobs.yaml:2:7: error[bad-type]: `jobs` must be a list"));
}

// Events as the agent sends them: the log collector's fields as attributes, the agent's host
// label (none for a pasted log).
std::vector<StoredEvent> ParseNccl(const std::vector<std::string>& lines,
                                   const std::string& host_label) {
  logs::LogParser parser("test.log");
  std::vector<logs::LogEvent> parsed;
  for (const std::string& line : lines) parser.Feed(line, parsed);
  parser.Finish(parsed);
  std::vector<StoredEvent> out;
  for (logs::LogEvent& e : parsed) {
    StoredEvent s;
    s.kind = e.kind;
    s.time_unix_nano = e.time_unix_nano != 0 ? e.time_unix_nano : 1'000;
    if (!host_label.empty()) s.labels = {{"host", host_label}};
    s.attributes = std::move(e.fields);
    s.raw = std::move(e.raw);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<std::string> FixtureLines(const std::string& name) {
  std::ifstream in(std::string(RAILWATCH_FIXTURES_DIR) + "/logs/" + name);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

int ObserveAll(JobRegistry& r, const std::vector<StoredEvent>& events) {
  int changed = 0;
  for (const StoredEvent& e : events) changed += r.Observe(e) ? 1 : 0;
  return changed;
}

TEST(JobRegistryTest, StaticJobs) {
  JobRegistry r;
  r.SetStatic({{"train-a", {"h2", "h1"}, 8}, {"eval-b", {"h3"}, 4}});
  std::vector<JobInfo> all = r.All();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name, "eval-b");
  EXPECT_EQ(all[0].gpus, 4u);
  EXPECT_EQ(all[1].name, "train-a");
  EXPECT_THAT(all[1].hosts, ElementsAre("h1", "h2"));
  EXPECT_EQ(all[1].gpus, 16u);
  EXPECT_EQ(all[1].ranks, 16u);
  EXPECT_EQ(all[1].source, "topology");
  EXPECT_THAT(r.JobsOfHost("h1"), ElementsAre("train-a"));
  EXPECT_TRUE(r.JobsOfHost("h9").empty());
  std::string first;
  EXPECT_TRUE(r.FirstJobOfHost("h3", &first));
  EXPECT_EQ(first, "eval-b");
  EXPECT_FALSE(r.FirstJobOfHost("h9", &first));
  std::vector<JobInfo> on = r.JobsOnHosts({"h3", "h1", "h2"});
  ASSERT_EQ(on.size(), 2u);
  EXPECT_EQ(on[0].name, "eval-b");
  EXPECT_EQ(on[1].name, "train-a");
  // Replaced, not added to.
  r.SetStatic({{"eval-b", {"h3"}, 4}});
  EXPECT_EQ(r.All().size(), 1u);
  EXPECT_TRUE(r.JobsOfHost("h1").empty());
}

TEST(JobRegistryTest, LearnsAJobFromARealNcclLogByCommId) {
  // NCCL 2.22: two "Init START" lines with the commId, then a comm_info line (no commId) that
  // the comm pointer ties to the same job.
  std::vector<StoredEvent> events =
      ParseNccl(FixtureLines("nccl_19_v2.22.3_roce_init_start_nnodes_localranks_kubevirt.log"),
                "gpu-node-001");
  JobRegistry r;
  EXPECT_GT(ObserveAll(r, events), 0);
  std::vector<JobInfo> all = r.All();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].name, "nccl-e12be0f5");
  EXPECT_THAT(all[0].hosts, ElementsAre("gpu-node-001"));
  EXPECT_EQ(all[0].ranks, 4u);
  EXPECT_EQ(all[0].gpus, 4u);
  EXPECT_EQ(all[0].source, "nccl");
  EXPECT_GT(all[0].last_seen_unix_nano, 0);
  // The same lines again teach nothing new.
  EXPECT_EQ(ObserveAll(r, events), 0);

  // The other node's ranks join the same job.
  EXPECT_EQ(ObserveAll(r, ParseNccl({"node-002:200:201 [0] NCCL INFO ncclCommInitRank comm "
                                     "0x55aa00001000 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId "
                                     "7000 commId 0xe12be0f58c2ac916 - Init START"},
                                    "gpu-node-002")),
            1);
  all = r.All();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_THAT(all[0].hosts, ElementsAre("gpu-node-001", "gpu-node-002"));
  EXPECT_THAT(r.JobsOfHost("gpu-node-002"), ElementsAre("nccl-e12be0f5"));
}

TEST(JobRegistryTest, ACommInfoLineBeforeTheCommIdMergesIntoTheJob) {
  JobRegistry r;
  std::vector<StoredEvent> info = ParseNccl(
      {"h1:10:11 [1] NCCL INFO comm 0x7f00aa rank 1 nRanks 2 nNodes 2 localRanks 1 localRank 0 "
       "MNNVL 0"},
      "h1");
  ASSERT_EQ(info.size(), 1u);
  ASSERT_EQ(info[0].kind, "nccl.comm_info");
  EXPECT_TRUE(r.Observe(info[0]));
  ASSERT_EQ(r.All().size(), 1u);
  EXPECT_EQ(r.All()[0].name, "nccl-h1-7f00aa");  // one host's view until the commId shows up

  std::vector<StoredEvent> init =
      ParseNccl({"h1:10:11 [1] NCCL INFO ncclCommInitRank comm 0x7f00aa rank 1 nranks 2 cudaDev "
                 "1 nvmlDev 1 busId 1000 commId 0xABCDEF0123456789 - Init COMPLETE"},
                "h1");
  ASSERT_EQ(init.size(), 1u);
  EXPECT_TRUE(r.Observe(init[0]));
  std::vector<JobInfo> all = r.All();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].name, "nccl-abcdef01");
  EXPECT_THAT(all[0].hosts, ElementsAre("h1"));
  EXPECT_EQ(all[0].ranks, 2u);
}

TEST(JobRegistryTest, WithoutCommIdEachHostIsItsOwnView) {
  // NCCL 2.11 prints no commId; a pasted log has no host label, the line prefix names the host.
  JobRegistry r;
  ObserveAll(r, ParseNccl(FixtureLines("nccl_01_v2.11.4_net_socket_2node_allreduce_perf.log"),
                          ""));
  std::vector<JobInfo> all = r.All();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name, "nccl-ip-10-0-139-244-7f85a4000fa0");
  EXPECT_THAT(all[0].hosts, ElementsAre("ip-10-0-139-244"));
  EXPECT_EQ(all[0].ranks, 2u);
  EXPECT_EQ(all[1].name, "nccl-ip-10-0-142-242-7f7dec000fa0");
}

TEST(JobRegistryTest, TheStaticNameWins) {
  JobRegistry r;
  r.SetStatic({{"train-a", {"gpu-node-001", "gpu-node-002"}, 8}});
  std::vector<StoredEvent> events =
      ParseNccl(FixtureLines("nccl_19_v2.22.3_roce_init_start_nnodes_localranks_kubevirt.log"),
                "gpu-node-001");
  ObserveAll(r, events);
  std::vector<JobInfo> all = r.All();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].name, "train-a");
  EXPECT_THAT(r.JobsOfHost("gpu-node-001"), ElementsAre("train-a"));

  // A rank outside the static job: the communicator is a job of its own.
  ObserveAll(r, ParseNccl({"n3:1:2 [0] NCCL INFO ncclCommInitRank comm 0x1 rank 0 nranks 4 "
                           "cudaDev 0 busId 7000 commId 0xe12be0f58c2ac916 - Init START"},
                          "gpu-node-003"));
  all = r.All();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name, "nccl-e12be0f5");
  EXPECT_THAT(all[0].hosts, ElementsAre("gpu-node-001", "gpu-node-003"));
  EXPECT_THAT(r.JobsOfHost("gpu-node-001"), ElementsAre("nccl-e12be0f5", "train-a"));

  // The static job grows to cover it: the learnt one disappears again.
  r.SetStatic({{"train-a", {"gpu-node-001", "gpu-node-002", "gpu-node-003"}, 8}});
  all = r.All();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].name, "train-a");
  EXPECT_EQ(all[0].gpus, 24u);
}

// A scheduler's jobs (Slurm, issue 23) are replaced whole at each poll: a job that ends leaves,
// and while it runs it covers the NCCL communicators learnt on its hosts.
TEST(JobRegistryTest, ScheduledJobsComeAndGoWithEachPoll) {
  JobRegistry r;
  ObserveAll(r, ParseNccl({"n1:1:2 [0] NCCL INFO ncclCommInitRank comm 0x1 rank 0 nranks 2 "
                           "cudaDev 0 busId 7000 commId 0xe12be0f58c2ac916 - Init START"},
                          "gpu-node-001"));
  ASSERT_EQ(r.All().size(), 1u);
  const uint64_t generation = r.generation();

  JobInfo job;
  job.name = "slurm-1618871";
  job.hosts = {"gpu-node-002", "gpu-node-001"};
  job.gpus = 16;
  job.ranks = 16;
  job.detail = "model_pretrain by alice in gpu_p2";
  EXPECT_TRUE(r.SetScheduled("slurm", {job}));
  EXPECT_GT(r.generation(), generation);
  std::vector<JobInfo> all = r.All();
  ASSERT_EQ(all.size(), 1u) << "the learnt communicator is the scheduled job";
  EXPECT_EQ(all[0].name, "slurm-1618871");
  EXPECT_EQ(all[0].source, "slurm");
  EXPECT_THAT(all[0].hosts, ElementsAre("gpu-node-001", "gpu-node-002"));
  std::vector<JobInfo> on = r.JobsOnHosts({"gpu-node-002"});
  ASSERT_EQ(on.size(), 1u);
  EXPECT_EQ(on[0].gpus, 16u);
  EXPECT_EQ(on[0].detail, "model_pretrain by alice in gpu_p2");
  const uint64_t scheduled = r.generation();
  EXPECT_FALSE(r.SetScheduled("slurm", {job})) << "the same poll again changes nothing";
  EXPECT_EQ(r.generation(), scheduled) << "so the engine keeps its cached job labels";

  // The job ends: gone from the hosts, and the learnt communicator is its own job again.
  EXPECT_TRUE(r.SetScheduled("slurm", {}));
  EXPECT_TRUE(r.JobsOfHost("gpu-node-002").empty());
  all = r.All();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].name, "nccl-e12be0f5");

  // The topology file's name wins over a scheduled job of the same name.
  r.SetStatic({{"train-a", {"gpu-node-009"}, 8}});
  JobInfo clash = job;
  clash.name = "train-a";
  r.SetScheduled("slurm", {clash});
  EXPECT_THAT(r.JobsOfHost("gpu-node-009"), ElementsAre("train-a"));
  EXPECT_TRUE(r.JobsOfHost("gpu-node-002").empty());
}

TEST(JobRegistryTest, IgnoresOtherEventsAndKeepsJobsOnDestroy) {
  JobRegistry r;
  StoredEvent error;
  error.kind = "nccl.ib_completion_error";
  error.labels = {{"host", "h1"}};
  error.attributes = {{"rank", "0"}, {"comm", "0x1"}};
  EXPECT_FALSE(r.Observe(error));
  StoredEvent no_rank;
  no_rank.kind = "nccl.comm_init";
  no_rank.labels = {{"host", "h1"}};
  no_rank.attributes = {{"comm", "0x1"}, {"comm_id", "0x1234567890"}};
  EXPECT_FALSE(r.Observe(no_rank));
  EXPECT_TRUE(r.All().empty());

  std::vector<StoredEvent> events = ParseNccl(
      {"h1:1:2 [0] NCCL INFO comm 0x7f01 rank 0 nranks 2 cudaDev 0 busId 1000 commId "
       "0x1111222233334444 - Init COMPLETE",
       "h1:1:2 [0] NCCL INFO comm 0x7f01 rank 0 nranks 2 cudaDev 0 busId 1000 - Destroy COMPLETE"},
      "h1");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].kind, "nccl.comm_destroy");
  EXPECT_EQ(ObserveAll(r, events), 1);
  ASSERT_EQ(r.All().size(), 1u);
  EXPECT_EQ(r.All()[0].name, "nccl-11112222");
}

}  // namespace
}  // namespace railwatch
