// The optics, FEC and PHY tool-output readers (optics/readers.h) on every real sample in
// tests/fixtures/optics (copied byte for byte from ../shared/realworld; CATALOGUE.md sections N
// and V say what each holds and what a reader must extract), then the shapes no real capture
// was found for (SFF-8636 and CMIS `ethtool -m`, SONiC --dom, ethtool FEC lanes), written here
// from the tools' printf formats, and bad input.

#include "optics/readers.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/ttar.h"

namespace railwatch::optics {
namespace optics_readers_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

ToolOutput Read(const std::string& fixture) {
  const std::string text = testing::ReadFixture("optics/" + fixture);
  EXPECT_FALSE(text.empty()) << fixture;
  return ReadToolOutput(text);
}

std::vector<double> Lanes(const std::vector<std::optional<double>>& lanes) {
  std::vector<double> out;
  for (const auto& v : lanes) out.push_back(v ? *v : -999);
  return out;
}

std::vector<std::string> ProblemTexts(const ToolOutput& out) {
  std::vector<std::string> texts;
  for (const ToolProblem& p : out.problems) texts.push_back(p.ToString("in"));
  return texts;
}

// A full ethtool -m of a 10G SFP SR, TAB-indented: identity, DOM, flags, thresholds.
TEST(OpticsReaders, EthtoolModuleSfpWithDomAndThresholds) {
  const ToolOutput out = Read("optics_01_ethtool_m_sfp_10gbase_sr_i40e_dom_thresholds.txt");
  EXPECT_THAT(ProblemTexts(out), IsEmpty());
  ASSERT_EQ(out.readings.size(), 1u);
  const ToolReading& r = out.readings[0];
  EXPECT_EQ(r.format, ToolFormat::kEthtoolModule);
  EXPECT_EQ(r.line, 1);
  EXPECT_EQ(r.Value("Identifier"), "0x03 (SFP)");
  EXPECT_EQ(r.Value("Connector"), "0x07 (LC)");
  // Repeated keys are kept, in order.
  EXPECT_THAT(r.Values("Transceiver type"),
              ElementsAre("10G Ethernet: 10G Base-SR", "FC: short distance (S)",
                          "FC: Multimode, 62.5um (M6)", "FC: Multimode, 50um (M5)"));
  EXPECT_THAT(r.Values("Option"),
              ElementsAre("RX_LOS implemented", "TX_FAULT implemented", "TX_DISABLE implemented"));
  ASSERT_TRUE(r.module.has_value());
  const ModuleReading& m = *r.module;
  EXPECT_EQ(m.spec, ModuleSpec::kSff8472);
  EXPECT_EQ(m.form_factor, "SFP");
  EXPECT_EQ(m.media, "10G Base-SR");
  EXPECT_EQ(m.vendor, "FS");
  EXPECT_EQ(m.part_number, "SFP-10GSR-85");
  EXPECT_EQ(m.serial, "F2020533679");
  EXPECT_EQ(m.revision, "A");
  EXPECT_EQ(m.wavelength_nm, 850);
  EXPECT_THAT(Lanes(m.tx_bias_ma), ElementsAre(6.090));
  EXPECT_THAT(Lanes(m.tx_power_dbm), ElementsAre(-1.96));
  EXPECT_THAT(Lanes(m.rx_power_dbm), ElementsAre(-1.88));
  EXPECT_EQ(m.temperature_c, 39.18);
  EXPECT_EQ(m.supply_voltage_v, 3.3544);
  // Every flag Off.
  EXPECT_THAT(m.flags, IsEmpty());
  const Thresholds& bias = m.threshold(Quantity::kTxBias);
  EXPECT_EQ(bias.alarm_high, 15.0);
  EXPECT_EQ(bias.alarm_low, 2.0);
  EXPECT_EQ(bias.warning_high, 12.0);
  EXPECT_EQ(bias.warning_low, 3.0);
  const Thresholds& tx = m.threshold(Quantity::kTxPower);
  EXPECT_EQ(tx.alarm_high, 2.0);
  EXPECT_EQ(tx.alarm_low, -9.5);
  EXPECT_EQ(tx.warning_high, 0.0);
  EXPECT_EQ(tx.warning_low, -7.5);
  const Thresholds& temp = m.threshold(Quantity::kTemperature);
  EXPECT_EQ(temp.alarm_high, 80.0);
  EXPECT_EQ(temp.alarm_low, -10.0);
  EXPECT_EQ(temp.warning_high, 70.0);
  EXPECT_EQ(temp.warning_low, 0.0);
  const Thresholds& vcc = m.threshold(Quantity::kSupplyVoltage);
  EXPECT_EQ(vcc.alarm_high, 3.63);
  EXPECT_EQ(vcc.alarm_low, 2.97);
  EXPECT_EQ(vcc.warning_high, 3.465);
  EXPECT_EQ(vcc.warning_low, 3.135);
  const Thresholds& rx = m.threshold(Quantity::kRxPower);
  EXPECT_EQ(rx.alarm_high, 2.0);
  EXPECT_EQ(rx.alarm_low, -14.1);
  EXPECT_EQ(rx.warning_high, 0.0);
  EXPECT_EQ(rx.warning_low, -12.1);
}

// No indentation, a masked vendor, cut before the DOM.
TEST(OpticsReaders, EthtoolModuleHeaderOnlyNoIndentation) {
  const ToolOutput out =
      Read("optics_10_ethtool_m_sfp_10gbase_lr_fiber_unplugged_header_truncated.txt");
  EXPECT_THAT(ProblemTexts(out), IsEmpty());
  ASSERT_EQ(out.readings.size(), 1u);
  const ToolReading& r = out.readings[0];
  ASSERT_TRUE(r.module.has_value());
  EXPECT_EQ(r.module->form_factor, "SFP");
  EXPECT_EQ(r.module->media, "10G Base-LR");
  EXPECT_EQ(r.module->wavelength_nm, 1270);
  EXPECT_EQ(r.module->vendor, "FS");
  EXPECT_EQ(r.module->part_number, "XXXXXXXXXXXXXXX");
  EXPECT_EQ(r.Value("Vendor OUI"), "XXXXXXXX");
  EXPECT_EQ(r.Value("Connector"), "0x01 (SC)");
  EXPECT_EQ(r.Value("Length (SMF,km)"), "20km");
  EXPECT_FALSE(r.module->has_diagnostics());
  EXPECT_EQ(out.lines, 20);
}

// Two commands with their `]# ` prompts: FEC with RS statistics, then the eth-phy group.
TEST(OpticsReaders, EthtoolShowFecStatisticsAndEthPhyGroup) {
  const ToolOutput out = Read("optics_06_ethtool_I_show_fec_rs_stats_and_eth_phy_group_fbnic.txt");
  EXPECT_THAT(ProblemTexts(out), IsEmpty());
  ASSERT_EQ(out.readings.size(), 2u);
  const ToolReading& fec = out.readings[0];
  EXPECT_EQ(fec.format, ToolFormat::kEthtoolFec);
  EXPECT_EQ(fec.device, "eth0");
  EXPECT_EQ(fec.command, "ethtool -I --show-fec eth0");
  EXPECT_EQ(fec.line, 2);
  ASSERT_TRUE(fec.fec.has_value());
  EXPECT_THAT(fec.fec->configured, ElementsAre("RS"));
  EXPECT_THAT(fec.fec->active, ElementsAre("RS"));
  EXPECT_EQ(fec.fec->corrected_blocks, 0u);
  EXPECT_EQ(fec.fec->uncorrectable_blocks, 0u);
  EXPECT_FALSE(fec.fec->corrected_bits.has_value());
  const ToolReading& phy = out.readings[1];
  EXPECT_EQ(phy.format, ToolFormat::kEthtoolStats);
  EXPECT_EQ(phy.device, "eth0");
  EXPECT_EQ(phy.Value("eth-phy-SymbolErrorDuringCarrier"), "0");
  ASSERT_TRUE(phy.phy.has_value());
  EXPECT_EQ(phy.phy->symbol_errors, 0u);
  // Every line is the tools' own (the blank line between them is not).
  EXPECT_EQ(out.lines, 10);
}

// mlxlink -m -c --json (MFT 4.34.1): operational, module DOM with ranges, counters, BER.
TEST(OpticsReaders, MlxlinkJsonModuleAndCounters) {
  const ToolOutput out =
      Read("optics_02_mlxlink_json_mft4.34.1_cx_400g_dr4_osfp_module_counters.json");
  EXPECT_THAT(ProblemTexts(out), IsEmpty());
  ASSERT_EQ(out.readings.size(), 1u);
  const ToolReading& r = out.readings[0];
  EXPECT_EQ(r.format, ToolFormat::kMlxlinkJson);
  EXPECT_EQ(r.Value("code", "status"), "0");
  EXPECT_EQ(r.Value("message", "status"), "success");
  ASSERT_TRUE(r.phy.has_value());
  const PhyCounters& p = *r.phy;
  EXPECT_EQ(p.state, "Active");
  EXPECT_EQ(p.physical_state, "ETH_AN_FSM_ENABLE");
  EXPECT_EQ(p.speed, "400G");
  EXPECT_EQ(p.width, "4x");
  EXPECT_EQ(p.fec, "Standard_RS-FEC - (544,514)");
  EXPECT_EQ(p.minutes_since_clear, 2718.1);
  EXPECT_EQ(p.effective_errors, 0u);
  EXPECT_EQ(p.effective_ber, 0.0);  // "15E-255"
  EXPECT_EQ(p.raw_ber, 5e-10);
  EXPECT_THAT(Lanes(p.raw_ber_lanes), ElementsAre(1e-10, 1e-9, 4e-10, 5e-10));
  ASSERT_EQ(p.raw_errors_lanes.size(), 4u);
  EXPECT_EQ(p.raw_errors_lanes[0], 3017647u);
  EXPECT_EQ(p.raw_errors_lanes[1], 15132549u);
  EXPECT_EQ(p.raw_errors_lanes[2], 7368641u);
  EXPECT_EQ(p.raw_errors_lanes[3], 9233545u);
  EXPECT_EQ(p.link_down, 0u);
  EXPECT_EQ(p.link_error_recovery, 0u);
  EXPECT_EQ(p.firmware, "28.47.1088");
  EXPECT_EQ(p.mft_version, "4.34.1-10");
  EXPECT_EQ(r.Value("amBER Version"), "5.75");
  EXPECT_EQ(p.recommendation, "No issue was observed");
  EXPECT_EQ(p.status_opcode, 0);
  EXPECT_THAT(p.enabled_speeds, HasSubstr("0x0001bff2 (400G_4X,400G_8X,"));
  ASSERT_TRUE(r.module.has_value());
  const ModuleReading& m = *r.module;
  EXPECT_EQ(m.form_factor, "OSFP");
  EXPECT_EQ(m.spec, ModuleSpec::kCmis);
  EXPECT_EQ(r.Value("Compliance"), "IB NDR,400GBASE-DR4");
  EXPECT_EQ(m.media, "400GBASE-DR4");
  EXPECT_EQ(m.part_number, "OSFP-400G-DR4");
  EXPECT_EQ(r.Value("FW Version"), "40.242.17");
  EXPECT_EQ(m.temperature_c, 61);
  EXPECT_EQ(m.threshold(Quantity::kTemperature).alarm_low, -10);
  EXPECT_EQ(m.threshold(Quantity::kTemperature).alarm_high, 80);
  EXPECT_DOUBLE_EQ(*m.supply_voltage_v, 3.2355);  // mV
  EXPECT_DOUBLE_EQ(*m.threshold(Quantity::kSupplyVoltage).alarm_low, 2.97);
  EXPECT_DOUBLE_EQ(*m.threshold(Quantity::kSupplyVoltage).alarm_high, 3.63);
  EXPECT_THAT(Lanes(m.tx_bias_ma), ElementsAre(265.504, 265.504, 248.416, 248.416));
  EXPECT_EQ(m.threshold(Quantity::kTxBias).alarm_high, 480);
  EXPECT_THAT(Lanes(m.rx_power_dbm), ElementsAre(3.583, 3.253, 3.233, 2.658));
  EXPECT_EQ(m.threshold(Quantity::kRxPower).alarm_low, -9.914);
  EXPECT_EQ(m.threshold(Quantity::kRxPower).alarm_high, 6.999);
  EXPECT_THAT(Lanes(m.tx_power_dbm), ElementsAre(2.193, 1.202, 1.708, 1.274));
  EXPECT_EQ(m.threshold(Quantity::kTxPower).alarm_low, -6.904);
  EXPECT_EQ(m.wavelength_nm, 1311);
  EXPECT_THAT(m.flags, IsEmpty());
  EXPECT_EQ(r.module_state, "Ready state");
}

// The FEC histogram's bins come sorted as strings (Bin 0, Bin 1, Bin 10 ... Bin 9): re-sorted.
TEST(OpticsReaders, MlxlinkJsonFecHistogramAndSerdes) {
  const ToolOutput out = Read("optics_03_mlxlink_json_mft4.34.1_400g_fec_histogram_serdes_tx.json");
  EXPECT_THAT(ProblemTexts(out), IsEmpty());
  ASSERT_EQ(out.readings.size(), 1u);
  const ToolReading& r = out.readings[0];
  ASSERT_TRUE(r.fec.has_value());
  const std::vector<FecReading::Bin>& h = r.fec->histogram;
  ASSERT_EQ(h.size(), 16u);
  const uint64_t expected[] = {
      22858119037881u, 65755507, 7970, 177, 64, 2, 1, 1, 3, 0, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(h[i].bin, i);
    EXPECT_EQ(h[i].count, expected[i]) << "bin " << i;
    EXPECT_EQ(h[i].range, "[" + std::to_string(i) + "]");
  }
  EXPECT_EQ(r.Value("Header", "Histogram of FEC Errors"), "Range,Occurrences");
  EXPECT_EQ(r.Value("Serdes TX parameters", "Serdes Tuning Transmitter Info"),
            "fir_pre3,fir_pre2,fir_pre1,fir_main,fir_post1,drv_amp");
  for (const char* lane : {"Lane 0", "Lane 1", "Lane 2", "Lane 3"}) {
    EXPECT_EQ(r.Value(lane, "Serdes Tuning Transmitter Info"), "0,5,-15,43,0,0") << lane;
  }
  ASSERT_TRUE(r.phy.has_value());
  EXPECT_EQ(r.phy->minutes_since_clear, 4876.6);
  ASSERT_EQ(r.phy->raw_errors_lanes.size(), 4u);
  EXPECT_EQ(r.phy->raw_errors_lanes[0], 5550000u);
  EXPECT_EQ(r.phy->raw_errors_lanes[1], 28835305u);
  EXPECT_EQ(r.phy->raw_errors_lanes[2], 14640119u);
  EXPECT_EQ(r.phy->raw_errors_lanes[3], 16746846u);
}

TEST(OpticsReaders, MlxlinkJsonEyeOpening) {
  const ToolOutput out = Read("optics_04_mlxlink_json_mft4.34.1_400g_eye_opening.json");
  EXPECT_THAT(ProblemTexts(out), IsEmpty());
  ASSERT_EQ(out.readings.size(), 1u);
  const ToolReading& r = out.readings[0];
  const std::string eye = "EYE Opening Info";
  EXPECT_EQ(r.Value("FOM Mode", eye), "SLRG_FOM_MODE_EYEO");
  EXPECT_EQ(r.Value("Lane", eye), "0,1,2,3");
  EXPECT_EQ(r.Value("Initial FOM", eye), "100,116,87,98");
  EXPECT_EQ(r.Value("Last FOM", eye), "107,112,88,101");
  EXPECT_EQ(r.Value("Lower Grades", eye), "106,109,91,95");
  EXPECT_EQ(r.Value("Mid Grades", eye), "124,121,111,114");
  EXPECT_EQ(r.Value("Upper Grades", eye), "108,111,85,100");
  ASSERT_TRUE(r.fec.has_value());
  ASSERT_GE(r.fec->histogram.size(), 2u);
  EXPECT_EQ(r.fec->histogram[0].count, 26766318661536u);
  EXPECT_EQ(r.fec->histogram[1].count, 76439959u);
  // A field's line is where its key is in the document.
  for (const ToolField& f : r.fields) {
    if (f.key == "Initial FOM") {
      EXPECT_EQ(f.line, 370);
    }
  }
}

TEST(OpticsReaders, MlxlinkJsonPcieSide) {
  const ToolOutput out = Read("optics_05_mlxlink_json_mft4.34.1_pcie_eye_opening.json");
  EXPECT_THAT(ProblemTexts(out), IsEmpty());
  ASSERT_EQ(out.readings.size(), 1u);
  const ToolReading& r = out.readings[0];
  EXPECT_FALSE(r.module.has_value());
  ASSERT_TRUE(r.phy.has_value());
  EXPECT_EQ(r.phy->speed, "32G-Gen 5 (32G-Gen 5)");
  EXPECT_EQ(r.phy->width, "16X (16X)");
  EXPECT_EQ(r.Value("Depth, pcie index, node"), "0, 0, 0");
  const std::string eye = "EYE Opening Info (PCIe)";
  EXPECT_EQ(r.Value("FOM Mode", eye), "SLRG_FOM_MODE_EYEC");
  EXPECT_THAT(r.Value("Initial FOM", eye), ::testing::StartsWith("145,140,"));
  EXPECT_THAT(r.Value("Last FOM", eye), ::testing::StartsWith("134,141,"));
  EXPECT_THAT(r.Value("Last FOM", eye), ::testing::EndsWith(",131"));
  EXPECT_EQ(r.Value("Lane", eye).size(),
            std::string("0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15").size());
}

// SONiC CMIS eeprom of a QSFP-DD 400G DR4, a continuation line under Application Advertisement.
TEST(OpticsReaders, SonicTransceiverEepromCmisWithContinuation) {
  const ToolOutput out =
      Read("optics_07_sonic_show_interfaces_transceiver_eeprom_dom_qsfpdd_400g_dr4_truncated.txt");
  EXPECT_THAT(ProblemTexts(out), IsEmpty());
  ASSERT_EQ(out.readings.size(), 1u);
  const ToolReading& r = out.readings[0];
  EXPECT_EQ(r.format, ToolFormat::kSonicEeprom);
  EXPECT_EQ(r.device, "Ethernet144");
  EXPECT_EQ(r.command, "show interfaces transceiver eeprom Ethernet144 --dom");
  EXPECT_EQ(r.Value("CMIS Rev"), "4.0");
  EXPECT_EQ(r.Value("Extended Identifier"), "Power Class 6 (12.0W Max)");
  EXPECT_EQ(r.Value("Connector"), "MPO 1x12");
  EXPECT_THAT(r.Values("Application Advertisement"),
              ElementsAre("400GAUI-8 C2M (Annex 120E) - Host Assign (0x1) - 400GBASE-DR4 (Cl "
                          "124) - Media Assign (0x1)",
                          "100GAUI-2 C2M (Annex 135G) - Host Assign (0x55) - 100GBASE-DR (Cl "
                          "140) - Media Assign (0xf)"));
  for (int lane = 1; lane <= 8; ++lane) {
    EXPECT_EQ(
        r.Value("Active application selected code assigned to host lane " + std::to_string(lane)),
        "N/A");
  }
  ASSERT_TRUE(r.module.has_value());
  EXPECT_EQ(r.module->spec, ModuleSpec::kCmis);
  EXPECT_EQ(r.module->form_factor, "QSFP-DD");
  EXPECT_EQ(r.module->media, "400GBASE-DR4");
  EXPECT_FALSE(r.module->has_diagnostics());  // truncated before the DOM
}

// Thousands separators; one reading per row.
TEST(OpticsReaders, SonicFecStatsTable) {
  const ToolOutput out = Read("optics_08_sonic_show_interfaces_counters_fec_stats_truncated.txt");
  EXPECT_THAT(ProblemTexts(out), IsEmpty());
  ASSERT_EQ(out.readings.size(), 2u);
  const ToolReading& e0 = out.readings[0];
  EXPECT_EQ(e0.format, ToolFormat::kSonicFecStats);
  EXPECT_EQ(e0.device, "Ethernet0");
  EXPECT_EQ(e0.line, 5);
  EXPECT_EQ(e0.Value("FEC_CORR"), "136,403");
  EXPECT_EQ(e0.Value("Last cached time"), "2022-07-29 19:34:08.919717");
  ASSERT_TRUE(e0.fec.has_value());
  EXPECT_EQ(e0.fec->state, "U");
  EXPECT_EQ(e0.fec->corrected_blocks, 136403u);
  EXPECT_EQ(e0.fec->uncorrectable_blocks, 34u);
  EXPECT_EQ(e0.fec->symbol_errors, 40u);
  const ToolReading& e8 = out.readings[1];
  EXPECT_EQ(e8.device, "Ethernet8");
  EXPECT_EQ(e8.fec->state, "D");
  EXPECT_EQ(e8.fec->corrected_blocks, 0u);
  EXPECT_EQ(e8.fec->uncorrectable_blocks, 0u);
  EXPECT_EQ(e8.fec->symbol_errors, 0u);
  EXPECT_EQ(out.lines, 6);
}

TEST(OpticsReaders, SonicTransceiverStatusRxLosLanes) {
  const ToolOutput out =
      Read("optics_09_sonic_show_int_transceiver_status_cmis_rx_los_lanes_1_4_truncated.txt");
  EXPECT_THAT(ProblemTexts(out), IsEmpty());
  ASSERT_EQ(out.readings.size(), 1u);
  const ToolReading& r = out.readings[0];
  EXPECT_EQ(r.format, ToolFormat::kSonicStatus);
  EXPECT_EQ(r.device, "Ethernet128");
  EXPECT_EQ(r.module_state, "DP_PRE_INIT_CHECK");
  ASSERT_TRUE(r.module.has_value());
  EXPECT_THAT(r.module->flags,
              ElementsAre("rx_los:lane1", "rx_los:lane2", "rx_los:lane3", "rx_los:lane4"));
  EXPECT_EQ(r.Value("Tx fault flag on media lane 8"), "False");
  EXPECT_EQ(r.Value("TX disable status on lane 4"), "False");
}

// `mlxlink -c` on a terminal: ESC[32m ... ESC[0m around the BER values.
TEST(OpticsReaders, MlxlinkTextAnsiColouredCounters) {
  const ToolOutput out =
      Read("optics_12_mlxlink_text_c_400g_physical_counters_ber_ansi_colored_clnet36.txt");
  EXPECT_THAT(ProblemTexts(out), IsEmpty());
  ASSERT_EQ(out.readings.size(), 1u);
  const ToolReading& r = out.readings[0];
  EXPECT_EQ(r.format, ToolFormat::kMlxlink);
  EXPECT_EQ(r.line, 2);  // after the leading empty line
  EXPECT_EQ(r.Value("Effective Physical BER"), "15E-255");
  ASSERT_TRUE(r.phy.has_value());
  const PhyCounters& p = *r.phy;
  EXPECT_EQ(p.minutes_since_clear, 348349.5);
  EXPECT_EQ(p.effective_errors, 0u);
  EXPECT_EQ(p.effective_ber, 0.0);
  EXPECT_EQ(p.raw_ber, 2e-9);
  ASSERT_EQ(p.raw_errors_lanes.size(), 4u);
  EXPECT_EQ(p.raw_errors_lanes[0], 3946476397u);
  EXPECT_EQ(p.raw_errors_lanes[1], 5120336064u);
  EXPECT_EQ(p.raw_errors_lanes[2], 7692183445u);
  EXPECT_EQ(p.raw_errors_lanes[3], 3026261414u);
  EXPECT_EQ(p.link_down, 0u);
  EXPECT_EQ(p.link_error_recovery, 0u);
}

// Author-trimmed Module Info of a 400G OSFP: DOM with [lo..hi] ranges.
TEST(OpticsReaders, MlxlinkTextModuleInfoRanges) {
  const ToolOutput out =
      Read("optics_13_mlxlink_text_m_osfp_400g_module_info_dom_author_trimmed.txt");
  EXPECT_THAT(ProblemTexts(out), IsEmpty());
  ASSERT_EQ(out.readings.size(), 1u);
  ASSERT_TRUE(out.readings[0].module.has_value());
  const ModuleReading& m = *out.readings[0].module;
  EXPECT_EQ(m.form_factor, "OSFP");
  EXPECT_EQ(m.vendor, "CLT");
  EXPECT_EQ(m.part_number, "T-F4GS-BV0");
  EXPECT_EQ(m.serial, "CWJH05025502589");
  EXPECT_EQ(m.temperature_c, 54);
  EXPECT_EQ(m.threshold(Quantity::kTemperature).alarm_low, -5);
  EXPECT_EQ(m.threshold(Quantity::kTemperature).alarm_high, 75);
  EXPECT_DOUBLE_EQ(*m.supply_voltage_v, 3.2612);
  EXPECT_THAT(Lanes(m.tx_bias_ma), ElementsAre(8.38, 8.38, 8.38, 8.38));
  EXPECT_EQ(m.threshold(Quantity::kTxBias).alarm_low, 2);
  EXPECT_EQ(m.threshold(Quantity::kTxBias).alarm_high, 15);
  EXPECT_THAT(Lanes(m.rx_power_dbm), ElementsAre(1.886, 1.989, 2.281, 1.976));
  EXPECT_EQ(m.threshold(Quantity::kRxPower).alarm_low, -10.41);
  EXPECT_EQ(m.threshold(Quantity::kRxPower).alarm_high, 6);
  EXPECT_THAT(Lanes(m.tx_power_dbm), ElementsAre(1.562, 1.427, 1.559, 1.761));
  EXPECT_EQ(m.threshold(Quantity::kTxPower).alarm_low, -8.508);
  EXPECT_EQ(m.threshold(Quantity::kTxPower).alarm_high, 5);
}

// --show_mo on an IB NDR port with a passive copper OSFP: trailing spaces on the first four
// sections' values; a cable that measures nothing ("0 [0..0]"); per-lane flag lists.
TEST(OpticsReaders, MlxlinkTextPassiveCopperTrailingSpaces) {
  const ToolOutput out = Read("mlxlink_01_cx7_ib_ndr_show_mo_passive_copper_trailing_spaces.txt");
  EXPECT_THAT(ProblemTexts(out), IsEmpty());
  ASSERT_EQ(out.readings.size(), 1u);
  const ToolReading& r = out.readings[0];
  std::vector<std::string> sections;
  for (const ToolField& f : r.fields) {
    if (sections.empty() || sections.back() != f.section) sections.push_back(f.section);
  }
  EXPECT_THAT(sections, ElementsAre("Operational Info", "Supported Info", "Troubleshooting Info",
                                    "Tool Information", "Module Info"));
  ASSERT_TRUE(r.phy.has_value());
  const PhyCounters& p = *r.phy;
  EXPECT_EQ(p.state, "Active");
  EXPECT_EQ(p.physical_state, "LinkUp");
  EXPECT_EQ(p.speed, "IB-NDR");
  EXPECT_EQ(p.width, "4x");
  EXPECT_EQ(p.fec, "Ethernet_Consortium_LL_50G_RS_FEC_PLR -(272,257+1)");
  EXPECT_EQ(p.enabled_speeds, "0x000000f1 (NDR,HDR,EDR,FDR,SDR)");
  EXPECT_EQ(p.supported_speeds, "0x000000f1 (NDR,HDR,EDR,FDR,SDR)");
  EXPECT_EQ(p.status_opcode, 0);
  EXPECT_EQ(p.recommendation, "No issue was observed");
  EXPECT_EQ(p.firmware, "28.46.3048");
  EXPECT_EQ(r.Value("amBER Version"), "6.4");
  EXPECT_EQ(p.mft_version, "4.35.0-159");
  ASSERT_TRUE(r.module.has_value());
  const ModuleReading& m = *r.module;
  EXPECT_EQ(r.Value("Temperature [C]"), "0 [0..0]");
  EXPECT_FALSE(m.has_diagnostics());  // all zero with a [0..0] range: nothing measured
  EXPECT_TRUE(m.threshold(Quantity::kTemperature).empty());
  EXPECT_EQ(m.form_factor, "OSFP");
  EXPECT_EQ(m.media, "IB NDR");
  EXPECT_EQ(r.cable, "Passive copper cable");
  EXPECT_EQ(m.vendor, "FS");
  EXPECT_EQ(m.part_number, "OSFPFL-400G-PC01");
  EXPECT_EQ(m.serial, "C2604279049-2");
  EXPECT_EQ(r.Value("Transfer Distance [m]"), "1");
  EXPECT_EQ(r.Value("Rx LOS [per lane]"), "1,0,1,1");
  EXPECT_THAT(m.flags, ElementsAre("rx_los:lane1", "rx_los:lane3", "rx_los:lane4", "rx_lol:lane1",
                                   "rx_lol:lane2", "rx_lol:lane3", "rx_lol:lane4"));
}

// A prompt line names the device; `Temperature [C] : N/A`; BER 15E-255 in the counters.
TEST(OpticsReaders, MlxlinkTextEthernetWithPromptAndZeroBer) {
  const ToolOutput out = Read("mlxlink_02_bf3_100g_eth_m_c_physical_counters_ber_15E-255.txt");
  EXPECT_THAT(ProblemTexts(out), IsEmpty());
  ASSERT_EQ(out.readings.size(), 1u);
  const ToolReading& r = out.readings[0];
  EXPECT_EQ(r.device, "/dev/mst/mt41692_pciconf0");
  EXPECT_EQ(r.port, "1");
  EXPECT_EQ(r.Name(), "/dev/mst/mt41692_pciconf0 port 1");
  EXPECT_EQ(r.command, "mlxlink -d /dev/mst/mt41692_pciconf0 -p 1 -m -c");
  ASSERT_TRUE(r.phy.has_value());
  const PhyCounters& p = *r.phy;
  EXPECT_EQ(p.speed, "100G");
  EXPECT_EQ(p.fec, "Standard RS-FEC - RS(528,514)");
  EXPECT_EQ(p.enabled_speeds, "0x00000200 (100G_4X)");
  EXPECT_EQ(p.supported_speeds, "0x000002f2 (100G_4X,50G_2X,40G,25G,10G,1G)");
  EXPECT_EQ(p.mft_version, "mft 4.30.1-8");
  EXPECT_EQ(p.minutes_since_clear, 25074.8);
  EXPECT_EQ(p.effective_errors, 0u);
  EXPECT_EQ(p.effective_ber, 0.0);
  EXPECT_EQ(p.raw_ber, 0.0);
  EXPECT_EQ(r.Value("Raw Physical BER"), "15E-255");
  ASSERT_EQ(p.raw_errors_lanes.size(), 4u);
  EXPECT_EQ(p.raw_errors_lanes[3], 0u);
  EXPECT_EQ(p.link_down, 0u);
  EXPECT_EQ(p.link_error_recovery, 0u);
  ASSERT_TRUE(r.module.has_value());
  EXPECT_FALSE(r.module->temperature_c.has_value());  // N/A
  EXPECT_EQ(r.module->form_factor, "QSFP28");
  EXPECT_EQ(r.module->spec, ModuleSpec::kSff8636);
  EXPECT_EQ(r.module->vendor, "FS");
  EXPECT_EQ(r.module->part_number, "Q28-PC03");
  EXPECT_EQ(r.module->serial, "S2202655321-1");
  EXPECT_EQ(r.Value("Transfer Distance [m]"), "3");
  EXPECT_THAT(r.module->flags, IsEmpty());
}

TEST(OpticsReaders, MlxlinkTextEnabledDiffersFromSupported) {
  const ToolOutput out =
      Read("mlxlink_03_bf3_ib_edr_ll_rs_fec_271_257_enabled_vs_supported_speeds.txt");
  EXPECT_THAT(ProblemTexts(out), IsEmpty());
  ASSERT_EQ(out.readings.size(), 1u);
  const PhyCounters& p = *out.readings[0].phy;
  EXPECT_EQ(p.speed, "IB-EDR");
  EXPECT_EQ(p.fec, "Standard LL RS-FEC - RS(271,257)");
  EXPECT_EQ(p.enabled_speeds, "0x00000031 (EDR,FDR,SDR)");
  EXPECT_EQ(p.supported_speeds, "0x0000003f (EDR,FDR,FDR10,QDR,DDR,SDR)");
  EXPECT_EQ(p.firmware, "32.47.1088");
  EXPECT_EQ(out.readings[0].Value("amBER Version"), "5.75");
  EXPECT_EQ(p.mft_version, "4.34.1-10");
}

TEST(OpticsReaders, DetectFormats) {
  EXPECT_THAT(DetectFormats(testing::ReadFixture(
                  "optics/optics_06_ethtool_I_show_fec_rs_stats_and_eth_phy_group_fbnic.txt")),
              ElementsAre(ToolFormat::kEthtoolFec, ToolFormat::kEthtoolStats));
  EXPECT_THAT(DetectFormats(testing::ReadFixture(
                  "optics/optics_02_mlxlink_json_mft4.34.1_cx_400g_dr4_osfp_module_counters.json")),
              ElementsAre(ToolFormat::kMlxlinkJson));
  EXPECT_THAT(DetectFormats("NCCL INFO nothing here\nmore text : with a colon\n"), IsEmpty());
}

// ---- Shapes written from the tools' printf formats (no clean real capture: CATALOGUE.md). ----

// SFF-8636 (QSFP28) per "(Channel N)" keys, old ethtool's "power(Channel N)" without a space,
// flags "(Chan N)", a lane list, -inf dBm for a dark lane, a prompt naming the device.
TEST(OpticsReaders, EthtoolModuleQsfp28Channels) {
  const std::string text =
      "[root@h ~]# ethtool -m enp1s0f0\n"
      "\tIdentifier                                : 0x11 (QSFP28)\n"
      "\tTransceiver type                          : 100G Ethernet: 100G Base-SR4 or 25GBASE-SR\n"
      "\tVendor name                               : ACME\n"
      "\tModule temperature                        : 68.50 degrees C / 155.30 degrees F\n"
      "\tModule voltage                            : 3.2900 V\n"
      "\tLaser tx bias current (Channel 1)         : 7.500 mA\n"
      "\tLaser tx bias current (Channel 2)         : 7.400 mA\n"
      "\tTransmit avg optical power (Channel 1)    : 0.8000 mW / -0.97 dBm\n"
      "\tTransmit avg optical power (Channel 2)    : 0.7900 mW / -1.02 dBm\n"
      "\tRcvr signal avg optical power(Channel 1)  : 0.0000 mW / -inf dBm\n"
      "\tRcvr signal avg optical power(Channel 2)  : 0.0500 mW / -13.01 dBm\n"
      "\tLaser rx power low alarm   (Chan 1)       : On\n"
      "\tLaser rx power low warning (Chan 2)       : On\n"
      "\tModule temperature high warning           : Off\n"
      "\tRx loss of signal                         : [ Yes, No, No, No ]\n"
      "\tLaser rx power low warning threshold      : 0.0617 mW / -12.10 dBm\n";
  const ToolOutput out = ReadToolOutput(text);
  EXPECT_THAT(ProblemTexts(out), IsEmpty());
  ASSERT_EQ(out.readings.size(), 1u);
  const ToolReading& r = out.readings[0];
  EXPECT_EQ(r.device, "enp1s0f0");
  ASSERT_TRUE(r.module.has_value());
  const ModuleReading& m = *r.module;
  EXPECT_EQ(m.spec, ModuleSpec::kSff8636);
  EXPECT_EQ(m.form_factor, "QSFP28");
  EXPECT_EQ(m.media, "100G Base-SR4 or 25GBASE-SR");
  EXPECT_EQ(m.temperature_c, 68.5);
  EXPECT_THAT(Lanes(m.tx_bias_ma), ElementsAre(7.5, 7.4));
  EXPECT_THAT(Lanes(m.tx_power_dbm), ElementsAre(-0.97, -1.02));
  EXPECT_THAT(Lanes(m.rx_power_dbm), ElementsAre(-40, -13.01));
  EXPECT_THAT(m.flags, ElementsAre("rx_power_low_alarm:lane1", "rx_power_low_warning:lane2",
                                   "rx_los:lane1"));
  EXPECT_EQ(m.threshold(Quantity::kRxPower).warning_low, -12.1);
}

// CMIS: "Revision compliance : Rev. 5.0", flags "(Chan N)" after the CMIS names, "None".
TEST(OpticsReaders, EthtoolModuleCmis) {
  const std::string text =
      "Identifier                                : 0x18 (QSFP-DD Double Density 8X Pluggable "
      "Transceiver (INF-8628))\n"
      "Revision compliance                       : Rev. 5.0\n"
      "Laser tx bias current (Channel 8)         : 6.500 mA\n"
      "Laser tx power high alarm   (Channel 3)   : On\n"
      "Tx fault                                  : None\n";
  const ToolOutput out = ReadToolOutput(text);
  EXPECT_THAT(ProblemTexts(out), IsEmpty());
  ASSERT_EQ(out.readings.size(), 1u);
  const ModuleReading& m = *out.readings[0].module;
  EXPECT_EQ(m.spec, ModuleSpec::kCmis);
  EXPECT_EQ(m.form_factor, "QSFP-DD");
  ASSERT_EQ(m.tx_bias_ma.size(), 8u);
  EXPECT_FALSE(m.tx_bias_ma[0].has_value());
  EXPECT_EQ(m.tx_bias_ma[7], 6.5);
  EXPECT_THAT(m.flags, ElementsAre("tx_power_high_alarm:lane3"));
}

// SONiC --dom: ChannelMonitorValues and the threshold blocks.
TEST(OpticsReaders, SonicEepromDom) {
  const std::string text =
      "Ethernet8: SFP EEPROM detected\n"
      "        Identifier: QSFP28 or later\n"
      "        Vendor Name: ACME\n"
      "        Specification compliance:\n"
      "                10/40G Ethernet Compliance Code: 100GBASE-SR4\n"
      "        Vendor SN: A123\n"
      "        ChannelMonitorValues:\n"
      "                RX1Power: -9.5dBm\n"
      "                RX2Power: -2.1dBm\n"
      "                TX1Bias: 6.7500mA\n"
      "                TX1Power: -inf\n"
      "        ChannelThresholdValues:\n"
      "                RxPowerLowAlarm   : -13.5067dBm\n"
      "                RxPowerLowWarning : -9.5001dBm\n"
      "        ModuleMonitorValues:\n"
      "                Temperature: 30.9258C\n"
      "                Vcc: 3.2824Volts\n"
      "        ModuleThresholdValues:\n"
      "                TempHighAlarm  : 75.0000C\n"
      "                VccLowAlarm    : 2.9700Volts\n";
  const ToolOutput out = ReadToolOutput(text);
  ASSERT_EQ(out.readings.size(), 1u);
  const ToolReading& r = out.readings[0];
  // "-inf" without a unit is no reading SONiC prints: reported, the rest read.
  ASSERT_EQ(out.problems.size(), 1u);
  EXPECT_EQ(out.problems[0].ToString("in"),
            "in:11:27: \"TX1Power\": value \"-inf\" is not a reading SONiC prints");
  const ModuleReading& m = *r.module;
  EXPECT_EQ(m.form_factor, "QSFP28");
  EXPECT_EQ(m.media, "100GBASE-SR4");
  EXPECT_EQ(m.serial, "A123");
  EXPECT_THAT(Lanes(m.rx_power_dbm), ElementsAre(-9.5, -2.1));
  EXPECT_THAT(Lanes(m.tx_bias_ma), ElementsAre(6.75));
  EXPECT_EQ(m.threshold(Quantity::kRxPower).alarm_low, -13.5067);
  EXPECT_EQ(m.threshold(Quantity::kRxPower).warning_low, -9.5001);
  EXPECT_EQ(m.temperature_c, 30.9258);
  EXPECT_EQ(m.supply_voltage_v, 3.2824);
  EXPECT_EQ(m.threshold(Quantity::kTemperature).alarm_high, 75);
  EXPECT_EQ(m.threshold(Quantity::kSupplyVoltage).alarm_low, 2.97);
}

// ethtool 6.x FEC statistics with per-lane values, the old "Configured FEC encodings" wording.
TEST(OpticsReaders, EthtoolFecLanesOldWording) {
  const std::string text =
      "FEC parameters for ens1f0np0:\n"
      "Configured FEC encodings: Auto RS\n"
      "Active FEC encoding: RS\n"
      "Statistics:\n"
      "  corrected_blocks: 1200\n"
      "    Lane 0: 1000\n"
      "    Lane 1: 200\n"
      "  uncorrectable_blocks: 3\n"
      "  corrected_bits: 5400\n";
  const ToolOutput out = ReadToolOutput(text);
  EXPECT_THAT(ProblemTexts(out), IsEmpty());
  ASSERT_EQ(out.readings.size(), 1u);
  const FecReading& f = *out.readings[0].fec;
  EXPECT_EQ(out.readings[0].device, "ens1f0np0");
  EXPECT_THAT(f.configured, ElementsAre("Auto", "RS"));
  EXPECT_THAT(f.active, ElementsAre("RS"));
  EXPECT_EQ(f.corrected_blocks, 1200u);
  EXPECT_THAT(f.corrected_blocks_lanes, ElementsAre(1000u, 200u));
  EXPECT_EQ(f.uncorrectable_blocks, 3u);
  EXPECT_EQ(f.corrected_bits, 5400u);
}

// ---- Bad input: a clear problem with line and column, and the rest read. ----

TEST(OpticsReaders, BadValuesAreProblemsWithLineAndColumn) {
  const std::string text =
      "some log line before it\n"
      "\tIdentifier                                : 0x03 (SFP)\n"
      "\tLaser bias current                        : lots mA\n"
      "\tModule temperature                        : 41.00 degrees C / 105.80 degrees F\n"
      "\tLaser rx power low alarm                  : Maybe\n";
  const ToolOutput out = ReadToolOutput(text);
  EXPECT_THAT(ProblemTexts(out),
              ElementsAre("in:3:46: \"Laser bias current\": value \"lots mA\" is not a reading "
                          "ethtool prints",
                          "in:5:46: \"Laser rx power low alarm\": flag \"Maybe\" is neither On "
                          "nor Off"));
  ASSERT_EQ(out.readings.size(), 1u);
  EXPECT_EQ(out.readings[0].module->temperature_c, 41.0);
  EXPECT_TRUE(out.readings[0].module->tx_bias_ma.empty());
}

TEST(OpticsReaders, BadMlxlinkAndFecStatsValues) {
  const std::string text =
      "Physical Counters and BER Info\n"
      "------------------------------\n"
      "Raw Physical BER                   : 5E-x\n"
      "Link Down Counter                  : 3\n"
      "\n"
      "      IFACE    STATE    FEC_CORR    FEC_UNCORR\n"
      "-----------  -------  ----------  ------------\n"
      "  Ethernet0        U     1,23,4             7\n";
  const ToolOutput out = ReadToolOutput(text);
  EXPECT_THAT(ProblemTexts(out),
              ElementsAre("in:3:38: \"Raw Physical BER\": value \"5E-x\" is not a bit error rate "
                          "such as 5E-10",
                          "in:8:26: \"FEC_CORR\": value \"1,23,4\" is not a count"));
  ASSERT_EQ(out.readings.size(), 2u);
  EXPECT_EQ(out.readings[0].phy->link_down, 3u);
  EXPECT_FALSE(out.readings[0].phy->raw_ber.has_value());
  EXPECT_EQ(out.readings[1].fec->uncorrectable_blocks, 7u);
}

TEST(OpticsReaders, InvalidMlxlinkJsonSaysWhere) {
  const std::string text =
      "{\n"
      "  \"result\": {\n"
      "    \"output\": {\n"
      "      \"Operational Info\": { \"Speed\": \"400G\" \"Width\": \"4x\" }\n"
      "    }\n"
      "  }\n"
      "}\n";
  ASSERT_TRUE(LooksLikeMlxlinkJson(text));
  const ToolOutput out = ReadToolOutput(text);
  EXPECT_TRUE(out.readings.empty());
  ASSERT_EQ(out.problems.size(), 1u);
  EXPECT_EQ(out.problems[0].line, 4);
  EXPECT_EQ(out.problems[0].column, 51);  // the end of the unexpected "Width"
  EXPECT_THAT(out.problems[0].message, HasSubstr("mlxlink --json: invalid JSON"));
}

// Lines that are not these tools' are declined, so that a log around them keeps its lines.
TEST(OpticsReaders, LineReaderDeclinesOtherLines) {
  ToolOutputReader reader;
  int n = 0;
  EXPECT_FALSE(reader.Feed("gpu1:12:12 [0] NCCL INFO Bootstrap : Using eth0", ++n));
  EXPECT_TRUE(reader.Feed("Physical Counters and BER Info", ++n));
  EXPECT_TRUE(reader.Feed("------------------------------", ++n));
  EXPECT_TRUE(reader.Feed("Link Down Counter                  : 2", ++n));
  EXPECT_TRUE(reader.Feed("", ++n));
  EXPECT_FALSE(reader.Feed("gpu1:12:12 [0] NCCL WARN NET/IB : Got completion with error 12", ++n));
  EXPECT_FALSE(reader.Feed("[{\"ifname\":\"mlx5_0\",\"port\":1}]", ++n));
  reader.Finish();
  const ToolOutput out = reader.TakeOutput();
  ASSERT_EQ(out.readings.size(), 1u);
  EXPECT_EQ(out.readings[0].phy->link_down, 2u);
  EXPECT_EQ(out.lines, 4);
}

}  // namespace optics_readers_test
}  // namespace railwatch::optics
