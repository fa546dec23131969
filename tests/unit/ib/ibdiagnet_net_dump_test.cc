// ibdiagnet2.net_dump and .net_dump_ext from one real NDR fabric (CATALOGUE section L): a leaf's
// block with two FEC modes and 31 down ports, the flat extended table with its blank BER columns,
// and its tail of HCA rows with PCI labels and spine rows whose description holds ':'.
#include "ib/ibdiagnet_net_dump.h"

#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ib_fixture.h"

namespace railwatch::ib::ibdiagnet_net_dump_test {

using ib_fixture::ProblemPlaces;
using ib_fixture::ProblemsText;
using ib_fixture::Crlf;
using ib_fixture::LineOf;
using ib_fixture::ReadIbFixture;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const char kLeaf[] = "net_dump_01_ndr_quantum2_leaf_lid24_fec_modes_down_ports_excerpt.txt";
const char kExt[] = "net_dump_ext_01_ndr_header_ber_columns_empty_switch_lid24_excerpt.txt";
const char kExtTail[] = "net_dump_ext_02_ndr_hca_pci_labels_and_spine_desc_with_colon_tail.txt";

const IbdiagnetNetDumpPort& Row(const IbdiagnetNetDump& d, uint64_t guid, int port) {
  for (const IbdiagnetNetDumpPort& p : d.ports) {
    if (p.node_guid.value == guid && p.port == port) return p;
  }
  ADD_FAILURE() << std::hex << guid << std::dec << " port " << port;
  static const IbdiagnetNetDumpPort kNone;
  return kNone;
}

void ExpectNdr4x(const IbdiagnetNetDumpPort& p) {
  EXPECT_EQ(p.speed.width_lanes, 4);
  EXPECT_EQ(p.speed.generation, "NDR");  // LSA 100 is per lane
  EXPECT_EQ(p.speed.lane_gbps, 100);
  EXPECT_EQ(p.speed.aggregate_gbps(), 400);
}

TEST(IbdiagnetNetDump, LeafBlockPortsStatesFecModesAndNeighbours) {
  const IbdiagnetNetDump d = ParseIbdiagnetNetDump(ReadIbFixture(kLeaf), kLeaf);
  EXPECT_TRUE(d.problems.empty()) << ProblemsText(d.problems);
  EXPECT_FALSE(d.extended);
  ASSERT_EQ(d.nodes.size(), 1u);
  EXPECT_EQ(d.nodes[0].type, IbNodeType::kSwitch);
  EXPECT_EQ(d.nodes[0].guid.value, 0xb0cf0e0300e5b940u);
  EXPECT_EQ(d.nodes[0].description, "Quantum-2 Mellanox Technologies");
  EXPECT_EQ(d.nodes[0].lid, 24u);
  EXPECT_EQ(d.nodes[0].num_ports, 65);
  ASSERT_EQ(d.ports.size(), 65u);

  const IbdiagnetNetDumpPort& p1 = d.ports[0];
  EXPECT_EQ(p1.vendor, "Mellanox");
  EXPECT_EQ(p1.node_description, "Quantum-2 Mellanox Technologies");
  EXPECT_EQ(p1.lid, 24u);
  EXPECT_EQ(p1.port_label, "1/1/1");
  EXPECT_EQ(p1.port, 1);
  EXPECT_EQ(p1.state, "ACT");
  EXPECT_EQ(p1.state_code, 4);
  EXPECT_EQ(p1.phys_state, "LINK UP");
  EXPECT_EQ(p1.phys_state_code, 5);
  EXPECT_EQ(p1.mtu_code, 5);
  ExpectNdr4x(p1);
  EXPECT_EQ(p1.fec_mode, "RS_FEC_544_514");
  EXPECT_EQ(p1.retransmission, "NO-RTR");
  EXPECT_EQ(p1.neighbor_guid.value, 0x5c25730300c06f60u);
  EXPECT_EQ(p1.neighbor_port_label, "B184D0F0/0/0/1");
  EXPECT_FALSE(p1.neighbor_port.has_value());  // the HCA's rows are not in the excerpt
  EXPECT_EQ(p1.neighbor_lid, 156u);
  EXPECT_EQ(p1.neighbor_description, "is-north-7-compute-1 mlx5_10");
  EXPECT_FALSE(p1.raw_ber.has_value());  // net_dump has no BER columns
  EXPECT_EQ(p1.where, std::string(kLeaf) + ":17");

  EXPECT_EQ(Row(d, 0xb0cf0e0300e5b940u, 5).fec_mode, "MLNX_RS_271_257_PLR");
  EXPECT_EQ(Row(d, 0xb0cf0e0300e5b940u, 31).state, "ACT");  // 1/16/1: up in this run
  std::set<std::string> fec;
  int down = 0;
  for (const IbdiagnetNetDumpPort& p : d.ports) {
    if (!p.fec_mode.empty()) fec.insert(p.fec_mode);
    if (p.state != "DOWN") continue;
    ++down;
    // Down rows keep what they have: label, number, states; the rest is absent.
    EXPECT_EQ(p.phys_state, "POLL");
    EXPECT_EQ(p.state_code, 1);
    EXPECT_EQ(p.phys_state_code, 2);
    EXPECT_FALSE(p.mtu_code.has_value());
    EXPECT_EQ(p.speed.width_lanes, 0);
    EXPECT_EQ(p.speed.generation, "");
    EXPECT_EQ(p.fec_mode, "");
    EXPECT_TRUE(p.neighbor_guid.text.empty());
    EXPECT_FALSE(p.neighbor_lid.has_value());
    EXPECT_EQ(p.neighbor_description, "");
  }
  EXPECT_EQ(down, 31);
  EXPECT_EQ(fec, (std::set<std::string>{"RS_FEC_544_514", "MLNX_RS_271_257_PLR"}));
  EXPECT_EQ(Row(d, 0xb0cf0e0300e5b940u, 33).port_label, "1/17/1");

  const IbdiagnetNetDumpPort& up = Row(d, 0xb0cf0e0300e5b940u, 63);
  EXPECT_EQ(up.port_label, "1/32/1");
  EXPECT_EQ(up.neighbor_guid.value, 0xb0cf0e0300d33fc0u);
  EXPECT_EQ(up.neighbor_port_label, "1/2/1");
  EXPECT_EQ(up.neighbor_lid, 180u);
  EXPECT_EQ(up.neighbor_description, "MF0;ib-switch-sequoia:MQM9700/U1");
  const IbdiagnetNetDumpPort& sharp = Row(d, 0xb0cf0e0300e5b940u, 65);
  EXPECT_EQ(sharp.port_label, "65");
  EXPECT_EQ(sharp.neighbor_guid.value, 0xb0cf0e0300e5b948u);
  EXPECT_EQ(sharp.neighbor_port, 1);  // a label that is a port number
  EXPECT_EQ(sharp.neighbor_lid, 25u);
  EXPECT_EQ(sharp.neighbor_description, "Mellanox Technologies Aggregation Node");
  EXPECT_EQ(sharp.fec_mode, "");

  // The ports with a neighbour are links from the switch.
  const std::vector<IbLink> links = d.Links();
  ASSERT_EQ(links.size(), 34u);
  EXPECT_EQ(links[0].local.type, IbNodeType::kSwitch);
  EXPECT_EQ(links[0].local.node_guid.value, 0xb0cf0e0300e5b940u);
  EXPECT_EQ(links[0].local.port, 1);
  EXPECT_EQ(links[0].local.port_label, "1/1/1");
  ASSERT_TRUE(links[0].peer.has_value());
  EXPECT_EQ(links[0].peer->node_guid.value, 0x5c25730300c06f60u);
  EXPECT_EQ(links[0].peer->description, "is-north-7-compute-1 mlx5_10");
  EXPECT_EQ(links[0].speed.aggregate_gbps(), 400);
}

TEST(IbdiagnetNetDump, ExtendedTableWithBlankBerColumns) {
  const IbdiagnetNetDump d = ParseIbdiagnetNetDump(ReadIbFixture(kExt), kExt);
  EXPECT_TRUE(d.problems.empty()) << ProblemsText(d.problems);
  EXPECT_TRUE(d.extended);
  ASSERT_EQ(d.ports.size(), 66u);
  const IbdiagnetNetDumpPort& ca = d.ports[0];
  EXPECT_EQ(ca.node_type, IbNodeType::kCa);
  EXPECT_EQ(ca.port_label, "1");
  EXPECT_EQ(ca.port, 1);
  EXPECT_EQ(ca.node_guid.value, 0xb0cf0e0300d33fc8u);
  EXPECT_EQ(ca.lid, 185u);  // "185  (0xb9 )"
  EXPECT_EQ(ca.state, "ACT");
  EXPECT_EQ(ca.phys_state, "LINK UP");
  ExpectNdr4x(ca);
  EXPECT_EQ(ca.neighbor_lid, 180u);  // "180   (65)"
  EXPECT_EQ(ca.neighbor_port_label, "65");
  EXPECT_EQ(ca.fec_mode, "");  // N/A
  EXPECT_EQ(ca.retransmission, "NO-RTR");
  EXPECT_EQ(ca.node_description, "Mellanox Technologies Aggregation Node");
  EXPECT_EQ(ca.vendor, "");
  EXPECT_FALSE(ca.mtu_code.has_value());  // no MTU column
  int switch_rows = 0;
  for (const IbdiagnetNetDumpPort& p : d.ports) {
    // All five BER / error columns are blank in this real file: absent, never 0.
    EXPECT_FALSE(p.raw_ber.has_value());
    EXPECT_FALSE(p.effective_ber.has_value());
    EXPECT_FALSE(p.symbol_ber.has_value());
    EXPECT_FALSE(p.symbol_errors.has_value());
    EXPECT_FALSE(p.effective_errors.has_value());
    if (p.node_type != IbNodeType::kSwitch) continue;
    ++switch_rows;
    EXPECT_EQ(p.node_guid.value, 0xb0cf0e0300e5b940u);
    EXPECT_EQ(p.lid, 24u);  // "24   (0x18 )"
    EXPECT_EQ(p.node_description, "Quantum-2 Mellanox Technologies");
  }
  EXPECT_EQ(switch_rows, 65);
  const IbdiagnetNetDumpPort& sw1 = Row(d, 0xb0cf0e0300e5b940u, 1);
  EXPECT_EQ(sw1.port_label, "1/1/1");
  EXPECT_EQ(sw1.neighbor_lid, 156u);
  EXPECT_EQ(sw1.neighbor_port_label, "B184D0F0/0/0/1");
  EXPECT_EQ(sw1.fec_mode, "RS_FEC_544_514");
  ASSERT_EQ(d.nodes.size(), 2u);
  EXPECT_EQ(d.nodes[1].lid, 24u);
  EXPECT_EQ(d.nodes[1].type, IbNodeType::kSwitch);
  EXPECT_FALSE(d.nodes[0].lid.has_value());  // a CA's LIDs are its ports'
}

TEST(IbdiagnetNetDump, ExtendedTailHcaPciLabelsAndADescriptionWithColons) {
  const IbdiagnetNetDump d = ParseIbdiagnetNetDump(ReadIbFixture(kExtTail), kExtTail);
  // It starts below the column header (an excerpt) and ends with "# File closed at : ...".
  EXPECT_TRUE(d.problems.empty()) << ProblemsText(d.problems);
  EXPECT_TRUE(d.extended);
  ASSERT_EQ(d.ports.size(), 78u);
  int cas = 0, spine = 0;
  std::set<std::string> labels;
  for (const IbdiagnetNetDumpPort& p : d.ports) {
    if (p.node_type == IbNodeType::kCa) {
      ++cas;
      labels.insert(p.port_label);
      EXPECT_EQ(p.port, 1);
    } else {
      ++spine;
      EXPECT_EQ(p.node_guid.value, 0xb0cf0e0300d33fc0u);
      EXPECT_EQ(p.lid, 180u);
      // Split on ' : ', not ':': the description stays whole.
      EXPECT_EQ(p.node_description, "MF0;ib-switch-sequoia:MQM9700/U1");
    }
  }
  EXPECT_EQ(cas, 13);
  EXPECT_EQ(spine, 65);
  EXPECT_TRUE(labels.contains("B184D0F0/0/0/1"));
  EXPECT_TRUE(labels.contains("B57D0F0/0/0/1"));
  const IbdiagnetNetDumpPort& hca3 = Row(d, 0x5c25730300c08a98u, 1);
  EXPECT_EQ(hca3.node_description, "h4-8-gpu HCA-3");
  EXPECT_EQ(hca3.port_label, "B184D0F0/0/0/1");
  EXPECT_EQ(hca3.lid, 173u);
  // An HCA on the spine (LID 180, which this file describes): its neighbour found by LID, the
  // port by its label among the spine's rows.
  const IbdiagnetNetDumpPort& hca11 = Row(d, 0x5c25730300c09c60u, 1);
  EXPECT_EQ(hca11.node_description, "h4-9-gpu HCA-11");
  EXPECT_EQ(hca11.fec_mode, "MLNX_RS_271_257_PLR");
  EXPECT_EQ(hca11.neighbor_lid, 180u);
  EXPECT_EQ(hca11.neighbor_port_label, "1/5/1");
  EXPECT_EQ(hca11.neighbor_guid.value, 0xb0cf0e0300d33fc0u);
  EXPECT_EQ(hca11.neighbor_type, IbNodeType::kSwitch);
  EXPECT_EQ(hca11.neighbor_port, 9);
  EXPECT_EQ(hca11.neighbor_description, "MF0;ib-switch-sequoia:MQM9700/U1");
  EXPECT_EQ(Row(d, 0xb0cf0e0300d33fc0u, 64).state, "DOWN");
  EXPECT_EQ(Row(d, 0xb0cf0e0300d33fc0u, 65).neighbor_port_label, "1");
  // Only the neighbours found by GUID are links: that cable, from both of its ends (the
  // spine's 1/5/1 names LID 92, the HCA's).
  const std::vector<IbLink> links = d.Links();
  ASSERT_EQ(links.size(), 2u);
  EXPECT_EQ(links[0].local.node_guid.value, 0x5c25730300c09c60u);
  EXPECT_EQ(links[0].local.type, IbNodeType::kCa);
  EXPECT_EQ(links[0].peer->port, 9);
  EXPECT_EQ(links[0].peer->type, IbNodeType::kSwitch);
  EXPECT_EQ(links[1].local.node_guid.value, 0xb0cf0e0300d33fc0u);
  EXPECT_EQ(links[1].local.port, 9);
  EXPECT_EQ(links[1].local.port_label, "1/5/1");
  EXPECT_EQ(links[1].peer->node_guid.value, 0x5c25730300c09c60u);
  EXPECT_EQ(links[1].peer->port, 1);  // "B134D0F0/0/0/1", the HCA's own row
  EXPECT_EQ(links[1].peer->type, IbNodeType::kCa);
  EXPECT_EQ(links[1].peer->description, "h4-9-gpu HCA-11");
}

TEST(IbdiagnetNetDump, CrlfLineEndsReadTheSame) {
  const IbdiagnetNetDump d = ParseIbdiagnetNetDump(Crlf(ReadIbFixture(kLeaf)), kLeaf);
  EXPECT_TRUE(d.problems.empty()) << ProblemsText(d.problems);
  ASSERT_EQ(d.ports.size(), 65u);
  EXPECT_EQ(Row(d, 0xb0cf0e0300e5b940u, 63).neighbor_description,
            "MF0;ib-switch-sequoia:MQM9700/U1");
  EXPECT_EQ(Row(d, 0xb0cf0e0300e5b940u, 64).state, "DOWN");
  EXPECT_EQ(d.Links().size(), 34u);
}

TEST(IbdiagnetNetDump, ATruncatedRowKeepsItsWholeCells) {
  const std::string text = ReadIbFixture(kLeaf);
  const std::string cut_after = "0xb0cf0e0300e5b948 : 1 ";
  const size_t at = text.find(cut_after);
  ASSERT_NE(at, std::string::npos);
  const std::string cut = text.substr(0, at + cut_after.size());
  const IbdiagnetNetDump d = ParseIbdiagnetNetDump(cut, "cut");
  ASSERT_EQ(d.ports.size(), 65u);
  const IbdiagnetNetDumpPort& p = d.ports.back();
  EXPECT_EQ(p.port, 65);
  EXPECT_EQ(p.state, "ACT");
  EXPECT_EQ(p.neighbor_guid.value, 0xb0cf0e0300e5b948u);
  EXPECT_EQ(p.neighbor_port_label, "");  // "1", the last cell it has, may be cut: dropped
  EXPECT_FALSE(p.neighbor_lid.has_value());
  EXPECT_FALSE(p.neighbor_port.has_value());
  const int line = LineOf(text, at);
  const size_t line_start = text.rfind('\n', at) + 1;
  const size_t end_column = at + cut_after.size() - line_start + 1;
  EXPECT_THAT(ProblemPlaces(d.problems),
              ElementsAre("cut:" + std::to_string(line) + ":" + std::to_string(end_column - 1)))
      << ProblemsText(d.problems);
  EXPECT_THAT(d.problems[0].message, HasSubstr("11 of 13 columns"));
}

TEST(IbdiagnetNetDump, GarbageLinesAreProblemsAndTheRestIsKept) {
  std::string text = ReadIbFixture(kLeaf);
  const size_t row2 = text.find("  1/1/2 ");
  ASSERT_NE(row2, std::string::npos);
  const int line = LineOf(text, row2);
  text.insert(row2,
              "some garbage in the middle\n"
              "  1/1/9      : x1  : ACT  : LINK UP    : 5   : 4x      : 100     : RS_FEC_544_514 "
              "     : NO-RTR : 0x5c25730300d0c522 : B184D0F0/0/0/1 : 21   : \"h\"\n"
              "  1/1/9      : 9   : ACT  : LINK UP    : 5   : 4x      : 37      : RS_FEC_544_514 "
              "     : NO-RTR : 0x5c25730300d0c522 : B184D0F0/0/0/1 : 21   : \"h\"\n");
  const IbdiagnetNetDump d = ParseIbdiagnetNetDump(text, "g");
  ASSERT_EQ(d.ports.size(), 66u);  // the 65 real rows and the one with an odd lane speed
  EXPECT_EQ(Row(d, 0xb0cf0e0300e5b940u, 2).neighbor_description, "is-north-7-compute-2 mlx5_10");
  const IbdiagnetNetDumpPort& odd = Row(d, 0xb0cf0e0300e5b940u, 9);
  EXPECT_EQ(odd.speed.generation, "37");  // kept as printed, with no lane rate
  EXPECT_FALSE(odd.speed.known());
  const std::string l = std::to_string(line);
  EXPECT_THAT(ProblemPlaces(d.problems),
              ElementsAre("g:" + l + ":1", "g:" + std::to_string(line + 1) + ":16",
                          "g:" + std::to_string(line + 2) + ":58"))
      << ProblemsText(d.problems);
  EXPECT_THAT(d.problems[0].message, HasSubstr("not a port row"));
  EXPECT_THAT(d.problems[2].message, HasSubstr("37"));
}

}  // namespace railwatch::ib::ibdiagnet_net_dump_test
