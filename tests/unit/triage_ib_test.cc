// `railwatch triage` on InfiniBand tool output (tests/fixtures/ib, real captures from
// ../shared/realworld): discards, link errors, saturated counters, credit waits and links below
// the fabric's usual speed, with the names a topology among the inputs gives.

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/triage.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "support/ttar.h"
#include "triage_run.h"

namespace railwatch {
namespace triage_ib_test {

using ::testing::HasSubstr;
using ::testing::Not;

using testing::Block;
using testing::TriageRun;

TriageRun Triage(const std::vector<std::string>& files, bool json = false) {
  return testing::Triage(files, "", json);
}

std::string Fixture(const std::string& name) { return testing::FixturePath("ib/" + name); }

// The mail-quoted ibqueryerrors of an FDR fabric: the SX6036 "ys23ib4" discards on ports 5
// and 6, its links went down (LinkDownedCounter 2 and 9), 65535 and 4294967295 are counters
// that stopped.
TEST(TriageIb, IbqueryerrorsDiscardsLinkDownsAndSaturation) {
  TriageRun r = Triage({Fixture("ibqueryerrors_01_fdr_sx6036_saturated_counters_mail_quoted.txt")});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("as ibqueryerrors output:"));
  const std::string discards = Block(r.out, "FAIL  InfiniBand: ");
  EXPECT_THAT(discards, HasSubstr("discarded packets on a lossless fabric (PortXmitDiscards)"));
  // Worst first: port 6's 14176 before port 5's 649.
  EXPECT_THAT(discards, HasSubstr("ys23ib4 port 6 PortXmitDiscards 14176"));
  EXPECT_LT(discards.find("port 6"), discards.find("port 5"));
  EXPECT_THAT(discards, HasSubstr("perfquery -x -G 0x0002c903006e29b0 6"));
  const std::string errors = Block(r.out, "FAIL  InfiniBand: link errors on");
  EXPECT_THAT(errors, HasSubstr("(links went down)"));
  EXPECT_THAT(errors, HasSubstr("LinkDownedCounter 9"));
  const std::string stuck = Block(r.out, "WARN  InfiniBand: counters stuck at all ones");
  EXPECT_THAT(stuck, HasSubstr("SymbolErrorCounter 65535"));
  EXPECT_THAT(stuck, HasSubstr("PortXmitWait 4294967295"));
  EXPECT_THAT(r.out, HasSubstr("where ports waited longest for credits"));
  // "port ALL" sums the ports: never a port of its own.
  EXPECT_THAT(r.out, Not(HasSubstr("port ALL")));
}

// perfquery names a LID only; the -p report among the inputs names the switch.
TEST(TriageIb, PerfqueryNamedThroughTheTopologyBesideIt) {
  TriageRun r = Triage({Fixture("ibnetdiscover_p_01_osc_edr_ca_sw_lines_and_unconnected.txt"),
                        Fixture("perfquery_x_02_osc_edr_switch_lid2052_xmitdiscards_linkdowned.txt")});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(Block(r.out, "FAIL  InfiniBand: 1 port discarded"),
              HasSubstr("ib-i4l1s01 port 1 PortXmitDiscards 20046"));
}

// An old fabric: 46 of its 318 port lines run 4xDDR where the rest run 4xQDR (ConnectX HCAs
// that negotiate DDR on QDR switches).
TEST(TriageIb, LinksBelowTheFabricsUsualSpeed) {
  TriageRun r = Triage({Fixture("ibnetdiscover_03_psmn_x5_voltaire_qdr_ddr_mixed_full.txt")});
  const std::string below = Block(r.out, "WARN  InfiniBand: 46 links below the fabric's usual 4xQDR (40 Gb/s)");
  // Every switch is "Voltaire 4036 - 36 QDR ports switch" and every HCA "MT25408 ConnectX
  // Mellanox Technologies": the GUID says which.
  EXPECT_THAT(below, HasSubstr("Voltaire 4036 - 36 QDR ports switch (0x0008f10500200b50) port 4 "
                               "4xDDR to MT25408 ConnectX Mellanox Technologies (0x003048c749cd0000) "
                               "port 1"));
  EXPECT_THAT(below, HasSubstr("34 more links"));
  // One speed everywhere: nothing below it.
  r = Triage({Fixture("ibnetdiscover_06_ibdiagnet_generated_ndr_quantum2_port_labels_excerpt.txt")});
  EXPECT_THAT(r.out, Not(HasSubstr("links below")));
  EXPECT_THAT(r.out, HasSubstr("as ibnetdiscover output: 75 records."));
}

TEST(TriageIb, JsonSaysWhatEachInputWas) {
  TriageRun r = Triage({Fixture("perfquery_x_01_osc_edr_switch_lid1719_two_ports_extended_errors.txt")},
                       /*json=*/true);
  nlohmann::json summary;
  std::istringstream lines(r.out);
  std::string line;
  int events = 0;
  while (std::getline(lines, line)) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j["kind"] == "ib.port_counters") {
      ++events;
      EXPECT_TRUE(j["PortXmitWait"].is_number()) << line;
    }
    if (j["kind"] == "triage.summary") summary = j;
  }
  EXPECT_EQ(events, 2);  // ports 1 and 2
  ASSERT_TRUE(summary.contains("infiniband")) << r.out;
  EXPECT_EQ(summary["infiniband"][0]["kind"], "perfquery");
  EXPECT_EQ(summary["infiniband"][0]["records"], 2);
}

// ibdiagnet2.cables: two switch ports' twin-port OSFP, neither near its alarm nor flagged.
TEST(TriageIb, CableModulesReadWithTheHottestAndTwinPortModules) {
  TriageRun r = Triage(
      {Fixture("ibdiagnet2_cables_01_ndr_osfp_sr8_800g_twin_port_switch_side_excerpt.txt")});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("as ibdiagnet-cables output:"));
  const std::string read = Block(r.out, "INFO  InfiniBand: 2 cable modules read");
  EXPECT_THAT(read, HasSubstr("58 °C, alarm at 80 °C"));
  EXPECT_THAT(read, HasSubstr("G2430283435 (2 ports)"));
  EXPECT_THAT(r.out, Not(HasSubstr("WARN  InfiniBand:")));
}

// The same file as a later run would print it with port 1's module hot and its receive power
// flagged (the copy changed here, not the sample): both are warnings naming the port.
TEST(TriageIb, AHotOrFlaggedModuleIsAWarning) {
  std::ifstream in(Fixture("ibdiagnet2_cables_01_ndr_osfp_sr8_800g_twin_port_switch_side_excerpt.txt"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_NE(text.find("Temperature: 58C"), std::string::npos);
  text.replace(text.find("Temperature: 58C"), 16, "Temperature: 77C");
  text.replace(text.find("RX Power Alarm and Warning: 0x0000"), 34,
               "RX Power Alarm and Warning: 0x0010");
  TriageRun r = testing::Triage({"-"}, text);
  EXPECT_EQ(r.code, kExitOk) << r.err;
  const std::string hot =
      Block(r.out, "WARN  InfiniBand: 1 cable module within 5 °C of its own temperature alarm");
  EXPECT_THAT(hot, HasSubstr("port 1"));
  EXPECT_THAT(hot, HasSubstr("77 °C, alarm at 80 °C (OSFP-SR8-800G G2430283435)"));
  EXPECT_THAT(hot, HasSubstr("mlxlink -d lid-24 -p 1 -m"));
  const std::string flagged =
      Block(r.out, "WARN  InfiniBand: 1 cable module with alarm or warning flags set");
  EXPECT_THAT(flagged, HasSubstr("rx_power 0x10"));
}

// One port's attributes are one reading: ibdiagnet2.pm's HCA block (pm_02) prints the 8- and
// 16-bit PortCounters beside PortCountersExtended, whose LinkDownedCounter and
// SymbolErrorCounter stay 0 on this HCA (CATALOGUE). The count is the larger: the link went
// down 55 times and the symbol errors are stuck at 65535; the discards are the 64-bit 111911.
TEST(TriageIb, EveryAttributeOfAPortIsOneReadingAndTheLargerCountIsKept) {
  TriageRun r = Triage({Fixture("ibdiagnet2_pm_02_ndr_cx7_hca_saturated_symbol_rcv_errors_block.txt")});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  const std::string errors = Block(r.out, "FAIL  InfiniBand: link errors on 1 port (links went down)");
  EXPECT_THAT(errors, HasSubstr("LinkDownedCounter 55"));
  EXPECT_THAT(Block(r.out, "WARN  InfiniBand: counters stuck at all ones on 1 port"),
              HasSubstr("SymbolErrorCounter 65535"));
  EXPECT_THAT(Block(r.out, "FAIL  InfiniBand: 1 port discarded packets"),
              HasSubstr("PortXmitDiscards 111911"));
  // A db_csv's PM_INFO row is one record per attribute too: the 272-node NDR fabric's leaf
  // ports went down (264 with LinkDownedCounter above 0) and discarded.
  TriageRun db = Triage({Fixture("db_csv_01_ndr_quantum2_mqm9700_272nodes_full_run_complete.db_csv")});
  EXPECT_THAT(db.out, HasSubstr("FAIL  InfiniBand: link errors on"));
  EXPECT_THAT(db.out, HasSubstr("ports discarded packets on a lossless fabric"));
}

}  // namespace triage_ib_test
}  // namespace railwatch
