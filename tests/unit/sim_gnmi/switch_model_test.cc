// The simulated switches' model, and the targets and topology files written for them.
#include "sim/switch_model.h"

#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "sim/topology_writer.h"
#include "support/ttar.h"
#include "topology/lldp_check.h"
#include "topology/topology.h"
#include "unit/sim_gnmi/sim_gnmi_fixture.h"
#include "unit/sim_kinds_truth.h"
#include "yaml-cpp/yaml.h"

namespace railwatch::sim {
namespace switch_model_test {

// (--pfc_storm's parser is its kind's: tests/unit/fault_flags_test.cc.)
TEST(SwitchFlags, ParseMiswiresAndDialects) {
  absl::StatusOr<LldpMiswire> m = ParseLldpMiswire("leaf-r2/Ethernet8");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->switch_name, "leaf-r2");
  EXPECT_EQ(m->port, "Ethernet8");
  EXPECT_FALSE(ParseLldpMiswire("leaf-r2").ok());
  for (const char* name : {"sonic", "arista-eos", "openconfig", "cumulus"}) {
    absl::StatusOr<Dialect> d = ParseDialect(name);
    ASSERT_TRUE(d.ok()) << name;
    EXPECT_EQ(DialectName(*d), name);
  }
  EXPECT_FALSE(ParseDialect("junos").ok());
}

std::unique_ptr<SwitchFabric> Build(SwitchFabric::Options o) {
  absl::StatusOr<std::unique_ptr<SwitchFabric>> f =
      SwitchFabric::Create(o, absl::FromUnixSeconds(1'800'000'000));
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? std::move(*f) : nullptr;
}

TEST(SwitchFabric, RailOptimisedPlanWithDialectsPerSwitch) {
  SwitchFabric::Options o;
  o.hosts = 3;
  o.nics_per_host = 4;
  o.spines = 2;
  o.dialects = {"sonic", "cumulus", "leaf-r3=arista-eos", "spine-1=openconfig"};
  auto f = Build(o);
  ASSERT_NE(f, nullptr);
  const auto& sw = f->switches();
  ASSERT_EQ(sw.size(), 6u);
  EXPECT_EQ(sw[0].name, "leaf-r0");
  EXPECT_EQ(sw[0].dialect, Dialect::kSonic);
  EXPECT_EQ(sw[1].dialect, Dialect::kCumulus);
  EXPECT_EQ(sw[2].dialect, Dialect::kSonic);
  EXPECT_EQ(sw[3].dialect, Dialect::kAristaEos);
  EXPECT_EQ(sw[4].name, "spine-0");
  EXPECT_EQ(sw[5].dialect, Dialect::kOpenConfig);
  // Host i on panel position i-1, then one uplink per spine.
  ASSERT_EQ(sw[0].ports.size(), 5u);
  EXPECT_EQ(sw[0].ports[2].name, "Ethernet8");
  EXPECT_EQ(sw[0].ports[2].peer, "gpu-node-003");
  EXPECT_EQ(sw[0].ports[2].peer_device, "mlx5_0");
  EXPECT_EQ(sw[1].ports[0].name, "swp1");
  EXPECT_EQ(sw[3].ports[4].name, "Ethernet5");
  EXPECT_TRUE(sw[3].ports[4].uplink);
  EXPECT_EQ(sw[3].ports[4].peer, "spine-1");
  EXPECT_EQ(sw[3].ports[4].peer_port, "Ethernet4");
  EXPECT_EQ(sw[5].ports[3].peer, "leaf-r3");
  EXPECT_EQ(f->LeafPortOf("gpu-node-002", "mlx5_3"), std::make_pair(3, 1));

  o.dialects = {"leaf-r9=sonic"};
  EXPECT_FALSE(SwitchFabric::Create(o, absl::Now()).ok());
  o.dialects = {};
  o.storms.push_back({"gpu-node-009", "mlx5_0", absl::Seconds(1)});
  EXPECT_FALSE(SwitchFabric::Create(o, absl::Now()).ok());
}

std::vector<NicTraffic> Traffic(int hosts, int nics, uint64_t bytes) {
  return testing::EveryNic(hosts, nics, bytes, bytes / 2);
}

PortCounters Counters(const SwitchFabric& f, int sw, int port) {
  return testing::CountersOf(f, sw, port);
}

TEST(SwitchFabric, PortsMirrorTheirNicsAndUplinksCarryAShare) {
  SwitchFabric::Options o;
  o.hosts = 2;
  o.nics_per_host = 2;
  o.spines = 1;
  auto f = Build(o);
  const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);
  ASSERT_TRUE(f->Update(t0 + absl::Seconds(1), Traffic(2, 2, 1'000'000'000)).ok());
  ASSERT_TRUE(f->Update(t0 + absl::Seconds(2), Traffic(2, 2, 3'000'000'000)).ok());
  const PortCounters host = Counters(*f, 1, 0);
  EXPECT_EQ(host.in_octets, 3'000'000'000u);
  EXPECT_EQ(host.out_octets, 1'500'000'000u);
  EXPECT_EQ(host.queue_octets[kRocePriority], host.out_octets);
  const PortCounters uplink = Counters(*f, 1, 2);
  EXPECT_GT(uplink.out_octets, 0u);
  EXPECT_LT(uplink.out_octets, host.in_octets);
  // The spine's port toward leaf-r1 sees the same link from the other side.
  const PortCounters spine = Counters(*f, 2, 1);
  EXPECT_EQ(spine.in_octets, uplink.out_octets);
  EXPECT_EQ(spine.out_octets, uplink.in_octets);
}

TEST(SwitchFabric, FlapsCountCarrierTransitionsAndTheSameSeedGivesTheSameCounters) {
  SwitchFabric::Options o;
  o.hosts = 2;
  o.nics_per_host = 2;
  o.seed = 7;
  auto a = Build(o);
  auto b = Build(o);
  o.seed = 8;
  auto c = Build(o);
  const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);
  for (int i = 1; i <= 50; ++i) {
    std::vector<NicTraffic> t = Traffic(2, 2, 1'000'000ull * i);
    t[3].up = i < 10 || i > 12;  // gpu-node-002/mlx5_1 flaps
    for (auto* f : {a.get(), b.get(), c.get()})
      ASSERT_TRUE(f->Update(t0 + absl::Seconds(i), t).ok());
  }
  EXPECT_EQ(Counters(*a, 1, 1).carrier_transitions, 2u);
  EXPECT_EQ(Counters(*a, 1, 0).carrier_transitions, 0u);
  EXPECT_EQ(Counters(*a, 0, 0).in_pfc, Counters(*b, 0, 0).in_pfc);
  EXPECT_GT(Counters(*a, 0, 0).in_pfc[kRocePriority], 0u) << "benign pauses";
  EXPECT_NE(Counters(*a, 0, 0).in_pfc, Counters(*c, 0, 0).in_pfc);
}

TEST(SwitchFabric, FaultsAreWrittenAsGroundTruth) {
  railwatch::testing::TempDir dir;
  SwitchFabric::Options o;
  o.hosts = 2;
  o.nics_per_host = 2;
  o.ground_truth_file = dir.path() + "/truth.jsonl";
  o.storms.push_back({"gpu-node-002", "mlx5_1", absl::Seconds(2), absl::Seconds(5)});
  o.miswires.push_back({"leaf-r0", "Ethernet0"});
  railwatch::sim::testing::GiveKindsTruth(o);
  auto f = Build(o);
  const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);
  for (int i = 1; i <= 3; ++i) ASSERT_TRUE(f->Update(t0 + absl::Seconds(i), Traffic(2, 2, i)).ok());
  std::ifstream in(o.ground_truth_file);
  std::string miswire, storm, extra;
  ASSERT_TRUE(std::getline(in, miswire));
  ASSERT_TRUE(std::getline(in, storm));
  EXPECT_FALSE(std::getline(in, extra));
  YAML::Node m = YAML::Load(miswire);  // JSON is YAML
  EXPECT_EQ(m["fault"].as<std::string>(), "lldp_miswire");
  EXPECT_EQ(m["expected"].as<std::string>(), "gpu-node-001");
  EXPECT_EQ(m["reported"].as<std::string>(), "gpu-node-002");
  YAML::Node s = YAML::Load(storm);
  EXPECT_EQ(s["fault"].as<std::string>(), "pfc_storm");
  EXPECT_EQ(s["switch"].as<std::string>(), "leaf-r1");
  EXPECT_EQ(s["port"].as<std::string>(),
            "Ethernet2");  // leaf-r1 runs arista-eos: host 2 on Ethernet2
  EXPECT_EQ(s["injected_at_unix_nano"].as<int64_t>(), absl::ToUnixNanos(t0 + absl::Seconds(2)));
}

TEST(TopologyWriter, TargetsAndTopologyFilesParseWithTheExpectedEntries) {
  railwatch::testing::TempDir dir;
  SwitchFabric::Options o;
  o.hosts = 3;
  o.nics_per_host = 2;
  o.spines = 1;
  o.dialects = {"sonic", "cumulus"};
  o.miswires.push_back({"leaf-r1", "swp2"});
  auto f = Build(o);
  const std::vector<std::string> addresses = {"127.0.0.1:50051", "127.0.0.1:50052",
                                              "127.0.0.1:50053"};
  TargetsFileOptions to;
  to.username = "admin";
  to.password = "s3cret";
  const std::string targets = dir.path() + "/targets.yaml";
  ASSERT_TRUE(WriteTargetsFile(targets, f->switches(), addresses, to).ok());
  YAML::Node t = YAML::LoadFile(targets);
  EXPECT_EQ(t["defaults"]["sample_interval"].as<std::string>(), "1s");
  EXPECT_EQ(t["defaults"]["username"].as<std::string>(), "admin");
  EXPECT_FALSE(t["defaults"]["password"]) << "the password goes to a file of its own";
  std::ifstream pw(t["defaults"]["password_file"].as<std::string>());
  std::string password;
  std::getline(pw, password);
  EXPECT_EQ(password, "s3cret");
  ASSERT_EQ(t["targets"].size(), 3u);
  EXPECT_EQ(t["targets"][1]["name"].as<std::string>(), "leaf-r1");
  EXPECT_EQ(t["targets"][1]["address"].as<std::string>(), "127.0.0.1:50052");
  EXPECT_EQ(t["targets"][1]["profile"].as<std::string>(), "cumulus");
  EXPECT_EQ(t["targets"][2]["profile"].as<std::string>(), "sonic");

  const std::string topo = dir.path() + "/topology.yaml";
  ASSERT_TRUE(WriteTopologyFile(topo, f->switches(), 3, 2).ok());
  YAML::Node y = YAML::LoadFile(topo);
  ASSERT_EQ(y["hosts"].size(), 3u);
  YAML::Node nic = y["hosts"][2]["nics"][1];
  EXPECT_EQ(nic["device"].as<std::string>(), "mlx5_1");
  EXPECT_EQ(nic["netdev"].as<std::string>(), SysfsFabric::NetdevName(1));
  EXPECT_EQ(nic["rail"].as<int>(), 1);
  EXPECT_EQ(nic["switch"].as<std::string>(), "leaf-r1");
  EXPECT_EQ(nic["port"].as<std::string>(), "swp3");
  ASSERT_EQ(y["switches"].size(), 3u);
  EXPECT_EQ(y["switches"][0]["dialect"].as<std::string>(), "sonic");
  EXPECT_EQ(y["switches"][0]["links"][0]["port"].as<std::string>(), "Ethernet12");
  EXPECT_EQ(y["switches"][0]["links"][0]["peer"].as<std::string>(), "spine-0");
  EXPECT_EQ(y["switches"][2]["role"].as<std::string>(), "spine");

  // The project's own loader accepts it, and the LLDP check finds the miswired port.
  absl::StatusOr<Topology> loaded = Topology::LoadFile(topo);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  for (const SimSwitch& sw : f->switches()) {
    for (const SwitchPort& p : sw.ports) {
      const LldpCheck check =
          CheckLldpNeighbor(*loaded, sw.name, p.name, p.lldp_system_name, p.lldp_port_id);
      const bool miswired = sw.name == "leaf-r1" && p.name == "swp2";
      EXPECT_EQ(check.verdict,
                miswired ? LldpCheck::Verdict::kMismatch : LldpCheck::Verdict::kMatch)
          << sw.name << " " << p.name;
    }
  }
}

}  // namespace switch_model_test
}  // namespace railwatch::sim
