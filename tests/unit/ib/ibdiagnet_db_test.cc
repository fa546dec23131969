// ibdiagnet2.db_csv from one real NDR fabric (CATALOGUE section L): the whole file of a plain
// run, and the head of a --skip run.
#include "ib/ibdiagnet_db.h"

#include <algorithm>
#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ib_fixture.h"

namespace railwatch::ib::ibdiagnet_db_test {

using ib_fixture::ProblemsText;
using ib_fixture::ReadIbFixture;
constexpr auto& Counter = ib_fixture::CounterOf;
using ::testing::HasSubstr;

const char kFull[] = "db_csv_01_ndr_quantum2_mqm9700_272nodes_full_run_complete.db_csv";
const char kSkip[] = "db_csv_02_ndr_skip_run_args_header_and_nodes_section_excerpt.db_csv";

const IbdiagnetDb& Full() {
  static const IbdiagnetDb db = ParseIbdiagnetDbCsv(ReadIbFixture(kFull), kFull);
  return db;
}

size_t Rows(const IbdiagnetDb& db, const std::string& section) {
  const DbCsvSection* s = db.Section(section);
  if (s == nullptr) {
    ADD_FAILURE() << "no section " << section;
    return 0;
  }
  return s->rows.size();
}

// The record of `attribute` for node `guid` port `port`; fails the test when absent.
const IbPortCounters& Pm(uint64_t guid, int port, PmaAttribute attribute) {
  for (const IbPortCounters& c : Full().counters) {
    if (c.node_guid.value == guid && c.port == port && c.attribute == attribute) return c;
  }
  ADD_FAILURE() << std::hex << guid << std::dec << " port " << port << " "
                << PmaAttributeName(attribute);
  static const IbPortCounters kNone;
  return kNone;
}

TEST(IbdiagnetDbCsv, SectionsAndRowCounts) {
  const IbdiagnetDb& db = Full();
  // The one problem: a 64-bit counter at 2^64 - 40 (below). Every INDEX_TABLE count matched.
  ASSERT_EQ(db.problems.size(), 1u) << ProblemsText(db.problems);
  EXPECT_EQ(db.sections.size(), 34u);  // 33 indexed sections + INDEX_TABLE
  const std::map<std::string, size_t> rows = {{"RUN_INFO", 1},
                                              {"PLUGINS_INFO", 2},
                                              {"NODES", 272},
                                              {"PORTS", 551},
                                              {"LINKS", 271},
                                              {"PM_INFO", 542},
                                              {"PM_DELTA", 542},
                                              {"NODES_INFO", 265},
                                              {"TEMP_SENSING", 272},
                                              {"SM_INFO", 1},
                                              {"FEC_MODE", 535},
                                              {"SWITCHES", 9},
                                              {"PKEY", 551},
                                              {"WARNINGS_FW_CHECK", 7},
                                              {"EXTENDED_PORT_INFO", 542},
                                              {"PORT_HIERARCHY_INFO", 832},
                                              {"GENERAL_INFO_SMP", 272},
                                              {"PM_PORT_SAMPLES_CONTROL", 542},
                                              {"WARNINGS_DUPLICATED_NODE_DESCRIPTION_DETECTION", 8},
                                              {"STAGE_PERF_INFO", 12},
                                              {"INDEX_TABLE", 33}};
  for (const auto& [name, n] : rows) EXPECT_EQ(Rows(db, name), n) << name;
  for (const char* empty :
       {"PORT_INFO_EXTENDED", "PHYSICAL_HIERARCHY_INFO", "AR_INFO", "HBF_PORT_COUNTERS",
        "RN_COUNTERS", "VNODES", "VPORTS", "VPORTS_GUID_INFO", "ROUTERS_INFO"}) {
    EXPECT_EQ(Rows(db, empty), 0u) << empty;
    EXPECT_FALSE(db.Section(empty)->header.empty()) << empty;
  }
  EXPECT_EQ(db.Section("INDEX_TABLE")->header,
            (std::vector<std::string>{"Name", "Offset", "Size", "Line", "Rows"}));
  // Five sections become records; the other 29 are skipped, none of them an error.
  EXPECT_EQ(db.skipped_sections.size(), 29u);
  const DbCsvSection& run = *db.Section("RUN_INFO");
  EXPECT_EQ(run.rows[0][0], "IBDIAGNET 2.10.0.MLNX20220720.cd746c3");
  EXPECT_EQ(run.rows[0][4], "2025-03-31 23:43:18 UTC +0000");
  EXPECT_EQ(run.rows[0][5], "");
  // The PM_INFO column with a leading blank in the file is found by its stripped name.
  const std::vector<std::string>& pm = db.Section("PM_INFO")->header;
  EXPECT_NE(std::find(pm.begin(), pm.end(), "max_retransmission_rate"), pm.end());
  const DbCsvSection& sm = *db.Section("SM_INFO");
  EXPECT_EQ(sm.rows[0][3], "0xb0cf0e0300d33fc0");
  EXPECT_EQ(sm.rows[0][5], "4202301");
  EXPECT_EQ(sm.rows[0][6], "3");   // master
  EXPECT_EQ(sm.rows[0][7], "12");  // priority
}

TEST(IbdiagnetDbCsv, NodesPortsLinks) {
  const IbdiagnetDb& db = Full();
  ASSERT_EQ(db.nodes.size(), 272u);
  int switches = 0, cas = 0;
  for (const IbNode& n : db.nodes) {
    switches += n.type == IbNodeType::kSwitch;
    cas += n.type == IbNodeType::kCa;
  }
  EXPECT_EQ(switches, 9);
  EXPECT_EQ(cas, 263);
  const IbNode& spine = db.nodes[0];
  EXPECT_EQ(spine.description, "MF0;ib-switch-sequoia:MQM9700/U1");
  EXPECT_EQ(spine.num_ports, 65);
  EXPECT_EQ(spine.guid.value, 0xb0cf0e0300d33fc0u);
  EXPECT_EQ(spine.device_id, 54002u);
  EXPECT_EQ(spine.vendor_id, 0x2c9u);

  ASSERT_EQ(db.ports.size(), 551u);
  std::map<uint64_t, const IbNode*> nodes;
  for (const IbNode& n : db.nodes) nodes[*n.guid.value] = &n;
  int active_ndr = 0, hca_ports = 0, port0_without_speed = 0;
  for (const IbdiagnetPort& p : db.ports) {
    if (p.state == 4 && p.phys_state == 5 && p.speed.generation == "NDR") {
      ++active_ndr;
      EXPECT_EQ(p.speed.width_lanes, 4);
      EXPECT_EQ(p.speed.aggregate_gbps(), 400);
      const IbNode* node = nodes[*p.node_guid.value];
      ASSERT_NE(node, nullptr);
      hca_ports += node->description.find(" mlx5_") != std::string::npos;
    }
    port0_without_speed += p.port == 0 && p.speed.generation.empty();
  }
  // 286 switch and aggregation-node ports at LinkSpeedActv 2052 (QDR and NDR bits: NDR wins),
  // 256 HCA ports at 2048; the 8 unmanaged leaves' port 0 all zero.
  EXPECT_EQ(active_ndr, 286 + 256);
  EXPECT_EQ(hca_ports, 256);
  EXPECT_EQ(port0_without_speed, 8);
  EXPECT_EQ(GenerationOfPackedSpeed(2052), "NDR");
  EXPECT_EQ(GenerationOfPackedSpeed(2048), "NDR");
  EXPECT_EQ(GenerationOfPackedSpeed(1), "SDR");

  ASSERT_EQ(db.links.size(), 271u);
  const IbLink& first = db.links[0];
  EXPECT_EQ(first.local.node_guid.value, 0xb0cf0e0300e5b940u);
  EXPECT_EQ(first.local.port, 1);
  EXPECT_EQ(first.local.type, IbNodeType::kSwitch);
  ASSERT_TRUE(first.peer);
  EXPECT_EQ(first.peer->node_guid.value, 0x5c25730300c06f60u);
  EXPECT_EQ(first.peer->port, 1);
  EXPECT_EQ(first.peer->type, IbNodeType::kCa);
  // The HCA end carries its port GUID from PORTS (what its host's GID 0 holds, and how the
  // fabric map finds that host's NIC); a switch end has none of its own.
  EXPECT_EQ(first.peer->port_guid.value, 0x5c25730300c06f60u);
  EXPECT_FALSE(first.local.port_guid.value.has_value());
  bool leaf_to_compute_27 = false;
  for (const IbLink& l : db.links) {
    leaf_to_compute_27 |= l.local.node_guid.value == 0xfc6a1c03008a5c00u && l.local.port == 27 &&
                          l.peer->node_guid.value == 0x5c25730300f3df50u && l.peer->port == 1;
  }
  EXPECT_TRUE(leaf_to_compute_27);
}

TEST(IbdiagnetDbCsv, PmInfoWidthsSaturationAndImplausibleValues) {
  const IbdiagnetDb& db = Full();
  int pm_ports = 0, link_downed_ports = 0;
  uint64_t max_wait = 0, max_wait_guid = 0;
  int max_wait_port = 0;
  for (const IbPortCounters& c : db.counters) {
    if (c.attribute == PmaAttribute::kPortCounters) {
      ++pm_ports;
      auto it = c.counters.find("LinkDownedCounter");
      link_downed_ports += it != c.counters.end() && it->second.value > 0;
    }
    if (c.attribute == PmaAttribute::kPortCountersExtended) {
      auto it = c.counters.find("PortXmitWait");
      if (it != c.counters.end() && it->second.value > max_wait) {
        max_wait = it->second.value;
        max_wait_guid = *c.node_guid.value;
        max_wait_port = *c.port;
      }
    }
  }
  EXPECT_EQ(pm_ports, 542);
  EXPECT_EQ(link_downed_ports, 264);
  EXPECT_EQ(max_wait, 1283973573869u);
  EXPECT_EQ(max_wait_guid, 0xfc6a1c030091f9c0u);
  EXPECT_EQ(max_wait_port, 63);

  // MQM9700 port 1: 32-bit data saturated, the extended counters are the usable ones.
  const IbPortCounters& spine1 = Pm(0xb0cf0e0300d33fc0, 1, PmaAttribute::kPortCounters);
  EXPECT_EQ(Counter(spine1, "PortXmitData").value, 4294967295u);
  EXPECT_TRUE(Counter(spine1, "PortXmitData").saturated);
  EXPECT_TRUE(Counter(spine1, "PortXmitData").data_4_octets);
  EXPECT_EQ(spine1.node_description, "MF0;ib-switch-sequoia:MQM9700/U1");
  const IbPortCounters& spine1x = Pm(0xb0cf0e0300d33fc0, 1, PmaAttribute::kPortCountersExtended);
  EXPECT_EQ(Counter(spine1x, "PortXmitData").value, 299195507523u);
  EXPECT_FALSE(Counter(spine1x, "PortXmitData").saturated);
  EXPECT_EQ(Counter(spine1x, "PortXmitWait").value, 9463628588u);
  const IbPortCounters& spine2 = Pm(0xb0cf0e0300d33fc0, 2, PmaAttribute::kPortCounters);
  EXPECT_EQ(Counter(spine2, "PortRcvSwitchRelayErrors").value, 158u);
  EXPECT_EQ(Counter(Pm(0xb0cf0e0300d33fc0, 2, PmaAttribute::kPortRcvErrorDetails),
                    "PortDLIDMappingErrors")
                .value,
            158u);
  const IbPortCounters& leaf = Pm(0xfc6a1c030091cf00, 1, PmaAttribute::kPortCounters);
  EXPECT_EQ(Counter(leaf, "LinkDownedCounter").value, 12u);
  EXPECT_EQ(Counter(leaf, "PortXmitDiscards").value, 85u);
  EXPECT_EQ(Counter(leaf, "PortRcvSwitchRelayErrors").value, 446u);

  // An HCA with saturated 16-bit error counters and large extended ones.
  const IbPortCounters& hca = Pm(0x5c25730300f3df50, 1, PmaAttribute::kPortCounters);
  EXPECT_EQ(hca.node_description, "is-north-7-compute-27 mlx5_11");
  EXPECT_EQ(Counter(hca, "LinkDownedCounter").value, 55u);
  EXPECT_EQ(Counter(hca, "SymbolErrorCounter").value, 65535u);
  EXPECT_TRUE(Counter(hca, "SymbolErrorCounter").saturated);
  EXPECT_EQ(Counter(hca, "PortRcvRemotePhysicalErrors").value, 9u);
  EXPECT_TRUE(Counter(hca, "PortRcvErrors").saturated);
  EXPECT_TRUE(Counter(hca, "PortXmitDiscards").saturated);
  const IbPortCounters& hcax = Pm(0x5c25730300f3df50, 1, PmaAttribute::kPortCountersExtended);
  EXPECT_EQ(Counter(hcax, "PortRcvErrors").value, 1436771u);
  EXPECT_EQ(Counter(hcax, "PortXmitDiscards").value, 111911u);
  EXPECT_EQ(Counter(hcax, "PortXmitWait").value, 6708572582u);
  EXPECT_EQ(Counter(hcax, "PortRcvErrors").width_bits, 64);
  EXPECT_EQ(Counter(Pm(0x5c25730300f3df50, 1, PmaAttribute::kPortRcvErrorDetails),
                    "PortLocalPhysicalErrors")
                .value,
            13129u);
  EXPECT_EQ(Counter(Pm(0x5c25730300f3df50, 1, PmaAttribute::kPortXmitDiscardDetails),
                    "PortInactiveDiscards")
                .value,
            46375u);
  const IbPortCounters& c25 = Pm(0xc470bd0300100612, 1, PmaAttribute::kPortCounters);
  EXPECT_EQ(c25.node_description, "is-north-7-compute-25 mlx5_9");
  EXPECT_TRUE(Counter(c25, "SymbolErrorCounter").saturated);
  EXPECT_EQ(Counter(c25, "PortRcvErrors").value, 131u);

  // 2^64 - 40 in PortRcvErrorsExt: dropped with a problem, never graphed.
  const IbPortCounters& c8 = Pm(0x5c25730300e68e76, 1, PmaAttribute::kPortCounters);
  EXPECT_EQ(c8.node_description, "is-north-7-compute-8 mlx5_0");
  EXPECT_EQ(Counter(c8, "SymbolErrorCounter").value, 11160u);
  EXPECT_TRUE(Counter(c8, "PortRcvErrors").saturated);
  const IbPortCounters& c8x = Pm(0x5c25730300e68e76, 1, PmaAttribute::kPortCountersExtended);
  EXPECT_EQ(c8x.counters.count("PortRcvErrors"), 0u);
  ASSERT_EQ(db.problems.size(), 1u);
  EXPECT_THAT(db.problems[0].message, HasSubstr("PortRcvErrorsExt = 18446744073709551576"));
  EXPECT_EQ(db.problems[0].where, c8x.where + "");

  // Unsupported (-1) and N/A values are absent.
  for (const IbPortCounters& c : db.counters) {
    for (const auto& [name, counter] : c.counters) EXPECT_NE(counter.width_bits, 0) << name;
  }
}

TEST(IbdiagnetDbCsv, Temperatures) {
  const IbdiagnetDb& db = Full();
  ASSERT_EQ(db.temperatures.size(), 272u);
  const IbdiagnetTemperature* max = &db.temperatures[0];
  const IbdiagnetTemperature* min = &db.temperatures[0];
  for (const IbdiagnetTemperature& t : db.temperatures) {
    if (t.celsius > max->celsius) max = &t;
    if (t.celsius < min->celsius) min = &t;
  }
  EXPECT_EQ(db.temperatures[0].node_guid.value, 0xb0cf0e0300d33fc0u);
  EXPECT_EQ(db.temperatures[0].celsius, 46);
  EXPECT_EQ(max->celsius, 62);
  EXPECT_EQ(max->node_guid.value, 0xfc6a1c03008a5c00u);
  EXPECT_EQ(min->celsius, 44);
  EXPECT_EQ(min->node_guid.value, 0x5c25730300c06950u);
}

// The --skip run's head: a comma inside a quoted Args field, NODES only.
TEST(IbdiagnetDbCsv, SkipRunExcerpt) {
  const IbdiagnetDb db = ParseIbdiagnetDbCsv(ReadIbFixture(kSkip), kSkip);
  EXPECT_TRUE(db.problems.empty()) << ProblemsText(db.problems);
  EXPECT_EQ(db.sections.size(), 4u);
  const DbCsvSection& run = *db.Section("RUN_INFO");
  ASSERT_EQ(run.rows.size(), 1u);
  ASSERT_EQ(run.rows[0].size(), 6u);
  EXPECT_EQ(run.rows[0][5],
            " --output /var/tmp/ibdiagnet2/infiniband-default --skip dup_guids,dup_node_desc,"
            "lids,links,pm,nodes_info,speed_width_check --skip_plugin all");
  EXPECT_EQ(db.Section("PM_INFO"), nullptr);
  EXPECT_TRUE(db.counters.empty());
  ASSERT_EQ(db.nodes.size(), 272u);
  int aggregation_nodes = 0;
  bool h4_31 = false;
  for (const IbNode& n : db.nodes) {
    aggregation_nodes +=
        n.description == "Mellanox Technologies Aggregation Node" && n.device_id == 53001u;
    h4_31 |= n.description == "h4-31-gpu HCA-4";
  }
  EXPECT_EQ(aggregation_nodes, 7);
  EXPECT_TRUE(h4_31);
  EXPECT_EQ(db.skipped_sections,
            (std::vector<std::string>{"RUN_INFO", "PLUGINS_INFO", "WARNINGS_VS_CAPABILITY_GMP"}));
}

// Damage: a row with too many fields, an unknown END_, text outside sections, no END_.
TEST(IbdiagnetDbCsv, DamageIsReportedNotFatal) {
  const IbdiagnetDb db = ParseIbdiagnetDbCsv(
      "stray\n"
      "START_TEMP_SENSING\n"
      "NodeGUID,CurrentTemperature\n"
      "0x1,40\n"
      "0x2,41,9\n"
      "0x3,hot\n"
      "END_OTHER\n"
      "START_NEW_THING\n"
      "A,B\n"
      "1,2\n",
      "d.csv");
  ASSERT_EQ(db.temperatures.size(), 1u);
  EXPECT_EQ(db.temperatures[0].celsius, 40);
  EXPECT_EQ(db.skipped_sections, std::vector<std::string>{"NEW_THING"});
  EXPECT_EQ(Rows(db, "NEW_THING"), 1u);
  EXPECT_EQ(
      ib_fixture::ProblemPlaces(db.problems),
      (std::vector<std::string>{"d.csv:1:1", "d.csv:5:1", "d.csv:7:1", "d.csv:8:1", "d.csv:6:1"}));
}

}  // namespace railwatch::ib::ibdiagnet_db_test
