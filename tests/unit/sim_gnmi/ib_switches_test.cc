// The simulator's InfiniBand switches (sim/ib_switches.h): the subnet it writes as ibdiagnet's
// db_csv, read back with the scanner's own reader (ib/ibdiagnet_db.h), and what each IB fault
// does to the PMA counters, the widths and the links.
#include "sim/ib_switches.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ib/ibdiagnet_db.h"
#include "sim/topology_writer.h"
#include "support/ttar.h"
#include "topology/topology.h"

namespace railwatch::sim {
namespace ib_switches_test {

using ::railwatch::testing::TempDir;

const absl::Time kStart = absl::FromUnixSeconds(1'800'000'000);

// 4 hosts x 2 HCAs, a leaf per rail (ports 1-4 hosts, 5-6 spines), 2 spines (ports 1-2).
struct Fabric {
  std::unique_ptr<SwitchFabric> switches;
  std::unique_ptr<IbSwitchModel> ib;
  std::string dir;
};
Fabric Build(const std::string& dir, IbSwitchModel::Options io) {
  SwitchFabric::Options so;
  so.hosts = 4;
  so.nics_per_host = 2;
  so.spines = 2;
  so.infiniband = true;
  so.benign_pause_rate = 0;
  Fabric f;
  absl::StatusOr<std::unique_ptr<SwitchFabric>> sw = SwitchFabric::Create(so, kStart);
  EXPECT_TRUE(sw.ok()) << sw.status();
  if (!sw.ok()) return f;
  f.switches = std::move(*sw);
  io.dir = dir;
  io.write_interval = absl::Milliseconds(100);  // every tick: the file is the model now
  f.dir = dir;
  absl::StatusOr<std::unique_ptr<IbSwitchModel>> ib =
      IbSwitchModel::Create(std::move(io), *f.switches, kStart);
  EXPECT_TRUE(ib.ok()) << ib.status();
  if (ib.ok()) f.ib = std::move(*ib);
  return f;
}

// Every HCA at 100 Gb/s each way, for `seconds` in 100 ms ticks.
void Play(Fabric& f, double from_s, double seconds) {
  for (int t = 1; t <= static_cast<int>(seconds * 10); ++t) {
    const absl::Time now = kStart + absl::Seconds(from_s) + absl::Milliseconds(100 * t);
    std::vector<NicTraffic> nics;
    const double elapsed = absl::ToDoubleSeconds(now - kStart);
    for (int h = 1; h <= 4; ++h) {
      for (int n = 0; n < 2; ++n) {
        NicTraffic t2;
        t2.host = h;
        t2.nic = n;
        t2.tx_bytes = t2.rx_bytes = static_cast<uint64_t>(elapsed * 12.5e9);
        t2.tx_packets = t2.rx_packets = t2.tx_bytes / 4096;
        nics.push_back(t2);
      }
    }
    ASSERT_TRUE(f.switches->Update(now, nics).ok());
    ASSERT_TRUE(f.ib->Update(now).ok());
  }
}

// The counters of the written file, by "switch-guid/port" and PMA name.
std::map<std::string, std::map<std::string, uint64_t>> Counters(const ib::IbdiagnetDb& db) {
  std::map<std::string, std::map<std::string, uint64_t>> out;
  for (const ib::IbPortCounters& r : db.counters) {
    if (r.counters.empty() || !r.port) continue;
    for (const auto& [name, c] : r.counters) {
      out[absl::StrCat(ib::GuidString(r.node_guid), "/", *r.port)][name] = c.value;
    }
  }
  return out;
}

ib::IbdiagnetDb ReadBack(const Fabric& f) {
  std::ifstream in(f.ib->DbCsvPath());
  std::stringstream text;
  text << in.rdbuf();
  ib::IbdiagnetDb db = ib::ParseIbdiagnetDbCsv(text.str(), "ibdiagnet2.db_csv");
  EXPECT_TRUE(db.problems.empty()) << db.problems.front().message;
  return db;
}

std::string Port(int switch_index, int port) {
  return absl::StrCat(ib::GuidString(ib::IbGuid{"", IbSwitchModel::SwitchGuid(switch_index)}), "/",
                      port);
}

TEST(IbSwitches, WritesTheSubnetAsIbdiagnetDoes) {
  TempDir tmp;
  Fabric f = Build(tmp.path() + "/ib", {});
  ASSERT_NE(f.ib, nullptr);
  Play(f, 0, 3);
  ASSERT_TRUE(std::filesystem::exists(f.ib->DbCsvPath()));
  EXPECT_FALSE(std::filesystem::exists(tmp.path() + "/ib/.ibdiagnet2.db_csv"));
  const ib::IbdiagnetDb db = ReadBack(f);
  // 2 leaves and 2 spines, 8 HCAs; each HCA's cable and each leaf-spine cable once.
  ASSERT_EQ(db.nodes.size(), 12u);
  EXPECT_EQ(db.nodes[0].description, "MF0;leaf-r0:MQM9700/U1");
  EXPECT_EQ(db.nodes[0].num_ports, 6);
  EXPECT_EQ(db.nodes[4].description, "gpu-node-001 mlx5_0");
  ASSERT_EQ(db.links.size(), 8u + 4u);
  // An HCA's end carries its port GUID (PORTS), as its host's GID 0 has it.
  const ib::IbLink& hca = db.links[0];
  ASSERT_TRUE(hca.peer.has_value());
  EXPECT_EQ(hca.peer->type, ib::IbNodeType::kCa);
  EXPECT_EQ(ib::GuidString(hca.peer->port_guid), "0xb83fd20300010000");
  for (const ib::IbdiagnetPort& p : db.ports) {
    if (p.port == 0) continue;
    EXPECT_EQ(p.speed.width_lanes, 4);
    EXPECT_EQ(p.speed.generation, "NDR");
  }
  // The leaf's host ports carry the HCAs' traffic (4-octet words); waits stay benign.
  const auto counters = Counters(db);
  const auto& leaf_port = counters.at(Port(0, 1));
  const double bytes = static_cast<double>(leaf_port.at("PortXmitData")) * 4;
  EXPECT_GT(bytes, 2 * 12.5e9);  // the switch fabric mirrors from its first tick on
  EXPECT_LE(bytes, 3 * 12.5e9);
  for (const auto& [port, c] : counters) {
    EXPECT_LT(c.at("PortXmitWait"), 3 * 30000u + 1) << port;
    EXPECT_EQ(c.at("SymbolErrorCounter"), 0u) << port;
    EXPECT_EQ(c.at("LinkDownedCounter"), 0u) << port;
  }
}

TEST(IbSwitches, SlowReceiverWaitsSpreadUpstreamEachHopLess) {
  TempDir tmp;
  IbSwitchModel::Options io;
  io.slow_receivers.push_back({"gpu-node-002", "mlx5_1", absl::Seconds(1)});
  Fabric f = Build(tmp.path(), io);
  ASSERT_NE(f.ib, nullptr);
  Play(f, 0, 5);
  const auto c = Counters(ReadBack(f));
  // leaf-r1 (switch 1) port 2 faces the HCA; spine-0 and spine-1 (switches 2, 3) port 2 face
  // leaf-r1; leaf-r0's uplinks (ports 5, 6) face the spines.
  const uint64_t root = c.at(Port(1, 2)).at("PortXmitWait");
  const uint64_t spine = c.at(Port(2, 2)).at("PortXmitWait");
  const uint64_t uplink = c.at(Port(0, 5)).at("PortXmitWait");
  const uint64_t other_host_port = c.at(Port(1, 3)).at("PortXmitWait");
  EXPECT_GT(root, 1e8);  // 3e7 ticks/s for about 4 s
  EXPECT_GT(root, spine);
  EXPECT_GT(spine, uplink);
  EXPECT_GT(uplink, 1e7);
  EXPECT_LT(other_host_port, 200000u);  // a benign port
  EXPECT_LT(c.at(Port(1, 5)).at("PortXmitWait"), 200000u);  // leaf-r1 sends nothing up more
}

TEST(IbSwitches, LinkFaults) {
  TempDir tmp;
  IbSwitchModel::Options io;
  io.port_faults.push_back({.type = IbPortFault::Type::kBadCable, .switch_name = "leaf-r0",
                            .port = 5, .at = absl::Seconds(1), .per_minute = 600});
  io.port_faults.push_back({.type = IbPortFault::Type::kWidthDegrade, .switch_name = "leaf-r1",
                            .port = 6, .at = absl::Seconds(1), .width = 1});
  io.port_faults.push_back({.type = IbPortFault::Type::kFlap, .switch_name = "spine-0",
                            .port = 1, .at = absl::Seconds(1), .down_for = absl::Seconds(2)});
  io.port_faults.push_back({.type = IbPortFault::Type::kDiscards, .switch_name = "leaf-r0",
                            .port = 3, .at = absl::Seconds(1), .per_minute = 120});
  io.ground_truth_file = tmp.path() + "/truth.jsonl";
  Fabric f = Build(tmp.path() + "/ib", io);
  ASSERT_NE(f.ib, nullptr);
  Play(f, 0, 2);
  // The flap is under way: the leaf-r0 port 5 <-> spine-0 port 1 cable is gone from LINKS.
  ib::IbdiagnetDb db = ReadBack(f);
  EXPECT_EQ(db.links.size(), 11u);
  Play(f, 2, 4);
  db = ReadBack(f);
  EXPECT_EQ(db.links.size(), 12u);
  const auto c = Counters(db);
  // Bad cable: 600 a minute for 5 s at the leaf's receiver only.
  EXPECT_NEAR(static_cast<double>(c.at(Port(0, 5)).at("SymbolErrorCounter")), 50, 2);
  EXPECT_GT(c.at(Port(0, 5)).at("PortRcvErrors"), 0u);
  EXPECT_EQ(c.at(Port(2, 1)).at("SymbolErrorCounter"), 0u);
  // Flap: one link down at both ends.
  EXPECT_EQ(c.at(Port(0, 5)).at("LinkDownedCounter"), 1u);
  EXPECT_EQ(c.at(Port(2, 1)).at("LinkDownedCounter"), 1u);
  EXPECT_EQ(c.at(Port(0, 6)).at("LinkDownedCounter"), 0u);
  // Discards: 120 a minute for 5 s.
  EXPECT_NEAR(static_cast<double>(c.at(Port(0, 3)).at("PortXmitDiscards")), 10, 1);
  // Width: leaf-r1 port 6 and its far end, spine-1 port 2, trained 1x; the rest 4x.
  std::map<std::string, int> widths;
  for (const ib::IbdiagnetPort& p : db.ports) {
    widths[absl::StrCat(ib::GuidString(p.node_guid), "/", p.port)] = p.speed.width_lanes;
  }
  EXPECT_EQ(widths.at(Port(1, 6)), 1);
  EXPECT_EQ(widths.at(Port(3, 2)), 1);
  EXPECT_EQ(widths.at(Port(1, 5)), 4);
  // No ground truth without a kind to give it (sim/fault_truth.h); the faults ran anyway.
  EXPECT_FALSE(std::filesystem::exists(io.ground_truth_file) &&
               std::filesystem::file_size(io.ground_truth_file) > 0);
}

TEST(IbSwitches, RefusesFaultsTheFabricDoesNotHave) {
  TempDir tmp;
  SwitchFabric::Options so;
  so.hosts = 4;
  so.nics_per_host = 2;
  so.spines = 2;
  so.infiniband = true;
  absl::StatusOr<std::unique_ptr<SwitchFabric>> sw = SwitchFabric::Create(so, kStart);
  ASSERT_TRUE(sw.ok());
  auto make = [&](IbPortFault fault) {
    IbSwitchModel::Options io;
    io.dir = tmp.path();
    io.port_faults.push_back(std::move(fault));
    return IbSwitchModel::Create(io, **sw, kStart).status();
  };
  EXPECT_EQ(make({.switch_name = "leaf-r9"}).message(),
            "IB fault target leaf-r9 is not a simulated switch");
  EXPECT_EQ(make({.switch_name = "leaf-r0", .port = 7}).message(),
            "IB fault target leaf-r0 port 7: it has ports 1-6");
  EXPECT_NE(make({.type = IbPortFault::Type::kFlap, .switch_name = "leaf-r0", .port = 2})
                .message()
                .find("faces gpu-node-002 mlx5_0"),
            std::string::npos);
  IbSwitchModel::Options io;
  io.dir = tmp.path();
  io.slow_receivers.push_back({"gpu-node-009", "mlx5_0", absl::Seconds(1)});
  EXPECT_FALSE(IbSwitchModel::Create(io, **sw, kStart).ok());
}

// The topology file of an IB fabric: ports numbered from 1, no dialect; it loads.
TEST(IbSwitches, TopologyFileNumbersPorts) {
  TempDir tmp;
  Fabric f = Build(tmp.path() + "/ib", {});
  ASSERT_NE(f.switches, nullptr);
  const std::string path = tmp.path() + "/topology.yaml";
  ASSERT_TRUE(WriteTopologyFile(path, f.switches->switches(), 4, 2, {}, true).ok());
  absl::StatusOr<Topology> t = Topology::LoadFile(path);
  ASSERT_TRUE(t.ok()) << t.status();
  const TopologyPortPeer* peer = t->PeerOf("leaf-r1", "3");
  ASSERT_NE(peer, nullptr);
  EXPECT_EQ(peer->system, "gpu-node-003");
  EXPECT_EQ(peer->device, "mlx5_1");
  peer = t->PeerOf("leaf-r1", "6");
  ASSERT_NE(peer, nullptr);
  EXPECT_EQ(peer->system, "spine-1");
  EXPECT_EQ(peer->port, "2");
  for (const TopologySwitch& sw : t->switches()) EXPECT_EQ(sw.dialect, "") << sw.name;
}

}  // namespace ib_switches_test
}  // namespace railwatch::sim
