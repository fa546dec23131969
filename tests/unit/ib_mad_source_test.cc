// The InfiniBand fabric scanner's MAD source (collectors/ib_mad_source.h) on simulated fabrics
// (collectors/ib_mad_transport_sim.h): discovery by directed route, PMA counters with their
// widths, nodes that do not answer, rediscovery, and the collector's series against the
// tool-output source's for the same fabric. And the libibmad transport failing to open here,
// where the kernel has no umad devices.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "collectors/ib_fabric_collector.h"
#include "collectors/ib_mad_source.h"
#include "collectors/ib_mad_transport_libibmad.h"
#include "collectors/ib_mad_transport_sim.h"
#include "collectors/ib_mad_transport_simdb.h"
#include "collectors/ib_source_spec.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/recording_emitter.h"

namespace railwatch::ib_mad_source_test {

using ::testing::HasSubstr;

// A fat tree (2 leaves x 3 hosts, 2 spines, 4xNDR), its transport and a source on a fake clock.
struct Rig {
  explicit Rig(SimFatTreeSpec spec = Small()) {
    absl::StatusOr<std::unique_ptr<SimIbFabric>> built = BuildSimFatTree(spec);
    EXPECT_TRUE(built.ok()) << built.status();
    fabric = std::shared_ptr<SimIbFabric>(*std::move(built));
  }
  static SimFatTreeSpec Small() {
    SimFatTreeSpec spec;
    spec.leaves = 2;
    spec.spines = 2;
    spec.hosts_per_leaf = 3;
    return spec;
  }
  // Built after the test has set the fabric up.
  IbMadSource& Source(int window = 1) {
    SimIbMadTransport::Options options;
    options.max_outstanding = window;
    auto t = std::make_unique<SimIbMadTransport>(fabric, options);
    transport = t.get();
    source = std::make_unique<IbMadSource>(IbMadSource::Options{absl::Minutes(5), kMaxDrHops, window},
                                           std::move(t), clock);
    return *source;
  }
  std::shared_ptr<SimIbFabric> fabric;
  FakeClock clock;
  SimIbMadTransport* transport = nullptr;
  std::unique_ptr<IbMadSource> source;
};

std::string G(uint64_t guid) { return absl::StrFormat("0x%016x", guid); }

// "guid:port>guid:port" for every link record.
std::multiset<std::string> LinkEnds(const IbFabricScan& scan) {
  std::multiset<std::string> ends;
  for (const ib::IbLink& l : scan.links) {
    EXPECT_TRUE(l.peer.has_value());
    if (!l.peer) continue;
    ends.insert(absl::StrCat(ib::GuidString(l.local.node_guid), ":", l.local.port, ">",
                             ib::GuidString(l.peer->node_guid), ":", l.peer->port));
  }
  return ends;
}

const ib::IbLink* LinkAt(const IbFabricScan& scan, uint64_t guid, int port) {
  for (const ib::IbLink& l : scan.links) {
    if (l.local.node_guid.value == guid && l.local.port == port) return &l;
  }
  return nullptr;
}

// The counter records of one switch port, by attribute.
std::map<ib::PmaAttribute, const ib::IbPortCounters*> CountersAt(const IbFabricScan& scan,
                                                                 uint64_t guid, int port) {
  std::map<ib::PmaAttribute, const ib::IbPortCounters*> out;
  for (const IbFabricScan::Counters& c : scan.counters) {
    if (c.port.node_guid.value == guid && c.port.port == port) out[c.port.attribute] = &c.port;
  }
  return out;
}

TEST(IbMadSourceTest, DiscoversAFatTreeEachNodeOnceAndEachCableFromBothEnds) {
  Rig rig;
  absl::StatusOr<IbFabricScan> scan = rig.Source().Scan();
  ASSERT_TRUE(scan.ok()) << scan.status();
  EXPECT_TRUE(scan->problems.empty()) << scan->problems[0].ToString();
  EXPECT_EQ(rig.source->discoveries(), 1);

  // 2 leaves, 2 spines, 6 HCAs, each once.
  std::set<std::string> guids;
  int switches = 0;
  for (const ib::IbNode& n : scan->nodes) {
    EXPECT_TRUE(guids.insert(ib::GuidString(n.guid)).second) << "twice: " << n.guid.text;
    if (n.type == ib::IbNodeType::kSwitch) {
      ++switches;
      EXPECT_TRUE(n.lid.has_value()) << n.description;
    }
  }
  EXPECT_EQ(scan->nodes.size(), 10u);
  EXPECT_EQ(switches, 4);
  const ib::IbNode* leaf1 = nullptr;
  for (const ib::IbNode& n : scan->nodes) {
    if (n.guid.value == SimLeafGuid(1)) leaf1 = &n;
  }
  ASSERT_NE(leaf1, nullptr);
  EXPECT_EQ(leaf1->description, "MF0;leaf-01:MQM9700/U1");
  EXPECT_EQ(leaf1->num_ports, 5);

  // 10 cables (6 HCAs, 2 leaves x 2 spines), each once from each end: 20 records, no two alike,
  // each with its reverse.
  const std::multiset<std::string> ends = LinkEnds(*scan);
  EXPECT_EQ(ends.size(), 20u);
  EXPECT_EQ(std::set<std::string>(ends.begin(), ends.end()).size(), 20u);
  for (const ib::IbLink& l : scan->links) {
    const std::string reverse = absl::StrCat(ib::GuidString(l.peer->node_guid), ":", l.peer->port,
                                             ">", ib::GuidString(l.local.node_guid), ":",
                                             l.local.port);
    EXPECT_EQ(ends.count(reverse), 1u) << reverse;
    EXPECT_EQ(l.speed.width_lanes, 4);
    EXPECT_EQ(l.speed.generation, "NDR");
    EXPECT_DOUBLE_EQ(l.speed.aggregate_gbps(), 400);
  }
  // Leaf 1's uplinks: port 4 to spine 1 port 1, port 5 to spine 2 port 1.
  EXPECT_EQ(ends.count(absl::StrCat(G(SimLeafGuid(1)), ":4>", G(SimSpineGuid(1)), ":1")), 1u);
  EXPECT_EQ(ends.count(absl::StrCat(G(SimLeafGuid(2)), ":5>", G(SimSpineGuid(2)), ":2")), 1u);
  // An HCA end carries its port GUID, LID and description (the host's name).
  const ib::IbLink* host = LinkAt(*scan, SimLeafGuid(2), 3);
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->peer->type, ib::IbNodeType::kCa);
  EXPECT_EQ(host->peer->node_guid.value, SimHostGuid(6));
  EXPECT_EQ(host->peer->port_guid.value, SimHostGuid(6));
  EXPECT_EQ(host->peer->description, "node-0006 mlx5_0");
  ASSERT_TRUE(host->peer->lid.has_value());
  EXPECT_EQ(*host->peer->lid, 6u);
  EXPECT_EQ(host->local.type, ib::IbNodeType::kSwitch);

  // Counters of every switch port (2 x 5 + 2 x 2), one PortCountersExtended each (it carries
  // the error counters, so PortCounters is not asked); none of an HCA.
  EXPECT_EQ(scan->counters.size(), 14u);
  EXPECT_EQ(rig.source->switch_ports(), 14u);
  for (const IbFabricScan::Counters& c : scan->counters) {
    EXPECT_EQ(c.port.attribute, ib::PmaAttribute::kPortCountersExtended);
    EXPECT_EQ(c.time_unix_nano, rig.clock.NowNanos());
    EXPECT_TRUE(c.port.counters.contains("PortXmitWait"));
  }
}

TEST(IbMadSourceTest, ReadsEveryWidthAndSpeedPortInfoCanSay) {
  auto fabric = std::make_shared<SimIbFabric>();
  const uint64_t hca = fabric->AddHca("scanner", "mlx5_0", 0x100);
  const uint64_t sw = fabric->AddSwitch("sw", 0x200, 8);
  const struct {
    int width;
    const char* generation;
    double gbps;
  } kLinks[] = {{4, "SDR", 10}, {4, "QDR", 40}, {4, "FDR10", 40}, {4, "FDR", 56},
                {4, "EDR", 100}, {4, "HDR", 200}, {2, "NDR", 200}, {1, "HDR", 50}};
  ASSERT_TRUE(fabric->Connect(hca, 1, sw, 1, 4, "SDR").ok());
  for (int i = 1; i < 8; ++i) {
    const uint64_t h = fabric->AddHca(absl::StrCat("h", i), "mlx5_0", 0x1000 + i * 16);
    ASSERT_TRUE(fabric->Connect(sw, i + 1, h, 1, kLinks[i].width, kLinks[i].generation).ok());
  }
  IbMadSource source({}, std::make_unique<SimIbMadTransport>(fabric, SimIbMadTransport::Options{}));
  absl::StatusOr<IbFabricScan> scan = source.Scan();
  ASSERT_TRUE(scan.ok()) << scan.status();
  for (int i = 0; i < 8; ++i) {
    const ib::IbLink* l = LinkAt(*scan, sw, i + 1);
    ASSERT_NE(l, nullptr) << i;
    EXPECT_EQ(l->speed.generation, kLinks[i].generation) << i;
    EXPECT_EQ(l->speed.width_lanes, kLinks[i].width) << i;
    EXPECT_DOUBLE_EQ(l->speed.aggregate_gbps(), kLinks[i].gbps) << i;
  }
  // XDR needs PortInfo's LinkSpeedExtActive2, which rdma-core 44 cannot decode: refused, not
  // guessed.
  EXPECT_FALSE(fabric->Connect(0x1010, 1, sw, 8, 4, "XDR").ok());
}

TEST(IbMadSourceTest, CountersKeepTheirPmaWidthsAndSaturate) {
  Rig rig;
  // Leaf 1: PortCountersExtended without the error counters (PortCounters is asked for them);
  // spine 1: no PortCountersExtended at all; leaf 2: everything in 64 bits.
  rig.fabric->FindNode(SimLeafGuid(1))->extended_error_counters = false;
  rig.fabric->FindNode(SimSpineGuid(1))->extended_counters = false;
  rig.fabric->Counters(SimLeafGuid(1), 1)["SymbolErrorCounter"] = 70000;
  rig.fabric->Counters(SimLeafGuid(1), 1)["PortXmitData"] = 5'000'000'000;
  rig.fabric->Counters(SimLeafGuid(1), 1)["PortXmitWait"] = 1234;
  rig.fabric->Counters(SimSpineGuid(1), 2)["LinkDownedCounter"] = 300;
  rig.fabric->Counters(SimSpineGuid(1), 2)["LocalLinkIntegrityErrors"] = 3;
  rig.fabric->Counters(SimLeafGuid(2), 4)["SymbolErrorCounter"] = 70000;
  absl::StatusOr<IbFabricScan> scan = rig.Source().Scan();
  ASSERT_TRUE(scan.ok()) << scan.status();

  auto leaf1 = CountersAt(*scan, SimLeafGuid(1), 1);
  ASSERT_EQ(leaf1.size(), 2u);
  const ib::IbPortCounters& basic = *leaf1[ib::PmaAttribute::kPortCounters];
  const ib::IbPortCounters& ext = *leaf1[ib::PmaAttribute::kPortCountersExtended];
  const ib::IbCounter& symbols = basic.counters.at("SymbolErrorCounter");
  EXPECT_EQ(symbols.width_bits, 16);
  EXPECT_EQ(symbols.value, 65535u);
  EXPECT_TRUE(symbols.saturated);
  EXPECT_FALSE(ext.counters.contains("SymbolErrorCounter"));
  EXPECT_EQ(basic.counters.at("PortXmitData").value, 4294967295u);
  EXPECT_TRUE(basic.counters.at("PortXmitData").saturated);
  EXPECT_EQ(ext.counters.at("PortXmitData").value, 5'000'000'000u);
  EXPECT_EQ(ext.counters.at("PortXmitData").width_bits, 64);
  EXPECT_FALSE(ext.counters.at("PortXmitData").saturated);
  EXPECT_TRUE(ext.counters.at("PortXmitData").data_4_octets);
  EXPECT_EQ(basic.counters.at("PortXmitWait").value, 1234u);
  EXPECT_EQ(basic.counters.at("PortXmitWait").width_bits, 32);
  EXPECT_EQ(basic.lid, rig.fabric->FindNode(SimLeafGuid(1))->lid);
  EXPECT_EQ(basic.node_guid.value, SimLeafGuid(1));

  auto spine1 = CountersAt(*scan, SimSpineGuid(1), 2);
  ASSERT_EQ(spine1.size(), 1u);
  const ib::IbPortCounters& old = *spine1.begin()->second;
  EXPECT_EQ(old.attribute, ib::PmaAttribute::kPortCounters);
  EXPECT_EQ(old.counters.at("LinkDownedCounter").width_bits, 8);
  EXPECT_EQ(old.counters.at("LinkDownedCounter").value, 255u);
  EXPECT_TRUE(old.counters.at("LinkDownedCounter").saturated);
  EXPECT_EQ(old.counters.at("LocalLinkIntegrityErrors").width_bits, 4);
  EXPECT_FALSE(old.counters.at("LocalLinkIntegrityErrors").saturated);

  auto leaf2 = CountersAt(*scan, SimLeafGuid(2), 4);
  ASSERT_EQ(leaf2.size(), 1u);
  const ib::IbCounter& wide = leaf2[ib::PmaAttribute::kPortCountersExtended]->counters.at(
      "SymbolErrorCounter");
  EXPECT_EQ(wide.value, 70000u);
  EXPECT_EQ(wide.width_bits, 64);
  EXPECT_FALSE(wide.saturated);
}

// A clock that moves on every reading, as a real one does between two MADs.
class TickingClock final : public Clock {
 public:
  absl::Time Now() const override { return now_ += absl::Milliseconds(1); }

 private:
  mutable absl::Time now_ = absl::FromUnixSeconds(1'700'000'000);
};

// A port whose PortCountersExtended lacks the error counters is asked PortCounters too, a
// moment later. Both readings carry the port's one time, so the collector keeps the counter
// with the larger count: the 64-bit PortXmitData, not PortCounters' 32-bit one stuck at all
// ones (which, read later, used to win).
TEST(IbMadSourceTest, APortsTwoAttributesAreOneReadingForTheCollector) {
  Rig rig;
  rig.fabric->FindNode(SimLeafGuid(1))->extended_error_counters = false;
  rig.fabric->Counters(SimLeafGuid(1), 1)["PortXmitData"] = 5'000'000'000;
  rig.fabric->Counters(SimLeafGuid(1), 1)["SymbolErrorCounter"] = 12;
  TickingClock clock;
  IbFabricCollector collector(
      {{{"agent", "ib"}}},
      std::make_unique<IbMadSource>(IbMadSource::Options{},
                                    std::make_unique<SimIbMadTransport>(
                                        rig.fabric, SimIbMadTransport::Options{}),
                                    clock));
  testing::RecordingEmitter out;
  ASSERT_TRUE(collector.Collect(out).ok());
  const std::string port = "{guid=\"0x0002c90300100001\",interface=\"1\",switch=\"leaf-01\"}";
  EXPECT_EQ(out.Get("fabric_rdma_port_transmit_bytes_total" + port), 5'000'000'000u * 4);
  EXPECT_EQ(out.Get("fabric_rdma_symbol_errors_total" + port), 12u);
}

TEST(IbMadSourceTest, ANodeThatDoesNotAnswerIsOneProblemAndTheRestOfTheScanStands) {
  Rig rig;
  SimIbFabric::Node* spine2 = rig.fabric->FindNode(SimSpineGuid(2));
  spine2->unresponsive = true;
  IbMadSource& source = rig.Source(/*window=*/4);
  absl::StatusOr<IbFabricScan> scan = source.Scan();
  ASSERT_TRUE(scan.ok()) << scan.status();
  // Spine 2 is behind port 5 of each leaf: one problem each, naming the port; the other nine
  // nodes and their links are there.
  ASSERT_EQ(scan->problems.size(), 2u);
  EXPECT_THAT(scan->problems[0].ToString(), HasSubstr("leaf-01 port 5 does not answer"));
  EXPECT_THAT(scan->problems[0].ToString(), HasSubstr("mad:DR 0,1,5"));
  EXPECT_EQ(scan->nodes.size(), 9u);
  EXPECT_EQ(scan->links.size(), 16u);
  EXPECT_NE(LinkAt(*scan, SimSpineGuid(1), 2), nullptr);
  EXPECT_EQ(scan->counters.size(), 12u);  // 2 x 5 leaf ports (port 5 is up) + spine 1's 2

  // Asked again, it still does not answer: no new problem.
  source.RequestDiscovery();
  scan = source.Scan();
  ASSERT_TRUE(scan.ok());
  EXPECT_TRUE(scan->problems.empty());
  EXPECT_EQ(source.discoveries(), 2);

  // It answers again: discovered, then its PMA stops answering: one problem, one switch's
  // counters missing, the rest read.
  spine2->unresponsive = false;
  source.RequestDiscovery();
  scan = source.Scan();
  ASSERT_TRUE(scan.ok());
  EXPECT_TRUE(scan->problems.empty());
  EXPECT_EQ(scan->nodes.size(), 10u);
  EXPECT_EQ(scan->counters.size(), 14u);
  spine2->unresponsive = true;
  scan = source.Scan();
  ASSERT_TRUE(scan.ok());
  ASSERT_EQ(scan->problems.size(), 1u);
  EXPECT_THAT(scan->problems[0].message, HasSubstr("switch spine-02"));
  EXPECT_THAT(scan->problems[0].message, HasSubstr("no answer"));
  EXPECT_EQ(scan->counters.size(), 12u);
  EXPECT_EQ(scan->nodes.size(), 10u);  // the topology stands until the next discovery
  scan = source.Scan();
  ASSERT_TRUE(scan.ok());
  EXPECT_TRUE(scan->problems.empty());  // reported once

  // The local port itself not answering fails the scan, naming the transport.
  rig.fabric->FindNode(SimHostGuid(1))->unresponsive = true;
  source.RequestDiscovery();
  absl::StatusOr<IbFabricScan> failed = source.Scan();
  ASSERT_FALSE(failed.ok());
  EXPECT_THAT(failed.status().message(), HasSubstr("sim: the local port does not answer"));
}

TEST(IbMadSourceTest, ASwitchWithoutALidIsDiscoveredButNotReadByLid) {
  Rig rig;
  rig.fabric->FindNode(SimSpineGuid(1))->lid = ib::kUnassignedLid;  // no subnet manager yet
  absl::StatusOr<IbFabricScan> scan = rig.Source().Scan();
  ASSERT_TRUE(scan.ok()) << scan.status();
  ASSERT_EQ(scan->problems.size(), 1u);
  EXPECT_THAT(scan->problems[0].message, HasSubstr("switch spine-01"));
  EXPECT_THAT(scan->problems[0].message, HasSubstr("has no LID"));
  EXPECT_EQ(scan->nodes.size(), 10u);
  EXPECT_EQ(scan->links.size(), 20u);
  EXPECT_EQ(scan->counters.size(), 12u);
  EXPECT_TRUE(CountersAt(*scan, SimSpineGuid(1), 1).empty());
}

TEST(IbMadSourceTest, RediscoversAfterTheIntervalAndWhenALinkGoesDownOrACableMoves) {
  Rig rig;
  IbMadSource& source = rig.Source();
  ASSERT_TRUE(source.Scan().ok());
  rig.clock.Advance(absl::Minutes(1));
  ASSERT_TRUE(source.Scan().ok());
  EXPECT_EQ(source.discoveries(), 1);
  rig.clock.Advance(absl::Minutes(4));
  ASSERT_TRUE(source.Scan().ok());
  EXPECT_EQ(source.discoveries(), 2);

  // Host 5's cable pulled: both ends count a link-down, the scan that reads it discovers again.
  ASSERT_TRUE(rig.fabric->Disconnect(SimLeafGuid(2), 2).ok());
  absl::StatusOr<IbFabricScan> scan = source.Scan();
  ASSERT_TRUE(scan.ok());
  EXPECT_EQ(source.discoveries(), 3);
  EXPECT_EQ(LinkAt(*scan, SimLeafGuid(2), 2), nullptr);
  EXPECT_EQ(scan->nodes.size(), 9u);
  EXPECT_EQ(scan->links.size(), 18u);
  // Its switch port is still read: its LinkDownedCounter says why the link is gone.
  auto down = CountersAt(*scan, SimLeafGuid(2), 2);
  ASSERT_EQ(down.size(), 1u);
  EXPECT_EQ(down.begin()->second->counters.at("LinkDownedCounter").value, 1u);

  // Leaf 2's cable to spine 2 (port 5) moved to leaf 2 port 2, spine 2's end kept.
  ASSERT_TRUE(rig.fabric->Disconnect(SimLeafGuid(2), 5).ok());
  ASSERT_TRUE(rig.fabric->Connect(SimLeafGuid(2), 2, SimSpineGuid(2), 2, 4, "NDR").ok());
  scan = source.Scan();
  ASSERT_TRUE(scan.ok());
  EXPECT_EQ(source.discoveries(), 4);
  EXPECT_EQ(LinkAt(*scan, SimLeafGuid(2), 5), nullptr);
  const ib::IbLink* moved = LinkAt(*scan, SimLeafGuid(2), 2);
  ASSERT_NE(moved, nullptr);
  EXPECT_EQ(moved->peer->node_guid.value, SimSpineGuid(2));
  EXPECT_EQ(moved->peer->port, 2);
  const ib::IbLink* back = LinkAt(*scan, SimSpineGuid(2), 2);
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back->peer->port, 2);

  // Nothing changed: no discovery.
  ASSERT_TRUE(source.Scan().ok());
  EXPECT_EQ(source.discoveries(), 4);
}

// The same fabric as the text ibnetdiscover and perfquery -x print, for the tool-output source.
std::string Ibnetdiscover(const SimIbFabric& fabric) {
  std::string out = "#\n# Topology file: generated by ib_mad_source_test\n#\n";
  for (const SimIbFabric::Node& n : fabric.nodes()) {
    const bool sw = n.type == ib::IbNodeType::kSwitch;
    const std::string guid = absl::StrFormat("%016x", n.guid);
    absl::StrAppendFormat(&out, "\nvendid=0x%x\ndevid=0x%x\nsysimgguid=0x%s\n", n.vendor_id,
                          n.device_id, guid);
    if (sw) {
      absl::StrAppendFormat(&out, "switchguid=0x%s(%s)\nSwitch\t%d \"S-%s\"\t\t# \"%s\" enhanced "
                            "port 0 lid %d lmc 0\n",
                            guid, guid, n.num_ports(), guid, n.description, n.lid);
    } else {
      absl::StrAppendFormat(&out, "caguid=0x%s\nCa\t%d \"H-%s\"\t\t# \"%s\"\n", guid,
                            n.num_ports(), guid, n.description);
    }
    for (int p = 1; p <= n.num_ports(); ++p) {
      const SimIbFabric::Port& port = n.ports[static_cast<size_t>(p)];
      if (!port.peer) continue;
      const SimIbFabric::Node& peer = *fabric.FindNode(port.peer->guid);
      const SimIbFabric::Port& far = peer.ports[static_cast<size_t>(port.peer->port)];
      const bool peer_sw = peer.type == ib::IbNodeType::kSwitch;
      const std::string speed = absl::StrCat(port.width_lanes, "x", port.generation);
      const uint32_t peer_lid = peer_sw ? peer.lid : far.lid;
      std::string peer_ref = absl::StrFormat("\"%s-%016x\"[%d]", peer_sw ? "S" : "H", peer.guid,
                                             port.peer->port);
      if (!peer_sw) absl::StrAppendFormat(&peer_ref, "(%x)", far.port_guid);
      if (sw) {
        absl::StrAppendFormat(&out, "[%d]\t%s\t\t# \"%s\" lid %d %s\n", p, peer_ref,
                              peer.description, peer_lid, speed);
      } else {
        absl::StrAppendFormat(&out, "[%d](%x) \t%s\t\t# lid %d lmc 0 \"%s\" lid %d %s\n", p,
                              port.port_guid, peer_ref, port.lid, peer.description, peer_lid,
                              speed);
      }
    }
  }
  return out;
}

std::string PerfqueryExtended(const SimIbFabric& fabric) {
  std::string out;
  const char* kNames[] = {"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts",
                          "PortUnicastXmitPkts", "PortUnicastRcvPkts", "PortMulticastXmitPkts",
                          "PortMulticastRcvPkts", "SymbolErrorCounter",
                          "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
                          "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors",
                          "PortXmitDiscards", "PortXmitConstraintErrors",
                          "PortRcvConstraintErrors", "LocalLinkIntegrityErrors",
                          "ExcessiveBufferOverrunErrors", "VL15Dropped", "PortXmitWait",
                          "QP1Dropped"};
  for (const SimIbFabric::Node& n : fabric.nodes()) {
    if (n.type != ib::IbNodeType::kSwitch) continue;
    for (int p = 1; p <= n.num_ports(); ++p) {
      const SimIbFabric::Port& port = n.ports[static_cast<size_t>(p)];
      if (!port.peer) continue;
      absl::StrAppendFormat(&out,
                            "# Port extended counters: Lid %d port %d (CapMask: 0x5300 "
                            "CapMask2: 0x0000002)\nPortSelect:......................%d\n",
                            n.lid, p, p);
      for (const char* name : kNames) {
        auto it = port.counters.find(name);
        absl::StrAppendFormat(&out, "%s:....%d\n", name, it != port.counters.end() ? it->second : 0);
      }
    }
  }
  return out;
}

// Every series' value, the collector's own railwatch_* ones left out (they count inputs).
std::map<std::string, double> Values(const testing::RecordingEmitter& out) {
  std::map<std::string, double> values;
  for (const auto& [key, v] : out.counters) {
    if (!key.starts_with("railwatch_")) values[key] = static_cast<double>(v);
  }
  for (const auto& [key, v] : out.gauges) {
    if (!key.starts_with("railwatch_")) values[key] = v;
  }
  return values;
}

TEST(IbMadSourceTest, TheCollectorGivesTheSameSeriesAsFromToolOutputOfTheSameFabric) {
  Rig rig;
  rig.fabric->Counters(SimLeafGuid(1), 4)["PortXmitWait"] = 2'000'000;
  rig.fabric->Counters(SimLeafGuid(1), 4)["PortXmitData"] = 123'456'789'012;
  rig.fabric->Counters(SimLeafGuid(2), 1)["SymbolErrorCounter"] = 7;
  rig.fabric->Counters(SimSpineGuid(2), 1)["PortXmitDiscards"] = 42;
  rig.fabric->Counters(SimSpineGuid(2), 1)["LinkDownedCounter"] = 3;

  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("railwatch-ib-mad-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "fabric.topo") << Ibnetdiscover(*rig.fabric);
  std::ofstream(dir / "switches.pq") << PerfqueryExtended(*rig.fabric);
  IbFabricCollector from_files({{{"agent", "ib"}}},
                               std::make_unique<IbToolOutputSource>(
                                   IbToolOutputSource::Options{dir.string()}));
  testing::RecordingEmitter files_out;
  ASSERT_TRUE(from_files.Collect(files_out).ok());
  std::filesystem::remove_all(dir);

  SimIbMadTransport::Options options;
  auto transport = std::make_unique<SimIbMadTransport>(rig.fabric, options);
  IbFabricCollector from_mads({{{"agent", "ib"}}},
                              std::make_unique<IbMadSource>(IbMadSource::Options{},
                                                            std::move(transport), rig.clock));
  testing::RecordingEmitter mads_out;
  ASSERT_TRUE(from_mads.Collect(mads_out).ok());

  const std::map<std::string, double> want = Values(files_out);
  const std::map<std::string, double> got = Values(mads_out);
  // 14 switch ports x 21 counter series + 14 link infos + 14 rates.
  EXPECT_EQ(want.size(), 14u * 21 + 14 + 14);
  EXPECT_EQ(got, want);
  EXPECT_EQ(got.at("fabric_rdma_port_transmit_wait_total{guid=\"0x0002c90300100001\","
                   "interface=\"4\",switch=\"leaf-01\"}"),
            2'000'000);
  EXPECT_EQ(got.at("fabric_ib_link_info{guid=\"0x0002c90300100002\",interface=\"3\","
                   "neighbor_guid=\"0x0c42a10300000060\",neighbor_port=\"0x0c42a10300000060\","
                   "neighbor_system=\"node-0006\",speed=\"NDR\",switch=\"leaf-02\",width=\"4x\"}"),
            1);
  EXPECT_EQ(mads_out.GetGauge("railwatch_ib_scan_switch_ports{agent=\"ib\"}"), 14);
}

// railwatch-sim --fabric=ib's subnet served as MADs (--ib_source=simdb:FILE): a db_csv rebuilt
// as a SimIbFabric and scanned by the MAD source gives the collector the links, rates and
// counters the tool-output source reads from the same file. On the real 272-node NDR capture.
TEST(IbMadSourceTest, ADbCsvServedAsMadsGivesTheSeriesOfTheFileItself) {
  const std::string file = std::string(RAILWATCH_SOURCE_DIR) +
                           "/tests/fixtures/ib/db_csv_01_ndr_quantum2_mqm9700_272nodes_full_run_"
                           "complete.db_csv";
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("railwatch-ib-simdb-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(file, dir / "ibdiagnet2.db_csv",
                             std::filesystem::copy_options::overwrite_existing);
  IbFabricCollector from_file({{{"agent", "ib"}}},
                              std::make_unique<IbToolOutputSource>(
                                  IbToolOutputSource::Options{dir.string()}));
  testing::RecordingEmitter file_out;
  ASSERT_TRUE(from_file.Collect(file_out).ok());

  absl::StatusOr<std::unique_ptr<IbFabricSource>> simdb =
      MakeIbFabricSource(absl::StrCat("simdb:", (dir / "ibdiagnet2.db_csv").string()), {});
  ASSERT_TRUE(simdb.ok()) << simdb.status();
  IbFabricCollector from_mads({{{"agent", "ib"}}}, *std::move(simdb));
  testing::RecordingEmitter mads_out;
  ASSERT_TRUE(from_mads.Collect(mads_out).ok());
  std::filesystem::remove_all(dir);

  const std::map<std::string, double> want = Values(file_out);
  const std::map<std::string, double> got = Values(mads_out);
  int links = 0, compared = 0;
  std::vector<std::string> differ;
  for (const auto& [key, value] : want) {
    const bool link = key.starts_with("fabric_ib_link_info{") ||
                      key.starts_with("fabric_rdma_port_rate_bytes_per_second{");
    // The counters every port's PMA has; the file's N/A and -1 (unsupported) are absent
    // there, while a simulated PMA has every counter.
    const bool counter = key.starts_with("fabric_rdma_port_transmit_wait_total{") ||
                         key.starts_with("fabric_rdma_port_transmit_bytes_total{") ||
                         key.starts_with("fabric_rdma_symbol_errors_total{") ||
                         key.starts_with("fabric_rdma_link_downed_total{") ||
                         key.starts_with("fabric_rdma_port_transmit_discards_total{");
    if (!link && !counter) continue;
    links += link ? 1 : 0;
    ++compared;
    auto it = got.find(key);
    if (it == got.end() || it->second != value) differ.push_back(key);
  }
  EXPECT_GT(links, 500);
  EXPECT_GT(compared, 1500);
  EXPECT_TRUE(differ.empty()) << differ.size() << " differ, e.g. " << differ.front();
}

TEST(IbMadSourceTest, TheSimdbTransportReadsTheFileAgainWhenItChanges) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("railwatch-ib-simdb-reload-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "ibdiagnet2.db_csv").string();
  auto write = [&](uint64_t symbol_errors) {
    std::ofstream(path) << absl::StrFormat(
        "START_NODES\nNodeDesc,NumPorts,NodeType,NodeGUID\n"
        "\"MF0;leaf-a:MQM9700/U1\",2,2,0x00000000000000a0\n\"host-1 mlx5_0\",1,1,0x0000000000000001\n"
        "END_NODES\n\n\nSTART_PORTS\nNodeGuid,PortGuid,PortNum,LID,LinkWidthActv,LinkSpeedActv,"
        "PortPhyState,PortState\n0x00000000000000a0,0x00000000000000a0,1,0,2,2052,5,4\n"
        "0x0000000000000001,0x0000000000000001,1,2,2,2052,5,4\nEND_PORTS\n\n\n"
        "START_LINKS\nNodeGuid1,PortNum1,NodeGuid2,PortNum2\n"
        "0x00000000000000a0,1,0x0000000000000001,1\nEND_LINKS\n\n\n"
        "START_PM_INFO\nNodeGUID,PortGUID,PortNumber,SymbolErrorCounterExt\n"
        "0x00000000000000a0,0x00000000000000a0,1,%d\nEND_PM_INFO\n",
        symbol_errors);
  };
  write(3);
  SimDbMadTransport::Options options;
  options.path = path;
  options.recheck = absl::ZeroDuration();
  absl::StatusOr<std::unique_ptr<SimDbMadTransport>> t = SimDbMadTransport::Open(options);
  ASSERT_TRUE(t.ok()) << t.status();
  SimDbMadTransport* transport = t->get();
  IbMadSource source(IbMadSource::Options{}, *std::move(t));
  absl::StatusOr<IbFabricScan> scan = source.Scan();
  ASSERT_TRUE(scan.ok()) << scan.status();
  EXPECT_EQ(scan->nodes.size(), 2u);
  auto symbol_errors = [](const IbFabricScan& s) -> uint64_t {
    for (const IbFabricScan::Counters& c : s.counters) {
      if (c.port.attribute != ib::PmaAttribute::kPortCountersExtended) continue;
      if (auto it = c.port.counters.find("SymbolErrorCounter"); it != c.port.counters.end()) {
        return it->second.value;
      }
    }
    return 0;
  };
  EXPECT_EQ(symbol_errors(*scan), 3u);
  // A rewrite with another size: the next queries see it.
  write(1234);
  scan = source.Scan();
  ASSERT_TRUE(scan.ok());
  EXPECT_EQ(symbol_errors(*scan), 1234u);
  EXPECT_EQ(transport->loads(), 2);
  std::filesystem::remove_all(dir);

  options.path = (dir / "missing.db_csv").string();
  absl::StatusOr<std::unique_ptr<SimDbMadTransport>> missing = SimDbMadTransport::Open(options);
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("missing.db_csv: no such file"));
}

TEST(IbMadSourceTest, ParallelQueriesGiveTheSameScanAsSerialOnes) {
  SimFatTreeSpec spec;
  spec.leaves = 6;
  spec.spines = 3;
  spec.hosts_per_leaf = 5;
  spec.uplinks = 2;
  Rig serial(spec), parallel(spec);
  parallel.fabric->FindNode(SimSpineGuid(3))->unresponsive = true;
  serial.fabric->FindNode(SimSpineGuid(3))->unresponsive = true;
  absl::StatusOr<IbFabricScan> a = serial.Source(1).Scan();
  absl::StatusOr<IbFabricScan> b = parallel.Source(8).Scan();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(LinkEnds(*a), LinkEnds(*b));
  EXPECT_EQ(a->nodes.size(), b->nodes.size());
  EXPECT_EQ(a->nodes.size(), 6u + 2 + 30);
  EXPECT_EQ(a->counters.size(), b->counters.size());
  EXPECT_EQ(a->problems.size(), 12u);  // 6 leaves x 2 cables to spine 3
  EXPECT_EQ(b->problems.size(), a->problems.size());
  EXPECT_EQ(serial.source->queries_sent(), parallel.source->queries_sent());
}

TEST(IbMadSourceTest, SourcesFromTheAgentsFlag) {
  absl::StatusOr<std::unique_ptr<IbFabricSource>> sim =
      MakeIbFabricSource("sim:leaves=3,spines=2,hosts_per_leaf=4,speed=HDR", {});
  ASSERT_TRUE(sim.ok()) << sim.status();
  absl::StatusOr<IbFabricScan> scan = (*sim)->Scan();
  ASSERT_TRUE(scan.ok()) << scan.status();
  EXPECT_EQ(scan->nodes.size(), 3u + 2 + 12);
  EXPECT_EQ(scan->links[0].speed.generation, "HDR");

  EXPECT_TRUE(MakeIbFabricSource("tools:/nonexistent", {}).ok());  // may appear later
  for (const char* bad : {"tools:", "simdb:", "simdb:/nonexistent/ibdiagnet2.db_csv", "sim:leaves=x", "sim:racks=2", "mad:mlx5_0:port", "ufm:x",
                          "/var/lib/railwatch/ib"}) {
    absl::StatusOr<std::unique_ptr<IbFabricSource>> s = MakeIbFabricSource(bad, {});
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_THAT(s.status().message(), HasSubstr(absl::StrCat("--ib_source=", bad, ": ")));
  }
}

// This machine's kernel has no RDMA: no umad device, so opening fails, and says which CA and
// why, instead of crashing or hanging.
TEST(IbMadSourceTest, TheLibibmadTransportFailsToOpenWithTheCaAndTheReason) {
  ASSERT_FALSE(std::filesystem::exists("/sys/class/infiniband_mad/abi_version"))
      << "this test expects a machine without umad devices";
  LibibmadTransport::Options options;
  options.ca = "mlx5_0";
  options.port = 1;
  absl::StatusOr<std::unique_ptr<LibibmadTransport>> t = LibibmadTransport::Open(options);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(t.status().message(), HasSubstr("cannot open CA mlx5_0 port 1 for MADs"));
  EXPECT_THAT(t.status().message(), HasSubstr("ib_umad"));

  absl::StatusOr<std::unique_ptr<IbFabricSource>> s = MakeIbFabricSource("mad:mlx5_0:1", {});
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("--ib_source=mad:mlx5_0:1: cannot open CA mlx5_0"));
}

}  // namespace railwatch::ib_mad_source_test
