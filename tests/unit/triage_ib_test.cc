// `railwatch triage` on InfiniBand tool output (tests/fixtures/ib, real captures from
// ../shared/realworld): discards, link errors, saturated counters, credit waits and links below
// the fabric's usual speed, with the names a topology among the inputs gives.

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

}  // namespace triage_ib_test
}  // namespace railwatch
