// ibdiagnet2.cables from one real NDR fabric (CATALOGUE section L): the switch side of a twin-port
// 800G OSFP (one serial number on two ports) and an HCA's 400G OSFP whose lanes mix real readings
// with the -999.999 mW "not supported" sentinel.
#include "ib/ibdiagnet_cables.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ib_fixture.h"

namespace railwatch::ib::ibdiagnet_cables_test {

using ib_fixture::ProblemPlaces;
using ib_fixture::ProblemsText;
using ib_fixture::Crlf;
using ib_fixture::ReadIbFixture;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const char kTwin[] = "ibdiagnet2_cables_01_ndr_osfp_sr8_800g_twin_port_switch_side_excerpt.txt";
const char kHca[] = "ibdiagnet2_cables_02_ndr_hca_osfp_sr4_400g_rx_power_sentinel_block.txt";

// The 1-based line of the first line of `text` that starts with `prefix`, or 0.
int LineOf(const std::string& text, const std::string& prefix, int from = 1) {
  int line = 1;
  size_t start = 0;
  while (start < text.size()) {
    if (line >= from && text.compare(start, prefix.size(), prefix) == 0) return line;
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) break;
    start = end + 1;
    ++line;
  }
  ADD_FAILURE() << "no line starting with " << prefix;
  return 0;
}

TEST(IbdiagnetCables, TwinPortOsfpOnTwoSwitchPortsKeepsBoth) {
  const IbdiagnetCables r = ParseIbdiagnetCables(ReadIbFixture(kTwin), kTwin);
  EXPECT_TRUE(r.problems.empty()) << ProblemsText(r.problems);
  ASSERT_EQ(r.cables.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const IbCableRecord& c = r.cables[static_cast<size_t>(i)];
    SCOPED_TRACE(i);
    EXPECT_EQ(c.port, i + 1);
    EXPECT_EQ(c.lid, 0x18u);
    EXPECT_EQ(c.guid.value, 0xb0cf0e0300e5b940u);
    EXPECT_EQ(c.port_name,
              std::string("Sb0cf0e0300e5b940/Nb0cf0e0300e5b940/P1/1/") + std::to_string(i + 1));
    EXPECT_EQ(c.source, "PHY_DD");
    EXPECT_EQ(c.identifier, "OSFP (0x08)");
    EXPECT_EQ(c.identifier_code, 0x08u);
    EXPECT_EQ(c.vendor, "FS");
    EXPECT_EQ(c.oui, 0x649d99u);
    EXPECT_EQ(c.pn, "OSFP-SR8-800G");
    // One module, two IB ports: the same serial number on both.
    EXPECT_EQ(c.sn, "G2430283435");
    EXPECT_EQ(c.rev, "A1");
    EXPECT_EQ(c.length, "");  // "Length: NA"
    EXPECT_EQ(c.type, "850 nm VCSEL");
    EXPECT_EQ(c.temperature_c, 58.0);
    EXPECT_EQ(c.fw_version, "1.8.0");
    ASSERT_EQ(c.lanes.size(), 4u);
    for (const auto& [n, lane] : c.lanes) {
      // -999.999 mW, 0.000 dBm: not supported, so absent (neither -999.999 nor 0).
      EXPECT_FALSE(lane.rx_power_mw.has_value()) << n;
      EXPECT_FALSE(lane.rx_power_dbm.has_value()) << n;
      EXPECT_FALSE(lane.tx_power_mw.has_value()) << n;
      EXPECT_FALSE(lane.tx_power_dbm.has_value()) << n;
    }
    EXPECT_EQ(c.lanes.at(1).tx_bias_ma, 7.242);
    EXPECT_EQ(c.lanes.at(2).tx_bias_ma, 7.304);
    EXPECT_EQ(c.lanes.at(3).tx_bias_ma, 7.326);
    EXPECT_EQ(c.lanes.at(4).tx_bias_ma, 7.304);
    ASSERT_TRUE(c.supply_voltage_v.has_value());
    EXPECT_DOUBLE_EQ(*c.supply_voltage_v, i == 0 ? 3.3034 : 3.3022);
    // "Latched  TX / RX LOL Indicator" (two blanks) is read like the others.
    EXPECT_EQ(c.flags.latched_tx_rx_lol, 0u);
    EXPECT_EQ(c.flags.cdr_latched_tx_rx_loss, 0u);
    EXPECT_EQ(c.flags.latched_adaptive_eq_fault, 0u);
    EXPECT_EQ(c.flags.latched_temperature_alarm, 0u);
    EXPECT_EQ(c.flags.latched_voltage_alarm, 0u);
    EXPECT_EQ(c.flags.rx_power_alarm, 0u);
    EXPECT_EQ(c.flags.tx_bias_alarm, 0u);  // "TX Bias Alarm and Warning:  0x0000"
    EXPECT_EQ(c.flags.tx_power_alarm, 0u);
    const IbCableThresholds& t = c.thresholds;
    EXPECT_EQ(t.alarm_temperature_high_c, 80.0);
    EXPECT_EQ(t.alarm_temperature_low_c, -5.0);
    EXPECT_FALSE(t.warn_temperature_high_c.has_value());  // N/A
    EXPECT_FALSE(t.warn_temperature_low_c.has_value());
    ASSERT_TRUE(t.alarm_voltage_high_v.has_value());
    EXPECT_DOUBLE_EQ(*t.alarm_voltage_high_v, 3.63);
    ASSERT_TRUE(t.alarm_voltage_low_v.has_value());
    EXPECT_DOUBLE_EQ(*t.alarm_voltage_low_v, 2.97);
    EXPECT_FALSE(t.warn_voltage_high_v.has_value());
    EXPECT_FALSE(t.warn_voltage_low_v.has_value());
    // Raw register values, kept as printed.
    EXPECT_EQ(t.rx_power_high_raw, 4);
    EXPECT_EQ(t.rx_power_low_raw, 65530);
    EXPECT_EQ(t.tx_power_high_raw, 4);
    EXPECT_EQ(t.tx_power_low_raw, 65532);
    EXPECT_EQ(t.tx_bias_high_raw, 6500);
    EXPECT_EQ(t.tx_bias_low_raw, 1500);
    EXPECT_EQ(c.date_code, "24-01-18");
    // Lines no field holds are kept under their key.
    EXPECT_EQ(c.other.at("PowerClass"), "8");
    EXPECT_EQ(c.other.at("Lot"), "0x2020");
    EXPECT_EQ(c.other.at("Attenuation(5,7,12,25)"), "NA NA NA NA");
    EXPECT_EQ(c.other.at("RX power type"), "Average Power");
    EXPECT_EQ(c.other.at("CDREnableTxRx"), "0xff 0xff");
    EXPECT_FALSE(c.other.contains("SN"));
    EXPECT_FALSE(c.other.contains("Temperature"));
    EXPECT_EQ(c.where, std::string(kTwin) + (i == 0 ? ":9" : ":78"));
  }
}

TEST(IbdiagnetCables, HcaModuleMixesRealLanesWithTheSentinel) {
  const IbdiagnetCables r = ParseIbdiagnetCables(ReadIbFixture(kHca), kHca);
  EXPECT_TRUE(r.problems.empty()) << ProblemsText(r.problems);
  ASSERT_EQ(r.cables.size(), 1u);
  const IbCableRecord& c = r.cables[0];
  EXPECT_EQ(c.port, 1);
  EXPECT_EQ(c.lid, 0x82u);
  EXPECT_EQ(c.guid.value, 0x5c25730300d0dc72u);
  EXPECT_EQ(c.port_name, "h4-1-gpu/U1/B9D0F0/0/0/1");
  EXPECT_EQ(c.source, "PHY_ACC_REG");
  EXPECT_EQ(c.pn, "OSFP-SR4-400G-FL");
  EXPECT_EQ(c.sn, "G2420461167");
  EXPECT_EQ(c.rev, "1A");
  EXPECT_EQ(c.temperature_c, 60.0);
  EXPECT_EQ(c.fw_version, "0.1.0");
  ASSERT_EQ(c.lanes.size(), 4u);
  EXPECT_FALSE(c.lanes.at(1).rx_power_mw.has_value());
  EXPECT_FALSE(c.lanes.at(1).rx_power_dbm.has_value());
  for (int lane : {2, 3, 4}) {
    EXPECT_EQ(c.lanes.at(lane).rx_power_mw, 1.585) << lane;
    EXPECT_EQ(c.lanes.at(lane).rx_power_dbm, 2.0) << lane;
  }
  EXPECT_EQ(c.lanes.at(1).tx_power_mw, 1.585);
  EXPECT_EQ(c.lanes.at(1).tx_power_dbm, 2.0);
  EXPECT_FALSE(c.lanes.at(2).tx_power_mw.has_value());
  EXPECT_FALSE(c.lanes.at(3).tx_power_mw.has_value());
  EXPECT_FALSE(c.lanes.at(3).tx_power_dbm.has_value());
  EXPECT_EQ(c.lanes.at(4).tx_power_mw, 1.585);
  for (int lane : {1, 2, 3, 4}) EXPECT_EQ(c.lanes.at(lane).tx_bias_ma, 7.246) << lane;
  ASSERT_TRUE(c.supply_voltage_v.has_value());
  EXPECT_DOUBLE_EQ(*c.supply_voltage_v, 3.2789);
  EXPECT_EQ(c.date_code, "24-09-24");
  EXPECT_EQ(c.where, std::string(kHca) + ":2");
}

TEST(IbdiagnetCables, CrlfLineEndsReadTheSame) {
  const IbdiagnetCables plain = ParseIbdiagnetCables(ReadIbFixture(kTwin), kTwin);
  const IbdiagnetCables crlf = ParseIbdiagnetCables(Crlf(ReadIbFixture(kTwin)), kTwin);
  EXPECT_TRUE(crlf.problems.empty()) << ProblemsText(crlf.problems);
  ASSERT_EQ(crlf.cables.size(), 2u);
  EXPECT_EQ(crlf.cables[1].sn, plain.cables[1].sn);
  EXPECT_EQ(crlf.cables[1].port_name, plain.cables[1].port_name);
  EXPECT_EQ(crlf.cables[1].date_code, "24-01-18");
  EXPECT_EQ(crlf.cables[1].lanes.at(3).tx_bias_ma, 7.326);
  EXPECT_EQ(crlf.cables[1].other, plain.cables[1].other);
}

TEST(IbdiagnetCables, ATruncatedBlockKeepsWhatItPrinted) {
  const std::string text = ReadIbFixture(kTwin);
  // Cut inside the second block's "TX2 Bias: 7.304 mA", after "7.3".
  const int cut_line = LineOf(text, "TX2 Bias", 78);
  const size_t at = text.find("TX2 Bias: 7.304 mA", text.find("Port=2"));
  ASSERT_NE(at, std::string::npos);
  const std::string cut = text.substr(0, at + std::string("TX2 Bias: 7.3").size());
  const IbdiagnetCables r = ParseIbdiagnetCables(cut, "cut");
  ASSERT_EQ(r.cables.size(), 2u);
  EXPECT_EQ(r.cables[0].date_code, "24-01-18");  // the first block is whole
  const IbCableRecord& c = r.cables[1];
  EXPECT_EQ(c.sn, "G2430283435");
  EXPECT_EQ(c.lanes.at(1).tx_bias_ma, 7.242);
  EXPECT_FALSE(c.lanes.at(2).tx_bias_ma.has_value());  // "7.3" without its unit: not read
  EXPECT_FALSE(c.supply_voltage_v.has_value());        // never printed
  EXPECT_EQ(c.date_code, "");
  const std::string line = std::to_string(cut_line);
  EXPECT_THAT(ProblemPlaces(r.problems),
              ElementsAre("cut:" + line + ":11", "cut:" + line + ":14"))
      << ProblemsText(r.problems);
  EXPECT_THAT(r.problems[0].message, HasSubstr("mA"));
  EXPECT_THAT(r.problems[1].message, HasSubstr("cut short"));
}

TEST(IbdiagnetCables, GarbageLinesAreProblemsAndTheRestIsKept) {
  std::string text = ReadIbFixture(kHca);
  // Line 5 ("Vendor: FS") becomes three lines: garbage, a bad temperature, and the vendor.
  const size_t vendor = text.find("Vendor: FS");
  ASSERT_NE(vendor, std::string::npos);
  text.insert(vendor, "@@@ line noise @@@\nTemperature: hot\n");
  text += "stray words after the block\n";
  const IbdiagnetCables r = ParseIbdiagnetCables(text, "g");
  ASSERT_EQ(r.cables.size(), 1u);
  const IbCableRecord& c = r.cables[0];
  EXPECT_EQ(c.vendor, "FS");
  EXPECT_EQ(c.sn, "G2420461167");
  EXPECT_EQ(c.temperature_c, 60.0);  // the real line further down
  EXPECT_EQ(c.lanes.at(2).rx_power_mw, 1.585);
  const int stray = LineOf(text, "stray words");
  EXPECT_THAT(ProblemPlaces(r.problems),
              ElementsAre("g:6:1", "g:7:14", "g:" + std::to_string(stray) + ":1"))
      << ProblemsText(r.problems);
  EXPECT_THAT(r.problems[1].message, HasSubstr("hot"));
  EXPECT_THAT(r.problems[2].message, HasSubstr("not inside a port block"));
}

TEST(IbdiagnetCables, OnlyTheSentinelIsSilentlyAbsentAndNoNegativeMilliwattIsAReading) {
  const IbdiagnetCables r = ParseIbdiagnetCables(
      "Port=1 Lid=0x0001 GUID=0x1 Port Name=a\n"
      "RX1 Power: -999.999 mW, 0.000 dBm\n"
      "RX2 Power: -3.000 mW, -40.000 dBm\n"
      "RX3 Power: 0.000 mW, -40.000 dBm\n"
      "TX1 Bias: -999.999 mA\n"
      "TX2 Bias: -1.000 mA\n"
      "\n",
      "s");
  ASSERT_EQ(r.cables.size(), 1u);
  const IbCableRecord& c = r.cables[0];
  EXPECT_FALSE(c.lanes.at(1).rx_power_mw.has_value());
  EXPECT_FALSE(c.lanes.at(2).rx_power_mw.has_value());
  EXPECT_FALSE(c.lanes.at(2).rx_power_dbm.has_value());
  EXPECT_EQ(c.lanes.at(3).rx_power_mw, 0.0);  // a real zero (no light) is a reading
  EXPECT_EQ(c.lanes.at(3).rx_power_dbm, -40.0);
  EXPECT_FALSE(c.lanes.at(1).tx_bias_ma.has_value());
  EXPECT_FALSE(c.lanes.at(2).tx_bias_ma.has_value());
  EXPECT_THAT(ProblemPlaces(r.problems), ElementsAre("s:3:12", "s:6:11"))
      << ProblemsText(r.problems);
}

TEST(IbdiagnetCables, ABlockHeaderWithoutAPortIsSkippedWithItsLines) {
  const IbdiagnetCables r = ParseIbdiagnetCables(
      "Port=x Lid=0x0001 GUID=0x1 Port Name=a\nSN: ONE\n\n"
      "Port=3 Lid=0x0002 GUID=0x2 Port Name=b\nSN: TWO\n\n",
      "h");
  ASSERT_EQ(r.cables.size(), 1u);
  EXPECT_EQ(r.cables[0].port, 3);
  EXPECT_EQ(r.cables[0].sn, "TWO");
  EXPECT_THAT(ProblemPlaces(r.problems), ElementsAre("h:1:6")) << ProblemsText(r.problems);
}

}  // namespace railwatch::ib::ibdiagnet_cables_test
