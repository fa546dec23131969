// ibdiagnet2.pm from one real NDR fabric (CATALOGUE section L): the MQM9700 spine's ports 1 and 2
// (32-bit counters saturated, the 64-bit ones not), and a ConnectX-7 port with saturated 16-bit
// error counters whose numbers are those of the same port's PM_INFO row in the db_csv of the run.
#include "ib/ibdiagnet_pm.h"

#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ib/ibdiagnet_db.h"
#include "ib_fixture.h"

namespace railwatch::ib::ibdiagnet_pm_test {

using ib_fixture::ProblemPlaces;
using ib_fixture::ProblemsText;
using ib_fixture::Crlf;
using ib_fixture::LineOf;
using ib_fixture::ReadIbFixture;
constexpr auto& Counter = ib_fixture::CounterOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const char kSpine[] = "ibdiagnet2_pm_01_ndr_mqm9700_spine_ports1-2_hex_counters_excerpt.txt";
const char kHca[] = "ibdiagnet2_pm_02_ndr_cx7_hca_saturated_symbol_rcv_errors_block.txt";
const char kDb[] = "db_csv_01_ndr_quantum2_mqm9700_272nodes_full_run_complete.db_csv";

// The block's record of `attribute`; fails the test when the block has none.
const IbPortCounters& Of(const IbdiagnetPmBlock& block, PmaAttribute attribute) {
  for (const IbPortCounters& c : block.counters) {
    if (c.attribute == attribute) return c;
  }
  ADD_FAILURE() << "no " << PmaAttributeName(attribute);
  static const IbPortCounters kNone;
  return kNone;
}

TEST(IbdiagnetPm, SpinePortsHexCountersUnderTheirPmaNames) {
  const IbdiagnetPm pm = ParseIbdiagnetPm(ReadIbFixture(kSpine), kSpine);
  EXPECT_TRUE(pm.problems.empty()) << ProblemsText(pm.problems);
  ASSERT_EQ(pm.blocks.size(), 2u);
  const IbdiagnetPmBlock& p1 = pm.blocks[0];
  EXPECT_EQ(p1.port, 1);
  EXPECT_EQ(p1.lid, 0xb4u);  // 180
  EXPECT_EQ(p1.guid.value, 0xb0cf0e0300d33fc0u);
  EXPECT_EQ(p1.device_id, 54002u);
  EXPECT_EQ(p1.port_name, "ib-switch-sequoia/U1/P1/1/1");
  EXPECT_EQ(p1.where, std::string(kSpine) + ":16");
  ASSERT_EQ(p1.counters.size(), 4u);  // the four attributes

  const IbPortCounters& plain = Of(p1, PmaAttribute::kPortCounters);
  EXPECT_EQ(plain.port, 1);
  EXPECT_EQ(plain.lid, 180u);
  EXPECT_EQ(plain.guid.value, 0xb0cf0e0300d33fc0u);
  EXPECT_EQ(plain.counters.size(), 17u);
  // port_xmit_data=0xffffffff: the 32-bit counter saturated, in 4-octet words.
  EXPECT_EQ(Counter(plain, "PortXmitData").value, 4294967295u);
  EXPECT_EQ(Counter(plain, "PortXmitData").width_bits, 32);
  EXPECT_TRUE(Counter(plain, "PortXmitData").saturated);
  EXPECT_TRUE(Counter(plain, "PortXmitData").data_4_octets);
  EXPECT_TRUE(Counter(plain, "PortXmitWait").saturated);
  EXPECT_EQ(Counter(plain, "PortXmitPkts").value, 0x12526db7u);
  EXPECT_FALSE(Counter(plain, "PortXmitPkts").saturated);
  // ibdiagnet's own spellings, under the PMA names.
  EXPECT_EQ(Counter(plain, "LinkDownedCounter").width_bits, 8);       // link_down_counter
  EXPECT_EQ(Counter(plain, "PortXmitDiscards").width_bits, 16);       // port_xmit_discard
  EXPECT_EQ(Counter(plain, "ExcessiveBufferOverrunErrors").width_bits, 4);  // excessive_buffer_errors
  EXPECT_EQ(Counter(plain, "VL15Dropped").value, 0u);

  const IbPortCounters& ext = Of(p1, PmaAttribute::kPortCountersExtended);
  EXPECT_EQ(ext.counters.size(), 22u);
  EXPECT_EQ(Counter(ext, "PortXmitData").value, 299195507523u);
  EXPECT_EQ(Counter(ext, "PortXmitData").width_bits, 64);
  EXPECT_FALSE(Counter(ext, "PortXmitData").saturated);
  EXPECT_EQ(Counter(ext, "PortXmitWait").value, 9463628588u);
  EXPECT_EQ(Counter(ext, "PortUnicastXmitPkts").value, 0x125257b0u);
  EXPECT_EQ(Counter(ext, "QP1Dropped").value, 0u);
  EXPECT_EQ(Counter(ext, "LinkDownedCounter").value, 0u);

  const IbPortCounters& rcv = Of(p1, PmaAttribute::kPortRcvErrorDetails);
  EXPECT_EQ(rcv.counters.size(), 5u);
  EXPECT_FALSE(rcv.counters.contains("PortLoopingErrors"));  // port_looping_errors=NA
  EXPECT_EQ(Counter(rcv, "PortMalformedPktErrors").width_bits, 16);
  const IbPortCounters& discard = Of(p1, PmaAttribute::kPortXmitDiscardDetails);
  EXPECT_EQ(discard.counters.size(), 4u);
  EXPECT_EQ(Counter(discard, "PortNeighborMTUDiscards").value, 0u);
  EXPECT_EQ(Counter(discard, "PortSwHOQLifetimeLimitDiscards").value, 0u);
  // Not PMA counters: kept under ibdiagnet's name.
  EXPECT_EQ(p1.other.size(), 2u);
  EXPECT_EQ(p1.other.at("retransmission_per_sec"), 0u);
  EXPECT_EQ(p1.other.at("max_retransmission_rate"), 0u);

  const IbdiagnetPmBlock& p2 = pm.blocks[1];
  EXPECT_EQ(p2.port, 2);
  EXPECT_EQ(p2.port_name, "ib-switch-sequoia/U1/P1/1/2");
  EXPECT_EQ(Counter(Of(p2, PmaAttribute::kPortCounters), "PortRcvSwitchRelayErrors").value, 158u);
  EXPECT_EQ(
      Counter(Of(p2, PmaAttribute::kPortCountersExtended), "PortRcvSwitchRelayErrors").value,
      158u);
  EXPECT_EQ(Counter(Of(p2, PmaAttribute::kPortRcvErrorDetails), "PortDLIDMappingErrors").value,
            158u);
  // Every name of the file is known: none is left without a width.
  for (const IbPortCounters& c : pm.Counters()) {
    for (const auto& [name, counter] : c.counters) {
      EXPECT_GT(counter.width_bits, 0) << name << " " << PmaAttributeName(c.attribute);
    }
  }
  EXPECT_EQ(pm.Counters().size(), 8u);
}

TEST(IbdiagnetPm, HcaPortSaturated16BitCountersAndLargeExtendedOnes) {
  const IbdiagnetPm pm = ParseIbdiagnetPm(ReadIbFixture(kHca), kHca);
  EXPECT_TRUE(pm.problems.empty()) << ProblemsText(pm.problems);
  ASSERT_EQ(pm.blocks.size(), 1u);
  const IbdiagnetPmBlock& b = pm.blocks[0];
  EXPECT_EQ(b.port, 1);
  EXPECT_EQ(b.lid, 0x3eu);
  EXPECT_EQ(b.guid.value, 0x5c25730300f3df50u);
  EXPECT_EQ(b.device_id, 4129u);
  EXPECT_EQ(b.port_name, "is-north-7-compute-27/mlx5_11/B193D0F0/0/0/1");
  const IbPortCounters& plain = Of(b, PmaAttribute::kPortCounters);
  EXPECT_EQ(Counter(plain, "LinkDownedCounter").value, 55u);  // 0x00000037
  EXPECT_FALSE(Counter(plain, "LinkDownedCounter").saturated);
  // 0x0000ffff printed 32 bits wide, but the counter is 16 bits: saturated.
  for (const char* name : {"SymbolErrorCounter", "PortRcvErrors", "PortXmitDiscards"}) {
    EXPECT_EQ(Counter(plain, name).value, 65535u) << name;
    EXPECT_EQ(Counter(plain, name).width_bits, 16) << name;
    EXPECT_TRUE(Counter(plain, name).saturated) << name;
  }
  EXPECT_EQ(Counter(plain, "PortRcvRemotePhysicalErrors").value, 9u);
  EXPECT_TRUE(Counter(plain, "PortXmitPkts").saturated);
  const IbPortCounters& ext = Of(b, PmaAttribute::kPortCountersExtended);
  EXPECT_EQ(Counter(ext, "PortRcvErrors").value, 1436771u);
  EXPECT_EQ(Counter(ext, "PortXmitDiscards").value, 111911u);
  EXPECT_EQ(Counter(ext, "PortXmitWait").value, 6708572582u);
  EXPECT_EQ(Counter(ext, "LinkDownedCounter").value, 0u);  // the 64-bit one stays 0 here
  const IbPortCounters& rcv = Of(b, PmaAttribute::kPortRcvErrorDetails);
  EXPECT_EQ(Counter(rcv, "PortLocalPhysicalErrors").value, 13129u);
  EXPECT_FALSE(rcv.counters.contains("PortVLMappingErrors"));  // NA
  const IbPortCounters& discard = Of(b, PmaAttribute::kPortXmitDiscardDetails);
  EXPECT_EQ(Counter(discard, "PortInactiveDiscards").value, 46375u);
  EXPECT_FALSE(discard.counters.contains("PortSwLifetimeLimitDiscards"));  // NA
  // retransmission_per_sec=NA: named, absent (not 0).
  ASSERT_TRUE(b.other.contains("retransmission_per_sec"));
  EXPECT_FALSE(b.other.at("retransmission_per_sec").has_value());
}

// CATALOGUE: pm_02's numbers are the db_csv_01 PM_INFO row of the same port (the same run).
TEST(IbdiagnetPm, TheHcaBlockEqualsItsPmInfoRowInTheDbCsv) {
  const IbdiagnetPm pm = ParseIbdiagnetPm(ReadIbFixture(kHca), kHca);
  const IbdiagnetDb db = ParseIbdiagnetDbCsv(ReadIbFixture(kDb), kDb);
  ASSERT_EQ(pm.blocks.size(), 1u);
  int compared = 0;
  for (const IbPortCounters& from_pm : pm.blocks[0].counters) {
    const IbPortCounters* from_db = nullptr;
    for (const IbPortCounters& c : db.counters) {
      if (c.guid.value == 0x5c25730300f3df50u && c.port == 1 &&
          c.attribute == from_pm.attribute) {
        from_db = &c;
      }
    }
    ASSERT_NE(from_db, nullptr) << PmaAttributeName(from_pm.attribute);
    SCOPED_TRACE(std::string(PmaAttributeName(from_pm.attribute)));
    // The same counters (N/A in one is -1 in the other), with the same values and widths.
    std::map<std::string, uint64_t> a, b;
    for (const auto& [name, c] : from_pm.counters) a[name] = c.value;
    for (const auto& [name, c] : from_db->counters) b[name] = c.value;
    EXPECT_EQ(a, b);
    for (const auto& [name, c] : from_pm.counters) {
      auto it = from_db->counters.find(name);
      if (it == from_db->counters.end()) continue;
      EXPECT_EQ(c.width_bits, it->second.width_bits) << name;
      EXPECT_EQ(c.saturated, it->second.saturated) << name;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 17 + 22 + 4 + 2);  // PortVLMappingErrors, PortLoopingErrors, two discards N/A
}

TEST(IbdiagnetPm, CrlfLineEndsReadTheSame) {
  const IbdiagnetPm pm = ParseIbdiagnetPm(Crlf(ReadIbFixture(kSpine)), kSpine);
  EXPECT_TRUE(pm.problems.empty()) << ProblemsText(pm.problems);
  ASSERT_EQ(pm.blocks.size(), 2u);
  EXPECT_EQ(pm.blocks[0].port_name, "ib-switch-sequoia/U1/P1/1/1");
  EXPECT_EQ(Counter(Of(pm.blocks[0], PmaAttribute::kPortCountersExtended), "PortXmitWait").value,
            9463628588u);
  EXPECT_EQ(pm.Counters().size(), 8u);
}

TEST(IbdiagnetPm, ATruncatedBlockDropsTheCutValueAndKeepsTheRest) {
  const std::string text = ReadIbFixture(kSpine);
  const std::string cut_after = "port_xmit_data_extended=0x0000000005ae";
  const size_t at = text.find(cut_after);
  ASSERT_NE(at, std::string::npos);
  const std::string cut = text.substr(0, at + cut_after.size());
  const IbdiagnetPm pm = ParseIbdiagnetPm(cut, "cut");
  ASSERT_EQ(pm.blocks.size(), 2u);
  EXPECT_EQ(pm.blocks[0].counters.size(), 4u);  // the first block is whole
  const IbdiagnetPmBlock& b = pm.blocks[1];
  EXPECT_EQ(Counter(Of(b, PmaAttribute::kPortCounters), "PortXmitData").value, 0x05ae3e33u);
  // The cut 64-bit value (12 of 16 digits) is not read as 0x5ae.
  for (const IbPortCounters& c : b.counters) EXPECT_NE(c.attribute, PmaAttribute::kPortCountersExtended);
  const std::string line = std::to_string(LineOf(text, at));
  EXPECT_THAT(ProblemPlaces(pm.problems), ElementsAre("cut:" + line + ":25", "cut:" + line + ":39"))
      << ProblemsText(pm.problems);
  EXPECT_THAT(pm.problems[0].message, HasSubstr("12 hex digits"));
  EXPECT_THAT(pm.problems[1].message, HasSubstr("cut short"));
}

TEST(IbdiagnetPm, GarbageAndImpossibleValuesAreProblemsAndTheRestIsKept) {
  std::string text = ReadIbFixture(kHca);
  // Lines 4..: garbage, a value that is not hex, a 16-bit counter with 17 bits, 2^64 - 40.
  const size_t first = text.find("link_down_counter=");
  ASSERT_NE(first, std::string::npos);
  text.insert(first,
              "garbage without an equals sign\n"
              "port_rcv_errors=0xZZ\n"
              "symbol_error_counter=0x00010000\n"
              "port_rcv_errors_extended=0xffffffffffffffd8\n"
              "_extended=0x0000000000000001\n");
  text += "words after the block\n";
  const IbdiagnetPm pm = ParseIbdiagnetPm(text, "g");
  ASSERT_EQ(pm.blocks.size(), 1u);
  const IbdiagnetPmBlock& b = pm.blocks[0];
  // The real lines further down still give the values.
  EXPECT_EQ(Counter(Of(b, PmaAttribute::kPortCounters), "SymbolErrorCounter").value, 65535u);
  EXPECT_EQ(Counter(Of(b, PmaAttribute::kPortCountersExtended), "PortRcvErrors").value, 1436771u);
  EXPECT_EQ(Counter(Of(b, PmaAttribute::kPortCounters), "LinkDownedCounter").value, 55u);
  // A name that is only the suffix is no counter: kept under its own name.
  EXPECT_EQ(b.other.at("_extended"), 1u);
  for (const IbPortCounters& c : b.counters) EXPECT_FALSE(c.counters.contains(""));
  const std::string last = std::to_string(LineOf(text, text.size() - 1));
  EXPECT_THAT(ProblemPlaces(pm.problems),
              ElementsAre("g:4:1", "g:5:17", "g:6:22", "g:7:26", "g:" + last + ":1"))
      << ProblemsText(pm.problems);
  EXPECT_THAT(pm.problems[2].message, HasSubstr("16-bit"));
  EXPECT_THAT(pm.problems[3].message, HasSubstr("implausible"));
  EXPECT_THAT(pm.problems[4].message, HasSubstr("not inside a port block"));
}

}  // namespace railwatch::ib::ibdiagnet_pm_test
