// ibnetdiscover topology files and ports reports as real sites captured them (CATALOGUE
// section I): each test asserts the facts the catalogue lists for its file.
#include "ib/ibnetdiscover.h"

#include <map>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ib_fixture.h"

namespace railwatch::ib::ibnetdiscover_test {

using ib_fixture::ReadIbFixture;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string Problems(const IbTopology& t) { return ib_fixture::ProblemsText(t.problems); }

IbTopology Read(const std::string& name) { return ParseIbnetdiscover(ReadIbFixture(name), name); }

// The port line of node `guid`'s port `port`; fails the test when there is none.
const IbLink& LinkAt(const IbTopology& t, uint64_t guid, int port) {
  for (const IbLink& link : t.links) {
    if (link.local.node_guid.value == guid && link.local.port == port) return link;
  }
  ADD_FAILURE() << "no link on " << std::hex << guid << std::dec << " port " << port;
  static const IbLink kNone;
  return kNone;
}

bool HasPort(const IbTopology& t, uint64_t guid, int port) {
  for (const IbLink& link : t.links) {
    if (link.local.node_guid.value == guid && link.local.port == port) return true;
  }
  return false;
}

std::map<std::string, int> GenerationCounts(const IbTopology& t) {
  std::map<std::string, int> counts;
  for (const IbLink& link : t.links) ++counts[link.speed.generation];
  return counts;
}

int CountNodes(const IbTopology& t, IbNodeType type) {
  int n = 0;
  for (const IbNode& node : t.nodes) n += node.type == type;
  return n;
}

const IbNode& Node(const IbTopology& t, uint64_t guid) {
  const IbNode* node = FindNode(t, guid);
  if (node == nullptr) {
    ADD_FAILURE() << "no node " << std::hex << guid;
    static const IbNode kNone;
    return kNone;
  }
  return *node;
}

// Selene head: 5 HDR leaves, sparse ports, a missing uplink, a SHARP aggregation node and a
// description with a trailing blank inside its quotes.
TEST(Ibnetdiscover, SeleneHeadSwitchBlocks) {
  const IbTopology t = Read("ibnetdiscover_01a_selene_superpod_hdr_666sw_head_excerpt.txt");
  EXPECT_THAT(t.problems, IsEmpty()) << Problems(t);
  EXPECT_EQ(t.generated_on, "Tue Feb 23 14:02:06 2021");
  EXPECT_EQ(t.initiated_from_node.value, 0x0c42a10300255562u);
  EXPECT_EQ(CountNodes(t, IbNodeType::kSwitch), 5);
  EXPECT_EQ(t.nodes.size(), 5u);
  EXPECT_EQ(t.links.size(), 84u);
  EXPECT_EQ(GenerationCounts(t), (std::map<std::string, int>{{"HDR", 84}}));
  for (const IbNode& node : t.nodes) {
    EXPECT_EQ(node.num_ports, 41);
    EXPECT_EQ(node.device_id, 0xd2f0u);
    EXPECT_EQ(node.enhanced_port0, true);
  }
  for (const IbLink& link : t.links) {
    EXPECT_EQ(link.speed.width_lanes, 4);
    EXPECT_EQ(link.speed.aggregate_gbps(), 200);
  }
  const IbNode& leaf = Node(t, 0x1c34da0300728866);
  EXPECT_EQ(leaf.description, "MF0;MLG01-02:MQM8700/U1");
  EXPECT_EQ(leaf.lid, 1600u);
  const IbLink& p1 = LinkAt(t, 0x1c34da0300728866, 1);
  ASSERT_TRUE(p1.peer);
  EXPECT_EQ(p1.peer->type, IbNodeType::kCa);
  EXPECT_EQ(p1.peer->node_guid.value, 0x1c34da0300608820u);
  EXPECT_EQ(p1.peer->port, 1);
  EXPECT_EQ(p1.peer->port_guid.value, 0x1c34da0300608820u);
  EXPECT_EQ(p1.peer->description, "selene-swift-01 HCA-2");
  EXPECT_EQ(p1.peer->lid, 837u);
  EXPECT_EQ(p1.local.lid, 1600u);
  const IbLink& p2 = LinkAt(t, 0x1c34da0300728866, 2);
  ASSERT_TRUE(p2.peer);
  EXPECT_EQ(p2.peer->description, "selene-cache-02 mlx5_1 ");  // the blank is the node's
  EXPECT_EQ(p2.peer->lid, 256u);
  for (int port : {39, 40}) {
    const IbLink& up = LinkAt(t, 0x1c34da0300728866, port);
    ASSERT_TRUE(up.peer);
    EXPECT_EQ(up.peer->type, IbNodeType::kSwitch);
    EXPECT_EQ(up.peer->node_guid.value, 0x1c34da030060a40cu);
    EXPECT_EQ(up.peer->port, port);
    EXPECT_EQ(up.peer->description, "MF0;CSPINE1-80:MQM8700/U1");
    EXPECT_EQ(up.peer->lid, 102u);
  }
  const IbLink& an = LinkAt(t, 0x1c34da0300728866, 41);
  ASSERT_TRUE(an.peer);
  EXPECT_EQ(an.peer->node_guid.value, 0x1c34da030072886eu);
  EXPECT_EQ(an.peer->description, "Mellanox Technologies Aggregation Node");
  EXPECT_EQ(an.peer->lid, 355u);

  // MLG01-05: 14 parallel links to one spine, ports 17-30 to its ports 1-14.
  EXPECT_EQ(Node(t, 0x0c42a1030079aeec).lid, 5113u);
  for (int port = 17; port <= 30; ++port) {
    const IbLink& link = LinkAt(t, 0x0c42a1030079aeec, port);
    ASSERT_TRUE(link.peer);
    EXPECT_EQ(link.peer->node_guid.value, 0x0c42a1030079ae0cu);
    EXPECT_EQ(link.peer->port, port - 16);
  }
  // LG28-08: hosts on mlx5_9, ports 5, 14, 15 and uplink 36 absent; CSPINE4-76 only on 26.
  const IbNode& lg28 = Node(t, 0x0c42a103009d7056);
  EXPECT_THAT(lg28.description, HasSubstr("LG28-08"));
  EXPECT_EQ(lg28.lid, 4820u);
  for (int port : {5, 14, 15, 36}) EXPECT_FALSE(HasPort(t, 0x0c42a103009d7056, port)) << port;
  std::set<int> cspine4_76_ports;
  for (const IbLink& link : t.links) {
    if (link.local.node_guid.value == 0x0c42a103009d7056u && link.peer &&
        link.peer->description.find("CSPINE4-76") != std::string::npos) {
      cspine4_76_ports.insert(link.local.port);
    }
  }
  EXPECT_EQ(cspine4_76_ports, std::set<int>{26});
}

// Selene tail: CA blocks, whose port lines carry the CA's own LID before the peer, and port
// GUIDs printed without their leading zero.
TEST(Ibnetdiscover, SeleneTailCaBlocks) {
  const IbTopology t = Read("ibnetdiscover_01b_selene_superpod_hdr_ca_blocks_tail_excerpt.txt");
  EXPECT_THAT(t.problems, IsEmpty()) << Problems(t);
  EXPECT_EQ(CountNodes(t, IbNodeType::kCa), 4);
  EXPECT_EQ(t.nodes.size(), 4u);
  for (const IbNode& node : t.nodes) EXPECT_EQ(node.device_id, 0x101bu);
  const IbNode& luna = Node(t, 0x0c42a1030025554e);
  EXPECT_EQ(luna.description, "luna-0196 mlx5_0");
  EXPECT_EQ(luna.num_ports, 1);
  const IbLink& link = LinkAt(t, 0x0c42a1030025554e, 1);
  EXPECT_EQ(link.local.type, IbNodeType::kCa);
  EXPECT_EQ(link.local.port_guid.text, "c42a1030025554e");
  EXPECT_EQ(link.local.port_guid.value, 0x0c42a1030025554eu);
  EXPECT_EQ(GuidString(link.local.port_guid), "0x0c42a1030025554e");
  EXPECT_EQ(link.local.lid, 3258u);
  ASSERT_TRUE(link.peer);
  EXPECT_EQ(link.peer->node_guid.value, 0x0c42a10300528086u);
  EXPECT_EQ(link.peer->port, 4);
  EXPECT_EQ(link.peer->description, "MF0;LG12-01:MQM8700/U1");
  EXPECT_EQ(link.peer->lid, 4490u);
  EXPECT_EQ(link.speed.generation, "HDR");
}

// The UFM lab: mixed generations and two self-loop cables on the SX6036.
TEST(Ibnetdiscover, LabMixedSpeedsAndSelfLoops) {
  const IbTopology t =
      Read("ibnetdiscover_02_nvidia_lab_mixed_hdr_edr_fdr_fdr10_self_loop_cable.txt");
  EXPECT_THAT(t.problems, IsEmpty()) << Problems(t);
  EXPECT_EQ(CountNodes(t, IbNodeType::kSwitch), 2);
  EXPECT_EQ(CountNodes(t, IbNodeType::kCa), 13);
  EXPECT_EQ(t.links.size(), 32u);
  EXPECT_EQ(GenerationCounts(t),
            (std::map<std::string, int>{{"HDR", 2}, {"EDR", 4}, {"FDR", 24}, {"FDR10", 2}}));
  const IbNode& mqm = Node(t, 0xb8599f0300fc6de4);
  EXPECT_EQ(mqm.description, "MF0;r-ufm-sw95:MQM8700/U1");
  EXPECT_EQ(mqm.num_ports, 41);
  EXPECT_EQ(mqm.lid, 13u);
  const IbLink& to_sx = LinkAt(t, 0xb8599f0300fc6de4, 3);
  ASSERT_TRUE(to_sx.peer);
  EXPECT_EQ(to_sx.peer->node_guid.value, 0x0002c903007b78b0u);
  EXPECT_EQ(to_sx.peer->port, 1);
  EXPECT_EQ(to_sx.speed.generation, "FDR");
  EXPECT_EQ(to_sx.speed.aggregate_gbps(), 56);
  for (int port : {23, 24}) {
    const IbLink& host = LinkAt(t, 0xb8599f0300fc6de4, port);
    ASSERT_TRUE(host.peer);
    EXPECT_EQ(host.peer->description, port == 23 ? "r-dcs96 HCA-1" : "r-dcs96 HCA-2");
    EXPECT_EQ(host.speed.generation, "EDR");
    EXPECT_EQ(host.speed.aggregate_gbps(), 100);
  }
  const IbLink& an = LinkAt(t, 0xb8599f0300fc6de4, 41);
  ASSERT_TRUE(an.peer);
  EXPECT_EQ(an.peer->description, "Mellanox Technologies Aggregation Node");
  EXPECT_EQ(an.speed.generation, "HDR");

  const IbNode& sx = Node(t, 0x0002c903007b78b0);
  EXPECT_EQ(sx.device_id, 0xc738u);
  EXPECT_EQ(sx.num_ports, 36);
  EXPECT_EQ(sx.lid, 19u);
  // Self-loops: the peer is the switch itself, 25<->26 at FDR10 and 28<->29 at FDR.
  for (auto [a, b, gen] : {std::tuple{25, 26, "FDR10"}, std::tuple{26, 25, "FDR10"},
                           std::tuple{28, 29, "FDR"}, std::tuple{29, 28, "FDR"}}) {
    const IbLink& loop = LinkAt(t, 0x0002c903007b78b0, a);
    ASSERT_TRUE(loop.peer);
    EXPECT_EQ(loop.peer->node_guid.value, loop.local.node_guid.value);
    EXPECT_EQ(loop.peer->port, b);
    EXPECT_EQ(loop.speed.generation, gen);
  }
  EXPECT_EQ(LinkAt(t, 0x0002c903007b78b0, 25).speed.aggregate_gbps(), 40);  // 4xFDR10
}

// PSMN X5: Voltaire and Mellanox QDR switches, old HCAs at DDR, generic descriptions.
TEST(Ibnetdiscover, VoltaireQdrDdrGenericDescriptions) {
  const IbTopology t = Read("ibnetdiscover_03_psmn_x5_voltaire_qdr_ddr_mixed_full.txt");
  EXPECT_THAT(t.problems, IsEmpty()) << Problems(t);
  EXPECT_EQ(CountNodes(t, IbNodeType::kSwitch), 11);
  EXPECT_EQ(CountNodes(t, IbNodeType::kCa), 89);
  EXPECT_EQ(t.links.size(), 318u);
  EXPECT_EQ(GenerationCounts(t), (std::map<std::string, int>{{"QDR", 272}, {"DDR", 46}}));
  int voltaire = 0, infiniscale = 0, enhanced = 0, base = 0;
  std::set<std::string> switch_descriptions;
  for (const IbNode& node : t.nodes) {
    if (node.type == IbNodeType::kCa) {
      EXPECT_EQ(node.description, "MT25408 ConnectX Mellanox Technologies");
      continue;
    }
    switch_descriptions.insert(node.description);
    voltaire += node.device_id == 0x5a5au && node.vendor_id == 0x8f1u;
    infiniscale += node.device_id == 0xbd36u;
    enhanced += node.enhanced_port0 == true;
    base += node.enhanced_port0 == false;
  }
  EXPECT_EQ(voltaire, 9);
  EXPECT_EQ(infiniscale, 2);
  EXPECT_GT(enhanced, 0);
  EXPECT_GT(base, 0);
  EXPECT_LT(switch_descriptions.size(), 11u);  // not unique: identity comes from GUIDs
  int as_peer = 0;
  for (const IbLink& link : t.links) {
    as_peer += link.peer && link.peer->node_guid.value == 0x0008f10500108c5cu;
  }
  EXPECT_EQ(as_peer, 19);
  const IbNode& first = t.nodes.front();
  EXPECT_EQ(first.guid.value, 0x0008f10500200b50u);
  EXPECT_EQ(first.lid, 9u);
  const IbLink& p1 = LinkAt(t, 0x0008f10500200b50, 1);
  ASSERT_TRUE(p1.peer);
  EXPECT_EQ(p1.peer->node_guid.value, 0x0008f10500108c5cu);
  EXPECT_EQ(p1.peer->port, 15);
  EXPECT_EQ(p1.peer->lid, 16u);
  EXPECT_EQ(p1.peer->description, "Voltaire 4036 # 4036-8C5C");  // a '#' inside the name
  EXPECT_EQ(p1.speed.generation, "QDR");
  const IbLink& p4 = LinkAt(t, 0x0008f10500200b50, 4);
  ASSERT_TRUE(p4.peer);
  EXPECT_EQ(p4.peer->node_guid.value, 0x003048c749cd0000u);
  EXPECT_EQ(p4.peer->port_guid.value, 0x003048c749cd0001u);
  EXPECT_EQ(p4.peer->lid, 72u);
  EXPECT_EQ(p4.speed.generation, "DDR");
  EXPECT_EQ(p4.speed.aggregate_gbps(), 20);
}

// A QM9700 in split mode (129 ports, 2xNDR) with redacted GUIDs and a poster's "...omitted".
TEST(Ibnetdiscover, RedactedGuidsKeepNodesAndLinks) {
  const IbTopology t =
      Read("ibnetdiscover_04_ndr200_2xndr_qm9700_129port_redacted_guids_omitted.txt");
  ASSERT_EQ(t.nodes.size(), 1u);
  const IbNode& sw = t.nodes.front();
  EXPECT_EQ(sw.type, IbNodeType::kSwitch);
  EXPECT_EQ(sw.num_ports, 129);
  EXPECT_EQ(sw.description, "MF0;CNTSN-POD229-QM97-IB-02:MQM9700/U1");
  EXPECT_EQ(sw.lid, 1u);
  EXPECT_EQ(sw.device_id, 0xd2f2u);
  EXPECT_FALSE(sw.guid.valid());
  EXPECT_EQ(sw.guid.text, "0x9c05<redacted>");
  ASSERT_EQ(t.links.size(), 5u);
  std::set<int> ports;
  for (const IbLink& link : t.links) {
    ports.insert(link.local.port);
    EXPECT_EQ(link.speed.width_lanes, 2);
    EXPECT_EQ(link.speed.generation, "NDR");
    EXPECT_EQ(link.speed.aggregate_gbps(), 200);  // NDR200
    ASSERT_TRUE(link.peer);
    EXPECT_FALSE(link.peer->node_guid.valid());
  }
  EXPECT_EQ(ports, (std::set<int>{1, 2, 3, 4, 6}));  // port 5 missing
  EXPECT_EQ(t.links.front().peer->description, "tj01-4090-node005 mlx5_2");
  EXPECT_EQ(t.links.front().peer->lid, 22u);
  // Problems: the redacted GUIDs (each where it stands) and the "...omitted" line.
  bool omitted = false, redacted_switch = false;
  for (const IbProblem& p : t.problems) {
    omitted |= p.where ==
               "ibnetdiscover_04_ndr200_2xndr_qm9700_129port_redacted_guids_"
               "omitted.txt:16:1";
    redacted_switch |= p.message.find("0x9c05<redacted>") != std::string::npos;
  }
  EXPECT_TRUE(omitted) << Problems(t);
  EXPECT_TRUE(redacted_switch) << Problems(t);
}

// A PuTTY log: banner, CRLF, all tabs lost; hosts whose LID is not assigned yet (65535).
TEST(Ibnetdiscover, PuttyLogWithoutTabsLeaf) {
  const IbTopology t =
      Read("ibnetdiscover_05a_putty_log_hdr_mqm8700_leaf_lid65535_crlf_tabs_lost_head.txt");
  EXPECT_THAT(t.problems, IsEmpty()) << Problems(t);
  EXPECT_EQ(t.generated_on, "Tue Jun 15 19:06:08 2021");
  ASSERT_EQ(t.nodes.size(), 1u);
  const IbNode& leaf = t.nodes.front();
  EXPECT_EQ(leaf.guid.value, 0x0c42a10300a9b026u);
  EXPECT_EQ(leaf.num_ports, 41);
  EXPECT_EQ(leaf.description, "MF0;sat11-0101-0927-20ib0:MQM8700/U1");
  EXPECT_EQ(leaf.enhanced_port0, true);
  EXPECT_EQ(leaf.lid, 3894u);
  EXPECT_EQ(t.links.size(), 36u);
  EXPECT_EQ(GenerationCounts(t), (std::map<std::string, int>{{"HDR", 36}}));
  for (int port = 1; port <= 8; ++port) {
    const IbLink& host = LinkAt(t, 0x0c42a10300a9b026, port);
    ASSERT_TRUE(host.peer);
    EXPECT_THAT(host.peer->description, HasSubstr("SAT111092710053 ibp"));
    EXPECT_EQ(host.peer->lid, 65535u);
    EXPECT_TRUE(IsUnassignedLid(*host.peer->lid));
  }
  const uint32_t lids[] = {4049, 4042, 4046, 4054, 4039, 4051, 4057, 4052};
  for (int port = 9; port <= 16; ++port) {
    const IbLink& host = LinkAt(t, 0x0c42a10300a9b026, port);
    ASSERT_TRUE(host.peer);
    EXPECT_THAT(host.peer->description, HasSubstr("SAT111092710037"));
    EXPECT_EQ(host.peer->lid, lids[port - 9]);
  }
  EXPECT_EQ(LinkAt(t, 0x0c42a10300a9b026, 9).peer->description, "SAT111092710037 ibp11s0f0");
  for (int port = 17; port <= 20; ++port) EXPECT_FALSE(HasPort(t, 0x0c42a10300a9b026, port));
  const IbLink& card = LinkAt(t, 0x0c42a10300a9b026, 21);
  ASSERT_TRUE(card.peer);
  EXPECT_EQ(card.peer->node_guid.value, 0x0c42a103008b5558u);
  EXPECT_EQ(card.peer->port, 20);
  EXPECT_EQ(card.peer->description, "MF0;sat11-0101-0903-01ib1-A:MCS8500/L16/U2");
  EXPECT_EQ(card.peer->lid, 175u);
}

// A CS8500 director line card: its chassis' sysimgguid, ports 1-20 down, 21-40 up.
TEST(Ibnetdiscover, PuttyLogDirectorLineCard) {
  const IbTopology t =
      Read("ibnetdiscover_05b_putty_log_hdr_cs8500_director_line_card_block_crlf.txt");
  EXPECT_THAT(t.problems, IsEmpty()) << Problems(t);
  ASSERT_EQ(t.nodes.size(), 1u);
  const IbNode& card = t.nodes.front();
  EXPECT_EQ(card.guid.value, 0x0c42a10300aeb7a2u);
  EXPECT_EQ(card.system_image_guid.value, 0x043f720300a4a54cu);
  EXPECT_NE(card.system_image_guid.value, card.guid.value);
  EXPECT_EQ(card.description, "MF0;sat11-0101-0901-01ib1-A:MCS8500/L20/U2");
  EXPECT_EQ(card.enhanced_port0, false);
  EXPECT_EQ(card.lid, 31u);
  EXPECT_EQ(t.links.size(), 40u);
  EXPECT_EQ(GenerationCounts(t), (std::map<std::string, int>{{"HDR", 40}}));
  for (const IbLink& link : t.links) {
    ASSERT_TRUE(link.peer);
    EXPECT_EQ(link.peer->port, 40);
    EXPECT_THAT(link.peer->description,
                HasSubstr(link.local.port <= 20 ? ":MQM8700/U1" : ":MCS8500/S"));
  }
  const IbLink& p1 = LinkAt(t, 0x0c42a10300aeb7a2, 1);
  EXPECT_EQ(p1.peer->node_guid.value, 0x0c42a1030087dcc4u);
  EXPECT_EQ(p1.peer->lid, 3905u);
  EXPECT_EQ(p1.peer->description, "MF0;sat11-0101-0927-01ib0:MQM8700/U1");
  const IbLink& p40 = LinkAt(t, 0x0c42a10300aeb7a2, 40);
  EXPECT_EQ(p40.peer->node_guid.value, 0x1c34da03005ebfc8u);
  EXPECT_EQ(p40.peer->lid, 46u);
  EXPECT_EQ(p40.peer->description, "MF0;sat11-0101-0901-01ib1-A:MCS8500/S20/U1");
}

// The log's tail: CA blocks (one ConnectX-4 at EDR) and the appliance's CLI prompt.
TEST(Ibnetdiscover, PuttyLogCaTailAndCliPrompt) {
  const std::string name =
      "ibnetdiscover_05c_putty_log_hdr_ca_blocks_edr_ufm_hosts_trailing_cli_prompt_tail.txt";
  const IbTopology t = Read(name);
  EXPECT_EQ(CountNodes(t, IbNodeType::kCa), 4);
  ASSERT_EQ(t.nodes.size(), 4u);
  ASSERT_EQ(t.links.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(t.nodes[i].device_id, 0x101bu);
    EXPECT_THAT(t.nodes[i].description, HasSubstr("SAT111090201003 ib"));
    EXPECT_EQ(t.links[i].speed.generation, "HDR");
  }
  EXPECT_EQ(t.nodes[2].description, "SAT111090201003 ibp11s0f0");
  const IbNode& ufm = t.nodes[3];
  EXPECT_EQ(ufm.device_id, 0x1013u);
  EXPECT_EQ(ufm.description, "sat11-0101-0902-02ufm HCA-1");
  const IbLink& link = t.links[3];
  EXPECT_EQ(link.local.lid, 2156u);
  ASSERT_TRUE(link.peer);
  EXPECT_EQ(link.peer->port, 17);
  EXPECT_EQ(link.speed.generation, "EDR");
  // The prompt is the one thing not understood, reported at its line (after the CR).
  ASSERT_EQ(t.problems.size(), 1u) << Problems(t);
  EXPECT_EQ(t.problems[0].where, name + ":28:2");
}

// ibdiagnet's copy: preamble, port labels after the port number, spaces for tabs.
TEST(Ibnetdiscover, IbdiagnetGeneratedPortLabels) {
  const IbTopology t =
      Read("ibnetdiscover_06_ibdiagnet_generated_ndr_quantum2_port_labels_excerpt.txt");
  EXPECT_THAT(t.problems, IsEmpty()) << Problems(t);
  EXPECT_EQ(CountNodes(t, IbNodeType::kSwitch), 3);
  EXPECT_EQ(t.links.size(), 75u);
  for (const IbLink& link : t.links) {
    EXPECT_EQ(link.speed.width_lanes, 4);
    EXPECT_EQ(link.speed.generation, "NDR");
    EXPECT_EQ(link.speed.aggregate_gbps(), 400);
    EXPECT_EQ(link.speed.lane_signal_gbps, 106.25);
  }
  const IbNode& spine = Node(t, 0xb0cf0e0300d33fc0);
  EXPECT_EQ(spine.description, "MF0;ib-switch-sequoia:MQM9700/U1");
  EXPECT_EQ(spine.num_ports, 65);
  EXPECT_EQ(spine.lid, 180u);
  std::set<uint64_t> leaves;
  for (int port = 1; port <= 8; ++port) {
    const IbLink& down = LinkAt(t, 0xb0cf0e0300d33fc0, port);
    ASSERT_TRUE(down.peer);
    EXPECT_EQ(down.peer->port, 63);
    leaves.insert(*down.peer->node_guid.value);
  }
  EXPECT_EQ(leaves.size(), 8u);
  EXPECT_EQ(LinkAt(t, 0xb0cf0e0300d33fc0, 1).local.port_label, "1/1/1");
  const IbLink& host = LinkAt(t, 0xfc6a1c030091cf00, 1);
  EXPECT_EQ(host.local.port_label, "1/1/1");
  ASSERT_TRUE(host.peer);
  EXPECT_EQ(host.peer->node_guid.value, 0x5c25730300e6706eu);
  EXPECT_EQ(host.peer->port_guid.value, 0x5c25730300e6706eu);
  EXPECT_EQ(host.peer->description, "is-north-7-compute-1 mlx5_8");
  EXPECT_EQ(host.peer->lid, 164u);
  const IbLink& an = LinkAt(t, 0xfc6a1c03008a5c00, 65);
  EXPECT_EQ(an.local.port_label, "65");
  ASSERT_TRUE(an.peer);
  EXPECT_EQ(an.peer->description, "Mellanox Technologies Aggregation Node");
  const IbLink& up = LinkAt(t, 0xfc6a1c030091cf00, 63);
  EXPECT_EQ(up.local.port_label, "1/32/1");
  EXPECT_EQ(up.peer->node_guid.value, 0xb0cf0e0300d33fc0u);
}

// The OSC ports report: both ends of each link, and unconnected ports ("???", SDR).
TEST(IbnetdiscoverPorts, OscCaAndSwitchLines) {
  const std::string name = "ibnetdiscover_p_01_osc_edr_ca_sw_lines_and_unconnected.txt";
  const IbTopology t = ParseIbnetdiscoverPorts(ReadIbFixture(name), name);
  EXPECT_THAT(t.problems, IsEmpty()) << Problems(t);
  ASSERT_EQ(t.links.size(), 9u);
  const IbLink& ca = t.links[0];
  EXPECT_EQ(ca.local.type, IbNodeType::kCa);
  EXPECT_EQ(ca.local.lid, 134u);
  EXPECT_EQ(ca.local.port, 1);
  EXPECT_EQ(ca.local.port_guid.value, 0x7cfe9003003b4bdeu);
  EXPECT_FALSE(ca.local.node_guid.valid());
  EXPECT_EQ(ca.speed.width_lanes, 4);
  EXPECT_EQ(ca.speed.generation, "EDR");
  ASSERT_TRUE(ca.peer);
  EXPECT_EQ(ca.peer->type, IbNodeType::kSwitch);
  EXPECT_EQ(ca.peer->lid, 1719u);
  EXPECT_EQ(ca.peer->port, 10);
  EXPECT_EQ(ca.peer->node_guid.value, 0x7cfe9003009ce5b0u);
  EXPECT_EQ(ca.local.description, "o0001 HCA-1");
  EXPECT_EQ(ca.peer->description, "ib-i1l1s01");
  const IbLink& isl = t.links[5];
  EXPECT_EQ(isl.local.lid, 1719u);
  EXPECT_EQ(isl.local.port, 1);
  ASSERT_TRUE(isl.peer);
  EXPECT_EQ(isl.peer->lid, 1516u);
  EXPECT_EQ(isl.peer->port, 1);
  EXPECT_EQ(isl.peer->node_guid.value, 0x7cfe900300b07320u);
  EXPECT_EQ(isl.peer->description, "ib-i1l2s01");
  const IbLink& p0001 = t.links[2];
  EXPECT_EQ(p0001.local.lid, 1432u);
  EXPECT_EQ(p0001.local.port_guid.value, 0x506b4b0300cc02a6u);
  EXPECT_EQ(p0001.peer->lid, 2052u);
  EXPECT_EQ(p0001.peer->port, 35);
  EXPECT_EQ(p0001.peer->node_guid.value, 0x506b4b03005c2740u);
  EXPECT_EQ(p0001.local.description, "p0001 HCA-1");
  EXPECT_EQ(p0001.peer->description, "ib-i4l1s01");
  const IbLink& down = t.links[7];
  EXPECT_FALSE(down.peer);
  EXPECT_EQ(down.local.port, 37);
  EXPECT_EQ(down.speed.generation, "???");
  EXPECT_FALSE(down.speed.known());
  EXPECT_EQ(down.local.description, "ib-i4l1s01");
  const IbLink& split = t.links[8];
  EXPECT_FALSE(split.peer);
  EXPECT_EQ(split.local.lid, 1781u);
  EXPECT_EQ(split.local.port, 80);
  EXPECT_EQ(split.local.node_guid.value, 0x08c0eb0300add20eu);
  EXPECT_EQ(split.speed.generation, "SDR");
  EXPECT_EQ(split.local.description, "ib-i7l2s01");
}

// The partly edited report: an aggregation node on split port 81, blanks inside names.
TEST(IbnetdiscoverPorts, EditedReportTolerated) {
  const std::string name = "ibnetdiscover_p_02_hdr_aggregation_node_split_port81_partly_edited.txt";
  const IbTopology t = ParseIbnetdiscoverPorts(ReadIbFixture(name), name);
  EXPECT_THAT(t.problems, IsEmpty()) << Problems(t);
  ASSERT_EQ(t.links.size(), 6u);
  const IbLink& an = t.links[0];
  EXPECT_EQ(an.local.lid, 78u);
  EXPECT_EQ(an.local.port_guid.value, 0x946dae0300630bfeu);
  EXPECT_EQ(an.speed.generation, "HDR");
  ASSERT_TRUE(an.peer);
  EXPECT_EQ(an.peer->lid, 51u);
  EXPECT_EQ(an.peer->port, 81);
  EXPECT_EQ(an.local.description, "Mellanox Technologies Aggregation Node");
  EXPECT_EQ(an.peer->description, "5FB0405-leaf-IB01 ");
  EXPECT_EQ(t.links[3].local.description, " 5FB0406-spine-IB02 ");
  const IbLink& spine = t.links[4];
  EXPECT_EQ(spine.local.port, 81);
  ASSERT_TRUE(spine.peer);
  EXPECT_EQ(spine.peer->type, IbNodeType::kCa);
  EXPECT_EQ(spine.local.description, " 5FB0406-spine-IB03 ");
  EXPECT_EQ(spine.peer->description, "Mellanox Technologies Aggregation Node");
  const IbLink& qdr = t.links[5];
  EXPECT_FALSE(qdr.peer);
  EXPECT_EQ(qdr.local.port, 22);
  EXPECT_EQ(qdr.speed.generation, "QDR");
  EXPECT_EQ(qdr.local.description, "Infiniscale-IV Mellanox Technologies");
}

// Damage the captures do not show: every bad line is a problem at its line and column, and
// what parsed around it stays.
TEST(Ibnetdiscover, BadLinesBecomeProblems) {
  const IbTopology t = ParseIbnetdiscover(
      "[1]\t\"S-0000000000000001\"[1]\t\t# \"x\" lid 1 4xHDR\n"
      "vendid=0xZZ\n"
      "Switch\t36 \"S-0000000000000002\"\t\t# \"sw\" enhanced port 0 lid 7 lmc 0\n"
      "[2]\t\"S-0000000000000003\"[5]\t\t# \"peer\" lid 9 4xQQR\n"
      "[3]\tgarbage\n"
      "[4]\t\"S-0000000000000003\"[6]\t\t# \"peer\" lid 9\n",
      "t.txt");
  ASSERT_EQ(t.nodes.size(), 1u);
  ASSERT_EQ(t.links.size(), 2u);
  EXPECT_EQ(t.links[0].speed.generation, "QQR");
  EXPECT_EQ(t.links[1].peer->lid, 9u);
  EXPECT_EQ(ib_fixture::ProblemPlaces(t.problems),
            (std::vector<std::string>{"t.txt:1:1", "t.txt:2:8", "t.txt:4:45", "t.txt:5:5",
                                      "t.txt:6:44"}));
}

}  // namespace railwatch::ib::ibnetdiscover_test
