// `railwatch triage` on pasted optics, FEC and PHY tool output (triage/optics.h), in process:
// the real samples in tests/fixtures/optics, and scenarios made from them by changing a reading
// in the test (the fixtures stay as captured): low receive power, a failing laser, a hot
// module, a high pre-FEC BER, errors after FEC, link downs; mixed with an NCCL log; --json.

#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "cli/commands.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "support/ttar.h"
#include "unit/triage_run.h"

namespace railwatch {
namespace triage_optics_test {

using testing::Block;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::TriageRun;

std::string Fixture(const std::string& name) { return testing::FixturePath("optics/" + name); }
std::string Text(const std::string& name) { return testing::ReadFixture("optics/" + name); }

const char kSfp[] = "optics_01_ethtool_m_sfp_10gbase_sr_i40e_dom_thresholds.txt";

// optics_01 as pasted after its command, with one reading changed.
std::string SfpWith(const std::vector<std::pair<std::string, std::string>>& changes) {
  std::string text = "[root@gpu-node-7 ~]# ethtool -m eth3\n" + Text(kSfp) + "\n";
  for (const auto& [from, to] : changes) {
    EXPECT_THAT(text, HasSubstr(from));
    text = absl::StrReplaceAll(text, {{from, to}});
  }
  return text;
}

TriageRun Stdin(const std::string& text, bool json = false) {
  return testing::Triage({"-"}, text, json);
}

// A healthy SFP: no finding but the summary, with its identity and readings.
TEST(TriageOptics, HealthyModuleIsSummarised) {
  TriageRun r = testing::Triage({Fixture(kSfp)});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Read 77 lines of optics tool output in"));
  EXPECT_THAT(r.out, HasSubstr("No failure found."));
  EXPECT_THAT(r.out, Not(HasSubstr("FAIL")));
  EXPECT_THAT(r.out, Not(HasSubstr("WARN")));
  const std::string summary = Block(r.out, "INFO  Optics, FEC and PHY readings: 1 port, nothing");
  EXPECT_THAT(summary, HasSubstr("FS SFP-10GSR-85 SN F2020533679 (SFP, SFF-8472, 10G Base-SR, "
                                 "850 nm): 39.2 °C"));
  EXPECT_THAT(summary, HasSubstr("Rx -1.88 dBm (warning low"));
  EXPECT_THAT(r.out, HasSubstr("Optics tool output: 1 port (ethtool -m 1)"));
}

// Receive power under the alarm while this end's own laser is fine: the fibre or the far end.
TEST(TriageOptics, RxPowerBelowAlarmPointsAtTheFibreOrTheFarEnd) {
  TriageRun r = Stdin(SfpWith({{"0.6486 mW / -1.88 dBm", "0.0302 mW / -15.20 dBm"}}));
  EXPECT_EQ(r.code, kExitOk) << r.err;
  const std::string f = Block(r.out, "FAIL  Optics eth3: receive power below its alarm threshold");
  EXPECT_THAT(f, HasSubstr("on lane 1 (-15.20 dBm, 1.10 dB under -14.10 dBm)"));
  EXPECT_THAT(f, HasSubstr("lane 1"));
  EXPECT_THAT(f, HasSubstr("-15.20 dBm: 3.10 dB under its warning low -12.10 dBm, 1.10 dB under "
                           "its alarm"));
  EXPECT_THAT(f, HasSubstr("FS SFP-10GSR-85 SN F2020533679"));
  EXPECT_THAT(f, HasSubstr("this end's own Tx power and bias are in range"));
  EXPECT_THAT(f, HasSubstr("far end's transmitter"));
  EXPECT_THAT(f, HasSubstr("ethtool -m eth3"));
  EXPECT_THAT(f, HasSubstr("lldpcli show neighbors ports eth3"));
  // Between warning and alarm: a warning.
  r = Stdin(SfpWith({{"0.6486 mW / -1.88 dBm", "0.0501 mW / -13.00 dBm"}}));
  EXPECT_THAT(Block(r.out, "WARN  Optics eth3: receive power below its warning threshold"),
              HasSubstr("0.90 dB under -12.10 dBm"));
  EXPECT_THAT(r.out, Not(HasSubstr("FAIL")));
}

// Tx power and bias low: this optic's laser.
TEST(TriageOptics, LaserFailingIsThisOptic) {
  TriageRun r = Stdin(
      SfpWith({{"6.090 mA", "1.500 mA"}, {"0.6367 mW / -1.96 dBm", "0.1000 mW / -10.00 dBm"}}));
  const std::string tx =
      Block(r.out, "FAIL  Optics eth3: transmit power below its alarm threshold");
  EXPECT_THAT(tx, HasSubstr("this optic's laser (ageing or failing): replace the module"));
  const std::string bias = Block(r.out, "FAIL  Optics eth3: laser bias out of its alarm range");
  EXPECT_THAT(bias, HasSubstr("1.50 mA (warning_low 3, warning_high 12, alarm_low 2, "
                              "alarm_high 15 mA)"));
}

TEST(TriageOptics, HotModule) {
  TriageRun r = Stdin(
      SfpWith({{"39.18 degrees C / 102.52 degrees F", "76.50 degrees C / 169.70 degrees F"}}));
  const std::string f =
      Block(r.out, "WARN  Optics eth3: module at 76.5 °C, within 5 °C of its alarm at 80 °C");
  EXPECT_THAT(f, HasSubstr("warning 70 °C, alarm 80 °C"));
  EXPECT_THAT(f, HasSubstr("the airflow at this port"));
  r = Stdin(
      SfpWith({{"39.18 degrees C / 102.52 degrees F", "81.00 degrees C / 177.80 degrees F"}}));
  EXPECT_THAT(r.out, HasSubstr("FAIL  Optics eth3: module at 81.0 °C, at or above its alarm"));
}

// The module's own flags: On in ethtool -m.
TEST(TriageOptics, FlagsTheModuleSet) {
  TriageRun r = Stdin(SfpWith({{"Laser output power low warning            : Off",
                                "Laser output power low warning            : On"}}));
  EXPECT_THAT(Block(r.out, "WARN  Optics eth3: the module set 1 flag: tx_power_low_warning"),
              HasSubstr("flags         tx_power_low_warning"));
}

// SONiC: Rx LOS on media lanes 1-4 of 8 while the data path is not initialised.
TEST(TriageOptics, SonicRxLosLanes) {
  TriageRun r = testing::Triage(
      {Fixture("optics_09_sonic_show_int_transceiver_status_cmis_rx_los_lanes_1_4_truncated.txt")});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  const std::string f =
      Block(r.out, "FAIL  Optics Ethernet128: receive loss of signal (Rx LOS) on lanes 1-4 of 8");
  EXPECT_THAT(f, HasSubstr("DP_PRE_INIT_CHECK"));
  EXPECT_THAT(f, HasSubstr("lanes 1-4 only: on a parallel optic"));
  EXPECT_THAT(f, HasSubstr("show interfaces transceiver status Ethernet128"));
  EXPECT_THAT(f, HasSubstr("show lldp neighbors Ethernet128"));
}

// SONiC fec-stats: uncorrectable codewords on Ethernet0; Ethernet8 is clean.
TEST(TriageOptics, SonicUncorrectableFec) {
  TriageRun r = testing::Triage(
      {Fixture("optics_08_sonic_show_interfaces_counters_fec_stats_truncated.txt")});
  const std::string f =
      Block(r.out, "FAIL  Optics Ethernet0: 34 uncorrectable FEC codewords (136403 corrected)");
  EXPECT_THAT(f, HasSubstr("show interfaces counters fec-stats   # twice"));
  EXPECT_THAT(r.out, Not(HasSubstr("Optics Ethernet8:")));
  EXPECT_THAT(Block(r.out, "INFO  Optics, FEC and PHY readings: 2 ports"),
              HasSubstr("Ethernet8     FEC port state D; corrected_blocks 0"));
}

// mlxlink -c with a raw BER past RS(544,514)'s limit, errors after FEC and link downs.
TEST(TriageOptics, MlxlinkBerAndLinkDowns) {
  std::string text =
      "clnet36$ mlxlink -d mlx5_1 -c\n" +
      Text("optics_12_mlxlink_text_c_400g_physical_counters_ber_ansi_colored_clnet36.txt");
  text = absl::StrReplaceAll(
      text,
      {{"2E-9", "3E-4"},
       {"Link Down Counter                  : 0", "Link Down Counter                  : 2"},
       {"Effective Physical Errors          : 0", "Effective Physical Errors          : 12"}});
  TriageRun r = Stdin(text);
  EXPECT_EQ(r.code, kExitOk) << r.err;
  const std::string ber =
      Block(r.out, "FAIL  Optics mlx5_1: pre-FEC BER 0.0003 above 2.4e-05 and past RS(544,514)");
  EXPECT_THAT(ber, HasSubstr("raw BER 0.0003"));
  EXPECT_THAT(ber, HasSubstr("mlxlink -d mlx5_1 -c --rx_fec_histogram --show_histogram"));
  EXPECT_THAT(ber, HasSubstr("the paste has no DOM for this port"));
  EXPECT_THAT(r.out, HasSubstr("FAIL  Optics mlx5_1: errors after FEC: effective BER 0, 12 "
                               "effective errors"));
  EXPECT_THAT(Block(r.out, "WARN  Optics mlx5_1: link went down 2 times"),
              HasSubstr("the counters were cleared 241.9 days ago"));
  // The warning band: above 2.4e-5, under 2.4e-4.
  text = absl::StrReplaceAll(text, {{"3E-4", "3E-5"}});
  r = Stdin(text);
  EXPECT_THAT(r.out, HasSubstr("WARN  Optics mlx5_1: pre-FEC BER 3e-05 above 2.4e-05\n"));
}

// A passive copper cable's LOS flags are not measurements: information, not a failure.
TEST(TriageOptics, PassiveCopperFlagsAreInformation) {
  TriageRun r = testing::Triage(
      {Fixture("mlxlink_01_cx7_ib_ndr_show_mo_passive_copper_trailing_spaces.txt")});
  EXPECT_THAT(r.out, HasSubstr("No failure found."));
  EXPECT_THAT(r.out, HasSubstr("INFO  Optics (unnamed, line 1): receive loss of signal (Rx LOS) "
                               "on lanes 1, 3, 4 of 4 on a passive copper cable"));
}

// Optics output pasted into an NCCL log: both read, the log's line numbers true.
TEST(TriageOptics, MixedWithAnNcclLog) {
  const std::string log =
      testing::ReadFixture("logs/nccl_03_ib_status12_vendor129_roce_gid_ipv6.log");
  const std::string text =
      Text("optics_06_ethtool_I_show_fec_rs_stats_and_eth_phy_group_fbnic.txt") + log +
      SfpWith({{"0.6486 mW / -1.88 dBm", "0.0302 mW / -15.20 dBm"}});
  TriageRun r = Stdin(text);
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("IB completion error IBV_WC_RETRY_EXC_ERR"));
  // nccl_03's first line is line 12 of the paste (after optics_06's 11).
  EXPECT_THAT(Block(r.out, "FAIL  IB completion error"), HasSubstr("first seen    -:12"));
  EXPECT_THAT(r.out, HasSubstr("FAIL  Optics eth3: receive power below its alarm threshold"));
  EXPECT_THAT(r.out, HasSubstr("(ethtool --show-fec, ethtool -S, ethtool -m): 3 readings"));
}

// Bad values: FILE:LINE:COLUMN on stderr, the rest read.
TEST(TriageOptics, BadValueSaysWhere) {
  TriageRun r = Stdin(SfpWith({{"6.090 mA", "lots mA"}}));
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_THAT(r.err, HasSubstr("railwatch triage: -:33:46: \"Laser bias current\": value \"lots "
                               "mA\" is not a reading ethtool prints"));
  EXPECT_THAT(r.out, HasSubstr("1 readings, 1 problems."));
  EXPECT_THAT(r.out, HasSubstr("Tx -1.96 dBm"));
}

// --json: events with numbers and per-lane lists, findings, and the summary's optics entry.
TEST(TriageOptics, Json) {
  TriageRun r = testing::Triage(
      {Fixture("optics_02_mlxlink_json_mft4.34.1_cx_400g_dr4_osfp_module_counters.json")}, "",
      true);
  EXPECT_EQ(r.code, kExitOk) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  nlohmann::json module, phy, summary;
  int findings = 0;
  while (std::getline(lines, line)) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j["kind"] == "optics.module") module = j;
    if (j["kind"] == "optics.phy") phy = j;
    if (j["kind"] == "triage.finding") ++findings;
    if (j["kind"] == "triage.summary") summary = j;
  }
  ASSERT_TRUE(module.is_object()) << r.out;
  EXPECT_EQ(module["temperature_c"], 61);
  EXPECT_EQ(module["temperature_c_alarm_high"], 80);
  EXPECT_EQ(module["rx_power_dbm"], nlohmann::json({3.583, 3.253, 3.233, 2.658}));
  EXPECT_EQ(module["pn"], "OSFP-400G-DR4");
  EXPECT_EQ(module["tool"], "mlxlink --json");
  ASSERT_TRUE(phy.is_object());
  EXPECT_EQ(phy["raw_ber"], 5e-10);
  EXPECT_EQ(phy["effective_ber"], 0);
  EXPECT_EQ(phy["raw_errors_lanes"], nlohmann::json({3017647, 15132549, 7368641, 9233545}));
  EXPECT_EQ(phy["reading"], module["reading"]);
  EXPECT_EQ(findings, 1);  // the summary: nothing out of range
  ASSERT_EQ(summary["optics"].size(), 1u);
  EXPECT_EQ(summary["optics"][0]["tools"], nlohmann::json({"mlxlink --json"}));
  EXPECT_EQ(summary["optics"][0]["readings"], 1);
  EXPECT_EQ(summary["verdict"], "no_failure");
}

}  // namespace triage_optics_test
}  // namespace railwatch
