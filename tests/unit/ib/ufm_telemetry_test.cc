// UFM Telemetry (CATALOGUE section O): a real telemetry-stream message, and the vendor's
// Prometheus example whose stored copy lost its line breaks.
#include "ib/ufm_telemetry.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ib_fixture.h"

namespace railwatch::ib::ufm_telemetry_test {

using ib_fixture::ProblemsText;
using ib_fixture::ReadIbFixture;
using ::testing::IsEmpty;
constexpr auto& Counter = ib_fixture::CounterOf;

TEST(UfmTelemetry, StreamMessageSixPorts) {
  const std::string name = "ufm_tfs_01_telemetry_stream_message_sample_lab.json";
  const UfmTelemetry t = ParseUfmTelemetryJson(ReadIbFixture(name), name);
  EXPECT_THAT(t.problems, IsEmpty()) << ProblemsText(t.problems);
  EXPECT_EQ(t.timestamp, "2024-03-05 16:26:11");
  EXPECT_EQ(t.type, "full");
  ASSERT_EQ(t.ports.size(), 6u);
  for (const UfmPortSample& p : t.ports) {
    EXPECT_EQ(p.time_us, 1709652347161873);
    EXPECT_EQ(p.counters.attribute, PmaAttribute::kPortCountersExtended);
    // Every perfquery-era name lands on its PMA name; none is left in `other`.
    for (const char* pma :
         {"SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
          "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards",
          "PortXmitConstraintErrors", "PortRcvConstraintErrors", "LocalLinkIntegrityErrors",
          "ExcessiveBufferOverrunErrors", "VL15Dropped", "PortXmitWait", "PortXmitPkts",
          "PortRcvPkts"}) {
      EXPECT_EQ(p.counters.counters.count(pma), 1u) << pma;
    }
    for (const char* kept : {"Infiniband_MBOut_u_Gb", "Infiniband_MBIn_u_Gb", "hist0_u_count",
                             "hist4_u_count", "Infiniband_Normalized_MBOut_f_u_Percent"}) {
      EXPECT_EQ(p.other.count(kept), 1u) << kept;
    }
    EXPECT_EQ(p.other.count("Infiniband_XmtDiscards_u_Errors"), 0u);
  }
  const UfmPortSample& first = t.ports[0];
  EXPECT_EQ(first.source_id, "0x0c42a103007ab890");
  EXPECT_EQ(first.counters.node_guid.value, 0x0c42a103007ab890u);
  EXPECT_EQ(first.counters.guid.value, 0x0c42a103007ab890u);
  EXPECT_EQ(first.counters.port, 1);
  EXPECT_DOUBLE_EQ(first.other.at("Infiniband_Normalized_MBOut_f_u_Percent"), 0.00000153523);
  const UfmPortSample& port1 = t.ports[1];
  EXPECT_EQ(port1.counters.node_guid.value, 0x248a070300ef19a0u);
  EXPECT_EQ(port1.counters.port, 1);
  EXPECT_EQ(Counter(port1.counters, "LinkDownedCounter").value, 1u);
  const UfmPortSample& port23 = t.ports[2];
  EXPECT_EQ(port23.counters.node_guid.value, 0x248a070300ef19a0u);
  EXPECT_EQ(port23.counters.port, 23);
  EXPECT_EQ(port23.other.at("Infiniband_MBOut_u_Gb"), 70409952);
  EXPECT_EQ(Counter(port23.counters, "LinkDownedCounter").value, 3u);
  EXPECT_EQ(Counter(port23.counters, "PortRcvSwitchRelayErrors").value, 18u);
  EXPECT_EQ(Counter(port23.counters, "PortXmitWait").value, 0u);
}

// One line holding what the endpoint sends on several: TYPE comments and two samples.
TEST(UfmTelemetry, PrometheusFlattenedDocExample) {
  const std::string name =
      "ufm_prom_01_ufm_telemetry_v1.8_doc_example_newlines_lost_NOT_line_faithful.txt";
  const UfmTelemetry t = ParseUfmPrometheus(ReadIbFixture(name), name);
  EXPECT_THAT(t.problems, IsEmpty()) << ProblemsText(t.problems);
  EXPECT_EQ(t.metric_types.at("PortXmitDataExtended"), "counter");
  EXPECT_EQ(t.metric_types.at("PortXmitPktsExtended"), "counter");
  ASSERT_EQ(t.ports.size(), 1u);  // both samples are the same port
  const UfmPortSample& p = t.ports[0];
  EXPECT_EQ(p.source_id, "0x0002c90300f172a0");
  EXPECT_EQ(p.counters.node_guid.text, "2c90300f172a0");  // no 0x, no leading zeros
  EXPECT_EQ(p.counters.node_guid.value, 0x0002c90300f172a0u);
  EXPECT_EQ(p.counters.guid.value, 0x0002c90300f172a2u);
  EXPECT_EQ(p.counters.port, 2);
  EXPECT_EQ(p.time_us, int64_t{1628683905941} * 1000);  // milliseconds in the text
  EXPECT_EQ(Counter(p.counters, "PortXmitData").value, 85554128244u);
  EXPECT_TRUE(Counter(p.counters, "PortXmitData").data_4_octets);
  EXPECT_EQ(Counter(p.counters, "PortXmitData").width_bits, 64);
  EXPECT_EQ(Counter(p.counters, "PortXmitPkts").value, 1188251785u);
  EXPECT_TRUE(p.other.empty());
}

TEST(UfmTelemetry, BadInputIsAProblem) {
  const UfmTelemetry json = ParseUfmTelemetryJson("{\"values\": [1, {\"port_num\": \"x\"}]\n", "j");
  EXPECT_EQ(ib_fixture::ProblemPlaces(json.problems), std::vector<std::string>{"j:2:1"});
  const UfmTelemetry shape = ParseUfmTelemetryJson("{\"values\": [1, {\"port_num\": \"x\"}]}", "j");
  ASSERT_EQ(shape.problems.size(), 2u);
  EXPECT_EQ(shape.ports.size(), 1u);
  const UfmTelemetry prom = ParseUfmPrometheus(
      "# HELP x y\nPortXmitWait{port_num=\"1\"} 7\n{bad} 1\nPortRcvData{port_num=\"1\"} 1.5\n",
      "p");
  EXPECT_EQ(ib_fixture::ProblemPlaces(prom.problems), std::vector<std::string>{"p:3:1"});
  ASSERT_EQ(prom.ports.size(), 1u);
  EXPECT_EQ(Counter(prom.ports[0].counters, "PortXmitWait").value, 7u);
  EXPECT_EQ(prom.ports[0].other.at("PortRcvData"), 1.5);  // not an integer: not a counter
}

}  // namespace railwatch::ib::ufm_telemetry_test
