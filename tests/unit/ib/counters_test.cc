// perfquery and ibqueryerrors output as real sites captured it (CATALOGUE section J), and the
// PMA counter widths a collector needs to tell saturation from a count.
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ib/ibqueryerrors.h"
#include "ib/perfquery.h"
#include "ib_fixture.h"

namespace railwatch::ib::counters_test {

using ib_fixture::ProblemPlaces;
using ib_fixture::ProblemsText;
using ib_fixture::ReadIbFixture;
constexpr auto& Counter = ib_fixture::CounterOf;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

PerfqueryResult ReadPerfquery(const std::string& name) {
  return ParsePerfquery(ReadIbFixture(name), name);
}

uint64_t Value(const IbPortCounters& port, const std::string& name) {
  return Counter(port, name).value;
}

const char* const kErrorCounters[] = {"SymbolErrorCounter",
                                      "LinkErrorRecoveryCounter",
                                      "LinkDownedCounter",
                                      "PortRcvErrors",
                                      "PortRcvRemotePhysicalErrors",
                                      "PortRcvSwitchRelayErrors",
                                      "PortXmitDiscards",
                                      "PortXmitConstraintErrors",
                                      "PortRcvConstraintErrors",
                                      "LocalLinkIntegrityErrors",
                                      "ExcessiveBufferOverrunErrors",
                                      "VL15Dropped"};

// The widths libibmad's fields.c gives each field (rdma-core), as IBA vol. 1 16.1.3 has them.
TEST(PmaCounterWidths, PortCountersAndExtended) {
  const std::pair<const char*, int> kPortCounters[] = {{"SymbolErrorCounter", 16},
                                                       {"LinkErrorRecoveryCounter", 8},
                                                       {"LinkDownedCounter", 8},
                                                       {"PortRcvErrors", 16},
                                                       {"PortRcvRemotePhysicalErrors", 16},
                                                       {"PortRcvSwitchRelayErrors", 16},
                                                       {"PortXmitDiscards", 16},
                                                       {"PortXmitConstraintErrors", 8},
                                                       {"PortRcvConstraintErrors", 8},
                                                       {"LocalLinkIntegrityErrors", 4},
                                                       {"ExcessiveBufferOverrunErrors", 4},
                                                       {"VL15Dropped", 16},
                                                       {"PortXmitWait", 32},
                                                       {"PortXmitData", 32},
                                                       {"PortRcvData", 32},
                                                       {"PortXmitPkts", 32},
                                                       {"PortRcvPkts", 32},
                                                       {"QP1Dropped", 16}};
  for (const auto& [name, bits] : kPortCounters) {
    EXPECT_EQ(PmaCounterWidth(PmaAttribute::kPortCounters, name), bits) << name;
    EXPECT_EQ(PmaCounterWidth(PmaAttribute::kPortCountersExtended, name), 64) << name;
  }
  EXPECT_EQ(PmaCounterWidth(PmaAttribute::kPortCounters, "PortUnicastXmitPkts"), 0);
  EXPECT_EQ(PmaCounterWidth(PmaAttribute::kPortCountersExtended, "PortUnicastXmitPkts"), 64);
  EXPECT_EQ(PmaCounterWidth(PmaAttribute::kPortRcvErrorDetails, "PortLocalPhysicalErrors"), 16);
  EXPECT_EQ(PmaCounterWidth(PmaAttribute::kPortCounters, "NoSuchCounter"), 0);
  EXPECT_TRUE(MakeCounter(PmaAttribute::kPortCounters, "LinkDownedCounter", 255).saturated);
  EXPECT_FALSE(MakeCounter(PmaAttribute::kPortCounters, "LinkDownedCounter", 254).saturated);
  EXPECT_TRUE(MakeCounter(PmaAttribute::kPortCounters, "LocalLinkIntegrityErrors", 15).saturated);
  EXPECT_FALSE(
      MakeCounter(PmaAttribute::kPortCountersExtended, "LinkDownedCounter", 255).saturated);
  EXPECT_FALSE(MakeCounter(PmaAttribute::kPortCounters, "NoSuchCounter", 255).saturated);
}

// OSC EDR switch, perfquery -l -x: two port blocks back to back.
TEST(Perfquery, ExtendedTwoPorts) {
  const PerfqueryResult r =
      ReadPerfquery("perfquery_x_01_osc_edr_switch_lid1719_two_ports_extended_errors.txt");
  EXPECT_THAT(r.problems, IsEmpty()) << ProblemsText(r.problems);
  ASSERT_EQ(r.ports.size(), 2u);
  const IbPortCounters& p1 = r.ports[0];
  EXPECT_EQ(p1.attribute, PmaAttribute::kPortCountersExtended);
  EXPECT_EQ(p1.lid, 1719u);
  EXPECT_EQ(p1.port, 1);
  EXPECT_FALSE(p1.all_ports);
  EXPECT_EQ(p1.cap_mask, 0x5300u);
  EXPECT_EQ(p1.cap_mask2, 0x2u);
  EXPECT_EQ(Value(p1, "PortXmitData"), 36298026860928u);
  EXPECT_EQ(Value(p1, "PortRcvData"), 12279028775751u);
  EXPECT_EQ(Value(p1, "PortXmitPkts"), 101733204203u);
  EXPECT_EQ(Value(p1, "PortRcvPkts"), 32262508468u);
  EXPECT_EQ(Value(p1, "PortUnicastXmitPkts"), 101708165289u);
  EXPECT_EQ(Value(p1, "PortMulticastRcvPkts"), 5584846741u);
  EXPECT_EQ(Value(p1, "PortXmitWait"), 22730501u);
  EXPECT_EQ(Value(p1, "QP1Dropped"), 0u);
  for (const char* name : kErrorCounters) EXPECT_EQ(Value(p1, name), 0u) << name;
  // Data counters are 4-octet words and 64-bit here; selectors are not counters.
  EXPECT_TRUE(Counter(p1, "PortXmitData").data_4_octets);
  EXPECT_TRUE(Counter(p1, "PortRcvData").data_4_octets);
  EXPECT_FALSE(Counter(p1, "PortXmitPkts").data_4_octets);
  EXPECT_EQ(Counter(p1, "PortXmitData").width_bits, 64);
  EXPECT_EQ(Counter(p1, "SymbolErrorCounter").width_bits, 64);
  EXPECT_EQ(p1.counters.count("PortSelect"), 0u);
  EXPECT_EQ(p1.counters.count("CounterSelect2"), 0u);
  EXPECT_EQ(p1.counters.size(), 22u);
  const IbPortCounters& p2 = r.ports[1];
  EXPECT_EQ(p2.port, 2);
  EXPECT_EQ(Value(p2, "PortXmitData"), 26006570014026u);
  EXPECT_EQ(Value(p2, "PortRcvData"), 39078804993378u);
  EXPECT_EQ(Value(p2, "PortXmitWait"), 36510964u);
}

TEST(Perfquery, ExtendedDiscardsAndLinkDowned) {
  const PerfqueryResult r =
      ReadPerfquery("perfquery_x_02_osc_edr_switch_lid2052_xmitdiscards_linkdowned.txt");
  EXPECT_THAT(r.problems, IsEmpty()) << ProblemsText(r.problems);
  ASSERT_EQ(r.ports.size(), 1u);
  const IbPortCounters& p = r.ports[0];
  EXPECT_EQ(p.lid, 2052u);
  EXPECT_EQ(p.port, 1);
  EXPECT_EQ(p.cap_mask, 0x5300u);
  EXPECT_EQ(Value(p, "PortXmitData"), 178791657177235u);
  EXPECT_EQ(Value(p, "LinkDownedCounter"), 1u);
  EXPECT_EQ(Value(p, "PortRcvSwitchRelayErrors"), 7u);
  EXPECT_EQ(Value(p, "PortXmitDiscards"), 20046u);
  EXPECT_EQ(Value(p, "PortXmitWait"), 41864608u);
  EXPECT_EQ(Value(p, "PortMulticastXmitPkts"), 5623645694u);
  for (const auto& [name, counter] : p.counters) EXPECT_FALSE(counter.saturated) << name;
}

TEST(Perfquery, ExtendedHca) {
  const PerfqueryResult r = ReadPerfquery("perfquery_x_03_osc_edr_hca_lid133_capmask_5A00.txt");
  EXPECT_THAT(r.problems, IsEmpty()) << ProblemsText(r.problems);
  ASSERT_EQ(r.ports.size(), 1u);
  const IbPortCounters& p = r.ports[0];
  EXPECT_EQ(p.lid, 133u);
  EXPECT_EQ(p.cap_mask, 0x5A00u);
  EXPECT_EQ(p.cap_mask2, 0u);
  EXPECT_EQ(Value(p, "PortXmitData"), 37108676853855u);
  EXPECT_EQ(Value(p, "PortRcvPkts"), 100583719365u);
  EXPECT_EQ(Value(p, "PortMulticastRcvPkts"), 3732373137u);
  EXPECT_EQ(Value(p, "PortXmitWait"), 0u);
  for (const char* name : kErrorCounters) EXPECT_EQ(Value(p, name), 0u) << name;
}

// The root prompt "# perfquery -x 10 1" looks like a header and is not one.
TEST(Perfquery, PromptLineIsNotAHeader) {
  const PerfqueryResult r =
      ReadPerfquery("perfquery_x_04_rhel75_lid10_all_zero_with_root_prompt_line.txt");
  EXPECT_THAT(r.problems, IsEmpty()) << ProblemsText(r.problems);
  ASSERT_EQ(r.ports.size(), 1u);
  const IbPortCounters& p = r.ports[0];
  EXPECT_EQ(p.lid, 10u);
  EXPECT_EQ(p.port, 1);
  EXPECT_EQ(p.cap_mask, 0x5300u);
  EXPECT_EQ(p.cap_mask2, 0x2u);
  EXPECT_EQ(p.where, "perfquery_x_04_rhel75_lid10_all_zero_with_root_prompt_line.txt:2");
  // 25 fields printed: 2 selectors + CounterSelect2 are not counters, 22 counters are, all 0.
  EXPECT_EQ(p.counters.size(), 22u);
  for (const auto& [name, counter] : p.counters) EXPECT_EQ(counter.value, 0u) << name;
}

TEST(Perfquery, RcvErrorDetails) {
  const PerfqueryResult r =
      ReadPerfquery("perfquery_E_01_osc_edr_rcv_error_details_lid1719_port1.txt");
  EXPECT_THAT(r.problems, IsEmpty()) << ProblemsText(r.problems);
  ASSERT_EQ(r.ports.size(), 1u);
  const IbPortCounters& p = r.ports[0];
  EXPECT_EQ(p.attribute, PmaAttribute::kPortRcvErrorDetails);
  EXPECT_EQ(p.lid, 1719u);
  EXPECT_EQ(p.port, 1);
  EXPECT_FALSE(p.cap_mask);
  std::vector<std::string> names;
  for (const auto& [name, counter] : p.counters) {
    names.push_back(name);
    EXPECT_EQ(counter.value, 0u);
    EXPECT_EQ(counter.width_bits, 16);
  }
  EXPECT_THAT(names, UnorderedElementsAre("PortLocalPhysicalErrors", "PortMalformedPktErrors",
                                          "PortBufferOverrunErrors", "PortDLIDMappingErrors",
                                          "PortVLMappingErrors", "PortLoopingErrors"));
}

// Damage: a counter before any header, a value that is not a number, an unknown block.
TEST(Perfquery, BadLinesBecomeProblems) {
  const PerfqueryResult r = ParsePerfquery(
      "PortXmitData:....1\n"
      "# Port counters: Lid 3 port 2 (CapMask: 0x1400)\n"
      "SymbolErrorCounter:..............65535\n"
      "PortRcvErrors:...................N/A\n"
      "LinkDownedCounter:...............255\n"
      "# PortSamplesResult counters: Lid 3 port 2\n"
      "Counter0:........................5\n",
      "p.txt");
  ASSERT_EQ(r.ports.size(), 1u);
  const IbPortCounters& p = r.ports[0];
  EXPECT_EQ(p.attribute, PmaAttribute::kPortCounters);
  EXPECT_EQ(p.cap_mask, 0x1400u);
  EXPECT_FALSE(p.cap_mask2);
  EXPECT_TRUE(Counter(p, "SymbolErrorCounter").saturated);
  EXPECT_EQ(Counter(p, "SymbolErrorCounter").width_bits, 16);
  EXPECT_TRUE(Counter(p, "LinkDownedCounter").saturated);
  EXPECT_EQ(p.counters.count("PortRcvErrors"), 0u);  // absent, not zero
  EXPECT_EQ(ProblemPlaces(r.problems),
            (std::vector<std::string>{"p.txt:1:1", "p.txt:4:34", "p.txt:6:1", "p.txt:7:1"}));
}

// A mail-quoted ibqueryerrors run on an FDR fabric with saturated counters.
TEST(Ibqueryerrors, MailQuotedSaturatedCounters) {
  const std::string name = "ibqueryerrors_01_fdr_sx6036_saturated_counters_mail_quoted.txt";
  const IbqueryerrorsResult r = ParseIbqueryerrors(ReadIbFixture(name), name);
  EXPECT_THAT(r.problems, IsEmpty()) << ProblemsText(r.problems);
  std::set<std::string> nodes;
  for (const IbPortCounters& p : r.ports) nodes.insert(p.node_description);
  EXPECT_EQ(nodes, (std::set<std::string>{"dl380g7 mlx4_0", "server mlx4_0",
                                          "MF0;ys23ib4:SX6036/U1", "rd240 mlx4_0"}));
  ASSERT_EQ(r.ports.size(), 14u);  // "14 ports have errors beyond threshold"
  ASSERT_EQ(r.aggregates.size(), 1u);

  // A dual-port CA: one GUID per port, no node GUID.
  const IbPortCounters& dl1 = r.ports[0];
  EXPECT_EQ(dl1.node_description, "dl380g7 mlx4_0");
  EXPECT_FALSE(dl1.node_guid.valid());
  EXPECT_EQ(dl1.guid.value, 0x7cfe900300179b31u);
  EXPECT_EQ(dl1.port, 1);
  EXPECT_EQ(dl1.attribute, PmaAttribute::kPortCounters);
  EXPECT_EQ(Value(dl1, "VL15Dropped"), 14u);
  EXPECT_FALSE(Counter(dl1, "VL15Dropped").saturated);
  EXPECT_EQ(Value(dl1, "PortXmitWait"), 4294967295u);
  EXPECT_TRUE(Counter(dl1, "PortXmitWait").saturated);
  EXPECT_EQ(dl1.counters.size(), 2u);
  const IbPortCounters& dl2 = r.ports[1];
  EXPECT_EQ(dl2.guid.value, 0x7cfe900300179b32u);
  EXPECT_EQ(dl2.port, 2);
  EXPECT_EQ(Value(dl2, "PortXmitWait"), 2u);
  EXPECT_FALSE(Counter(dl2, "PortXmitWait").saturated);
  const IbPortCounters& server = r.ports[2];
  EXPECT_EQ(server.node_description, "server mlx4_0");
  EXPECT_EQ(server.guid.text, "0x2c9030042dff1");  // leading zeros dropped, as printed
  EXPECT_EQ(GuidString(server.guid), "0x0002c9030042dff1");
  EXPECT_TRUE(Counter(server, "PortXmitWait").saturated);

  // The switch: GUID then name; "port ALL" kept apart from ports 0-8.
  const IbPortCounters& all = r.aggregates[0];
  EXPECT_TRUE(all.all_ports);
  EXPECT_FALSE(all.port);
  EXPECT_EQ(all.node_guid.value, 0x0002c903006e29b0u);
  EXPECT_EQ(all.node_description, "MF0;ys23ib4:SX6036/U1");
  EXPECT_EQ(Value(all, "LinkErrorRecoveryCounter"), 15u);
  EXPECT_EQ(Value(all, "LinkDownedCounter"), 48u);
  EXPECT_EQ(Value(all, "PortRcvSwitchRelayErrors"), 2461u);
  EXPECT_EQ(Value(all, "PortXmitDiscards"), 15854u);
  EXPECT_EQ(Value(all, "VL15Dropped"), 5u);
  EXPECT_TRUE(Counter(all, "PortXmitWait").saturated);
  std::set<int> switch_ports;
  uint64_t link_downed = 0;
  for (const IbPortCounters& p : r.ports) {
    if (p.node_guid.value != 0x0002c903006e29b0u) continue;
    switch_ports.insert(*p.port);
    if (auto it = p.counters.find("LinkDownedCounter"); it != p.counters.end()) {
      link_downed += it->second.value;
    }
  }
  EXPECT_EQ(switch_ports, (std::set<int>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(link_downed, Value(all, "LinkDownedCounter"));  // the sum, not a further count
  const IbPortCounters* port5 = nullptr;
  const IbPortCounters* port6 = nullptr;
  for (const IbPortCounters& p : r.ports) {
    if (p.node_guid.value == 0x0002c903006e29b0u && p.port == 5) port5 = &p;
    if (p.node_guid.value == 0x0002c903006e29b0u && p.port == 6) port6 = &p;
  }
  ASSERT_NE(port5, nullptr);
  ASSERT_NE(port6, nullptr);
  EXPECT_EQ(Value(*port5, "SymbolErrorCounter"), 65535u);
  EXPECT_TRUE(Counter(*port5, "SymbolErrorCounter").saturated);
  EXPECT_EQ(Counter(*port5, "SymbolErrorCounter").width_bits, 16);
  EXPECT_EQ(Value(*port5, "LinkErrorRecoveryCounter"), 8u);
  EXPECT_EQ(Value(*port5, "LinkDownedCounter"), 2u);
  EXPECT_EQ(Value(*port5, "PortRcvSwitchRelayErrors"), 149u);
  EXPECT_EQ(Value(*port5, "PortXmitDiscards"), 649u);
  EXPECT_EQ(Value(*port5, "PortXmitWait"), 84704351u);
  EXPECT_FALSE(Counter(*port5, "PortXmitWait").saturated);
  EXPECT_EQ(Value(*port6, "LinkDownedCounter"), 9u);
  EXPECT_EQ(Value(*port6, "PortRcvSwitchRelayErrors"), 2285u);
  EXPECT_EQ(Value(*port6, "PortXmitDiscards"), 14176u);

  const IbPortCounters& rd1 = r.ports[12];
  EXPECT_EQ(rd1.node_description, "rd240 mlx4_0");
  EXPECT_EQ(rd1.guid.value, 0xe41d2d0300e0bae1u);
  EXPECT_TRUE(Counter(rd1, "PortXmitWait").saturated);
  const IbPortCounters& rd2 = r.ports[13];
  EXPECT_EQ(rd2.guid.value, 0xe41d2d0300e0bae2u);
  EXPECT_EQ(Value(rd2, "PortXmitWait"), 1u);

  EXPECT_EQ(r.summary.nodes_checked, 4u);
  EXPECT_EQ(r.summary.bad_nodes, 4u);
  EXPECT_EQ(r.summary.ports_checked, 43u);
  EXPECT_EQ(r.summary.ports_with_errors, 14u);
  EXPECT_EQ(r.summary.thresholds, "");
  EXPECT_EQ(r.summary.suppressed, "");
}

TEST(Ibqueryerrors, BadLinesBecomeProblems) {
  const IbqueryerrorsResult r = ParseIbqueryerrors(
      "Errors for 0x<redacted> \"sw\"\n"
      "   GUID 0x1 port 2: [PortXmitDiscards == 3] [Bogus] [VL15Dropped == 65535]\n"
      "   GUID 0x1 port x: [PortXmitDiscards == 3]\n"
      "something else\n",
      "q.txt");
  ASSERT_EQ(r.ports.size(), 1u);
  EXPECT_EQ(Value(r.ports[0], "PortXmitDiscards"), 3u);
  EXPECT_TRUE(Counter(r.ports[0], "VL15Dropped").saturated);
  EXPECT_FALSE(r.summary.nodes_checked);
  EXPECT_EQ(ProblemPlaces(r.problems),
            (std::vector<std::string>{"q.txt:1:12", "q.txt:2:45", "q.txt:3:18", "q.txt:4:1"}));
}

}  // namespace railwatch::ib::counters_test
