// Module EEPROM decoding and encoding (optics/eeprom.h, optics/eeprom_encode.h). Each spec has
// a byte array built here by hand, byte by byte at the offsets its spec gives (written as
// numbers, not taken from optics/eeprom_map.h), with the values worked out by hand; so a
// misread offset shared by the encoder and the decoder fails here even though round trips
// pass. The SFF-8472 array holds the values `ethtool -m` printed for the real module of
// tests/fixtures/optics/optics_01 (an FS SFP-10GSR-85).
#include "optics/eeprom.h"

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "optics/eeprom_encode.h"

namespace railwatch::optics {
namespace eeprom_test {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;
using ::testing::UnorderedElementsAreArray;
using Bytes = std::vector<uint8_t>;

void Put(Bytes& b, int offset, std::initializer_list<int> values) {
  for (int v : values) b.at(offset++) = static_cast<uint8_t>(v);
}
// An upper page held as its bytes 128-255, written at the spec's offset.
void PutUpper(Bytes& b, int offset, std::initializer_list<int> values) {
  Put(b, offset - 128, values);
}
void PutText(Bytes& b, int offset, int length, const std::string& text) {
  for (int i = 0; i < length; ++i) {
    b.at(offset + i) = i < static_cast<int>(text.size()) ? static_cast<uint8_t>(text[i]) : ' ';
  }
}
void PutUpperText(Bytes& b, int offset, int length, const std::string& text) {
  PutText(b, offset - 128, length, text);
}

double Dbm(double mw) { return 10 * std::log10(mw); }

// ---- SFF-8472 ---------------------------------------------------------------------------------

// The FS SFP-10GSR-85 of optics_01, as its EEPROM holds what `ethtool -m` printed.
ModuleEeprom Fs10GSr() {
  ModuleEeprom e;
  e.page00.assign(256, 0);
  Bytes& a0 = e.page00;
  Put(a0, 0, {0x03, 0x04, 0x07});                                // SFP, 2-wire ID, LC
  Put(a0, 3, {0x10, 0x00, 0x00, 0x00, 0x40, 0x00, 0x0c, 0x00});  // "Transceiver codes"
  PutText(a0, 20, 16, "FS");
  Put(a0, 37, {0x00, 0x1b, 0x21});
  PutText(a0, 40, 16, "SFP-10GSR-85");
  PutText(a0, 56, 4, "A");
  Put(a0, 60, {0x03, 0x52});  // 850 nm
  Put(a0, 64, {0x00, 0x1a});  // options: TX_DISABLE, TX_FAULT, RX_LOS
  PutText(a0, 68, 16, "F2020533679");
  PutText(a0, 84, 8, "200715");
  Put(a0, 92, {0x68, 0x80, 0x08});  // DDM, internally calibrated, average power; flags; 12.3
  e.a2.assign(256, 0);
  Bytes& a2 = e.a2;
  // Thresholds, HA LA HW LW each: temperature 80, -10, 70, 0 degrees C (x256) ...
  Put(a2, 0, {0x50, 0x00, 0xF6, 0x00, 0x46, 0x00, 0x00, 0x00});
  // ... voltage 3.63, 2.97, 3.465, 3.135 V (x10000) ...
  Put(a2, 8, {0x8D, 0xCC, 0x74, 0x04, 0x87, 0x5A, 0x7A, 0x76});
  // ... bias 15, 2, 12, 3 mA (x500) ...
  Put(a2, 16, {0x1D, 0x4C, 0x03, 0xE8, 0x17, 0x70, 0x05, 0xDC});
  // ... Tx power 1.5849, 0.1122, 1.0, 0.1778 mW (x10000) ...
  Put(a2, 24, {0x3D, 0xE9, 0x04, 0x62, 0x27, 0x10, 0x06, 0xF2});
  // ... Rx power 1.5849, 0.0389, 1.0, 0.0617 mW.
  Put(a2, 32, {0x3D, 0xE9, 0x01, 0x85, 0x27, 0x10, 0x02, 0x69});
  // Diagnostics: 39.18 C (10030/256), 3.3544 V, 6.090 mA, 0.6367 mW, 0.6486 mW.
  Put(a2, 96, {0x27, 0x2E, 0x83, 0x08, 0x0B, 0xE5, 0x18, 0xDF, 0x19, 0x56});
  return e;
}

TEST(Sff8472, HandBuiltArrayReadsAsEthtoolPrintedIt) {
  absl::StatusOr<ModuleReading> r = DecodeEeprom(Fs10GSr());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->spec, ModuleSpec::kSff8472);
  EXPECT_EQ(r->form_factor, "SFP");
  EXPECT_EQ(r->vendor, "FS");
  EXPECT_EQ(r->part_number, "SFP-10GSR-85");
  EXPECT_EQ(r->revision, "A");
  EXPECT_EQ(r->serial, "F2020533679");
  EXPECT_EQ(r->media, "10G Base-SR");
  EXPECT_EQ(r->wavelength_nm, 850);
  EXPECT_NEAR(*r->temperature_c, 39.18, 0.005);
  EXPECT_NEAR(*r->supply_voltage_v, 3.3544, 1e-9);
  ASSERT_EQ(r->tx_bias_ma.size(), 1u);
  EXPECT_NEAR(*r->tx_bias_ma[0], 6.090, 1e-9);
  EXPECT_NEAR(*r->tx_power_dbm[0], -1.96, 0.005);  // ethtool: 0.6367 mW / -1.96 dBm
  EXPECT_NEAR(*r->rx_power_dbm[0], -1.88, 0.005);  // 0.6486 mW / -1.88 dBm
  const Thresholds& temp = r->threshold(Quantity::kTemperature);
  EXPECT_EQ(temp.alarm_high, 80);
  EXPECT_EQ(temp.alarm_low, -10);
  EXPECT_EQ(temp.warning_high, 70);
  EXPECT_EQ(temp.warning_low, 0);
  EXPECT_NEAR(*r->threshold(Quantity::kSupplyVoltage).warning_low, 3.135, 1e-9);
  EXPECT_NEAR(*r->threshold(Quantity::kTxBias).alarm_high, 15, 1e-9);
  EXPECT_NEAR(*r->threshold(Quantity::kTxBias).warning_low, 3, 1e-9);
  // ethtool: 2.00, -9.50, 0.00, -7.50 dBm; Rx low limits -14.10 and -12.10 dBm.
  const Thresholds& tx = r->threshold(Quantity::kTxPower);
  EXPECT_NEAR(*tx.alarm_high, 2.00, 0.005);
  EXPECT_NEAR(*tx.alarm_low, -9.50, 0.005);
  EXPECT_NEAR(*tx.warning_high, 0.00, 0.005);
  EXPECT_NEAR(*tx.warning_low, -7.50, 0.005);
  EXPECT_NEAR(*r->threshold(Quantity::kRxPower).alarm_low, -14.10, 0.005);
  EXPECT_NEAR(*r->threshold(Quantity::kRxPower).warning_low, -12.10, 0.005);
  EXPECT_TRUE(r->flags.empty());  // ethtool: every flag Off
}

TEST(Sff8472, FlagsAndPinsAreTheModules) {
  ModuleEeprom e = Fs10GSr();
  e.a2[112] = 0x08;  // Tx bias high alarm
  e.a2[113] = 0x40;  // Rx power low alarm
  e.a2[116] = 0x80;  // temperature high warning
  e.a2[117] = 0x40;  // Rx power low warning
  e.a2[110] = 0x06;  // TX_FAULT and RX_LOS asserted
  absl::StatusOr<ModuleReading> r = DecodeEeprom(e);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_THAT(r->flags, UnorderedElementsAre("tx_bias_high_alarm", "rx_power_low_alarm",
                                             "temperature_high_warning", "rx_power_low_warning",
                                             "tx_fault", "rx_los"));
  // Without "alarm/warning flags implemented" (A0h byte 93) the flag bytes are not read, and
  // without TX_FAULT/RX_LOS implemented (byte 65) neither are the pins.
  e.page00[93] = 0;
  e.page00[65] = 0;
  r = DecodeEeprom(e);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->flags.empty());
}

TEST(Sff8472, ExternalCalibrationAppliesTheModulesConstants) {
  ModuleEeprom e = Fs10GSr();
  e.page00[92] = 0x58;  // DDM, externally calibrated, average power
  Bytes& a2 = e.a2;
  Put(a2, 56, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});  // Rx_PWR(4..2) = 0
  Put(a2, 68, {0x40, 0x00, 0x00, 0x00});              // Rx_PWR(1) = 2.0f
  Put(a2, 72, {0x42, 0xC8, 0x00, 0x00});              // Rx_PWR(0) = 100.0f
  Put(a2, 76, {0x02, 0x00, 0xFF, 0x9C});              // bias: slope 2.0, offset -100
  Put(a2, 80, {0x01, 0x00, 0x00, 0x00});              // Tx power: slope 1.0, offset 0
  Put(a2, 84, {0x01, 0x00, 0x01, 0x00});              // temperature: slope 1.0, offset +256
  Put(a2, 88, {0x00, 0x80, 0x00, 0x00});              // voltage: slope 0.5, offset 0
  // Raw readings: 30.0 C, 60000, 3000, 10000, 4950.
  Put(a2, 96, {0x1E, 0x00, 0xEA, 0x60, 0x0B, 0xB8, 0x27, 0x10, 0x13, 0x56});
  Put(a2, 0, {0x4F, 0x00});  // temperature high alarm, raw 79 C
  absl::StatusOr<ModuleReading> r = DecodeEeprom(e);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NEAR(*r->temperature_c, 31.0, 1e-9);    // 30 C + 1 C
  EXPECT_NEAR(*r->supply_voltage_v, 3.0, 1e-9);  // 60000 x 0.5 x 100 uV
  EXPECT_NEAR(*r->tx_bias_ma[0], 11.8, 1e-9);    // (3000 x 2 - 100) x 2 uA
  EXPECT_NEAR(*r->tx_power_dbm[0], 0.0, 1e-9);   // 1 mW
  EXPECT_NEAR(*r->rx_power_dbm[0], 0.0, 1e-6);   // 4950 x 2 + 100 = 10000: 1 mW
  EXPECT_NEAR(*r->threshold(Quantity::kTemperature).alarm_high, 80.0, 1e-9);
}

TEST(Sff8472, WithoutDiagnosticsIsIdentityOnly) {
  ModuleEeprom e = Fs10GSr();
  e.page00[92] = 0x00;
  absl::StatusOr<ModuleReading> r = DecodeEeprom(e);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->part_number, "SFP-10GSR-85");
  EXPECT_FALSE(r->has_diagnostics());
  EXPECT_TRUE(r->threshold(Quantity::kTemperature).empty());
}

// ---- SFF-8636 ---------------------------------------------------------------------------------

ModuleEeprom Qsfp28Sr4() {
  ModuleEeprom e;
  e.page00.assign(256, 0);
  Bytes& p = e.page00;
  Put(p, 0, {0x11, 0x08, 0x00});  // QSFP28, rev 2.10a, paged
  Put(p, 3, {0x01});              // Rx LOS lane 1
  Put(p, 4, {0x04});              // Tx fault lane 3
  Put(p, 6, {0x80});              // temperature high alarm
  Put(p, 9, {0x01});              // lane 2 (low nibble): Rx power low warning
  Put(p, 22, {0x2D, 0x80});       // 45.5 C
  Put(p, 26, {0x80, 0xE8});       // 3.3 V
  Put(p, 34, {0x27, 0x10, 0x13, 0x88, 0x00, 0x00, 0x4E, 0x20});  // Rx 1.0, 0.5, 0, 2.0 mW
  Put(p, 42, {0x0E, 0xA6, 0x0E, 0xA6, 0x0E, 0xA6, 0x0E, 0xA6});  // bias 7.5 mA
  Put(p, 50, {0x27, 0x10, 0x27, 0x10, 0x27, 0x10, 0x27, 0x10});  // Tx 1.0 mW
  Put(p, 128, {0x11});
  Put(p, 131, {0x80});  // extended compliance: byte 192
  Put(p, 147, {0x00});  // 850 nm VCSEL
  PutText(p, 148, 16, "Mellanox");
  PutText(p, 168, 16, "MMA1B00-C100D");
  PutText(p, 184, 2, "B1");
  Put(p, 186, {0x42, 0x68});  // 850 nm x 20
  Put(p, 192, {0x02});        // 100GBASE-SR4
  PutText(p, 196, 16, "MT1234AB00001");
  Put(p, 220, {0x3C});  // temperature, voltage, average Rx power, Tx power
  Bytes& p3 = e.upper[0x03];
  p3.assign(128, 0);
  PutUpper(p3, 128, {0x4B, 0x00, 0xFB, 0x00, 0x46, 0x00, 0x00, 0x00});  // 75, -5, 70, 0 C
  PutUpper(p3, 176, {0x4E, 0x20, 0x01, 0xF4, 0x27, 0x10, 0x03, 0xE8});  // 2, 0.05, 1, 0.1 mW
  PutUpper(p3, 184, {0x21, 0x34, 0x03, 0xE8});  // bias HA 8500 x 2 uA = 17 mA, LA 2 mA
  return e;
}

TEST(Sff8636, HandBuiltArrayDecodes) {
  absl::StatusOr<ModuleReading> r = DecodeEeprom(Qsfp28Sr4());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->spec, ModuleSpec::kSff8636);
  EXPECT_EQ(r->form_factor, "QSFP28");
  EXPECT_EQ(r->vendor, "Mellanox");
  EXPECT_EQ(r->part_number, "MMA1B00-C100D");
  EXPECT_EQ(r->revision, "B1");
  EXPECT_EQ(r->serial, "MT1234AB00001");
  EXPECT_EQ(r->media, "100GBASE-SR4");
  EXPECT_EQ(r->wavelength_nm, 850);
  EXPECT_DOUBLE_EQ(*r->temperature_c, 45.5);
  EXPECT_NEAR(*r->supply_voltage_v, 3.3, 1e-9);
  ASSERT_EQ(r->rx_power_dbm.size(), 4u);
  EXPECT_NEAR(*r->rx_power_dbm[0], 0.0, 1e-9);
  EXPECT_NEAR(*r->rx_power_dbm[1], Dbm(0.5), 1e-9);
  EXPECT_EQ(*r->rx_power_dbm[2], -40.0);
  EXPECT_NEAR(*r->rx_power_dbm[3], Dbm(2.0), 1e-9);
  ASSERT_EQ(r->tx_bias_ma.size(), 4u);
  EXPECT_NEAR(*r->tx_bias_ma[3], 7.5, 1e-9);
  ASSERT_EQ(r->tx_power_dbm.size(), 4u);
  EXPECT_NEAR(*r->tx_power_dbm[2], 0.0, 1e-9);
  const Thresholds& temp = r->threshold(Quantity::kTemperature);
  EXPECT_EQ(temp.alarm_high, 75);
  EXPECT_EQ(temp.alarm_low, -5);
  EXPECT_EQ(temp.warning_high, 70);
  EXPECT_EQ(temp.warning_low, 0);
  const Thresholds& rx = r->threshold(Quantity::kRxPower);
  EXPECT_NEAR(*rx.alarm_high, Dbm(2.0), 1e-9);
  EXPECT_NEAR(*rx.alarm_low, Dbm(0.05), 1e-9);
  EXPECT_NEAR(*rx.warning_high, 0.0, 1e-9);
  EXPECT_NEAR(*rx.warning_low, -10.0, 1e-9);
  EXPECT_NEAR(*r->threshold(Quantity::kTxBias).alarm_high, 17.0, 1e-9);
  EXPECT_TRUE(r->threshold(Quantity::kSupplyVoltage).empty());  // all zeros: none
  EXPECT_THAT(r->flags, UnorderedElementsAre("temperature_high_alarm", "rx_los:lane1",
                                             "tx_fault:lane3", "rx_power_low_warning:lane2"));
}

TEST(Sff8636, FlatMemoryHasNoPage03h) {
  ModuleEeprom e = Qsfp28Sr4();
  EXPECT_THAT(NextPageReads(e), ::testing::IsEmpty());  // 03h already there
  e.upper.clear();
  EXPECT_THAT(NextPageReads(e), ::testing::ElementsAre(PageRead{0x50, 3, 128, 128}));
  e.page00[2] = 0x04;  // flat memory
  EXPECT_THAT(NextPageReads(e), ::testing::IsEmpty());
  absl::StatusOr<ModuleReading> r = DecodeEeprom(e);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->threshold(Quantity::kTemperature).empty());
  EXPECT_EQ(r->rx_power_dbm.size(), 4u);
}

// ---- CMIS -------------------------------------------------------------------------------------

ModuleEeprom Osfp400gDr4() {
  ModuleEeprom e;
  e.page00.assign(256, 0);
  Bytes& p = e.page00;
  Put(p, 0, {0x19, 0x50, 0x00, 0x06});         // OSFP, CMIS 5.0, paged, ModuleReady (3 << 1)
  Put(p, 9, {0x04});                           // temperature high warning
  Put(p, 14, {0x34, 0x40, 0x80, 0x20});        // 52.25 C, 3.28 V
  Put(p, 85, {0x02, 0x11, 0x1C, 0x84, 0x01});  // SMF; 400GAUI-8 | 400GBASE-DR4, 8 host, 4 media
  Put(p, 90, {0xFF});                          // application 2: unused
  Put(p, 128, {0x19});
  PutText(p, 129, 16, "NVIDIA");
  PutText(p, 148, 16, "MMS4X00-NS400");
  PutText(p, 164, 2, "A6");
  PutText(p, 166, 16, "MT2423FT00012");
  Put(p, 212, {0x04});  // 1310 nm DFB
  Bytes& p01 = e.upper[0x01];
  p01.assign(128, 0);
  PutUpper(p01, 138, {0x66, 0x6C});  // 1311 nm x 20
  PutUpper(p01, 159, {0x03});        // temperature and voltage monitors
  PutUpper(p01, 160, {0x0F});        // bias, Tx and Rx power monitors; bias x2
  Bytes& p02 = e.upper[0x02];
  p02.assign(128, 0);
  PutUpper(p02, 128, {0x50, 0x00});  // temperature high alarm 80 C
  // Bias limits at x2 (4 uA a unit): 15, 2, 13, 3 mA.
  PutUpper(p02, 184, {0x0E, 0xA6, 0x01, 0xF4, 0x0C, 0xB2, 0x02, 0xEE});
  PutUpper(p02, 194, {0x03, 0xE8});  // Rx power low alarm 0.1 mW
  Bytes& p11 = e.upper[0x11];
  p11.assign(128, 0);
  PutUpper(p11, 135, {0x08});  // Tx fault lane 4
  PutUpper(p11, 147, {0x02});  // Rx LOS lane 2
  PutUpper(p11, 150, {0x02});  // Rx power low alarm lane 2
  PutUpper(p11, 154, {0x3A, 0x98, 0x3A, 0x98, 0x3A, 0x98, 0x3A, 0x98});  // Tx 1.5 mW
  PutUpper(p11, 170, {0x08, 0x34, 0x08, 0x34, 0x08, 0x34, 0x08, 0x34});  // 2100 x 4 uA
  PutUpper(p11, 186, {0x4E, 0x20, 0x00, 0x01, 0x00, 0x00, 0x27, 0x10});  // 2, 0.0001, 0, 1 mW
  // Lanes 5-8 of the bank hold values too; application 1 says the module has 4.
  PutUpper(p11, 194, {0x27, 0x10});
  return e;
}

TEST(Cmis, HandBuiltArrayDecodes) {
  absl::StatusOr<ModuleReading> r = DecodeEeprom(Osfp400gDr4());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->spec, ModuleSpec::kCmis);
  EXPECT_EQ(r->form_factor, "OSFP");
  EXPECT_EQ(r->vendor, "NVIDIA");
  EXPECT_EQ(r->part_number, "MMS4X00-NS400");
  EXPECT_EQ(r->revision, "A6");
  EXPECT_EQ(r->serial, "MT2423FT00012");
  EXPECT_EQ(r->media, "400GBASE-DR4");
  EXPECT_DOUBLE_EQ(*r->wavelength_nm, 1311);
  EXPECT_DOUBLE_EQ(*r->temperature_c, 52.25);
  EXPECT_NEAR(*r->supply_voltage_v, 3.28, 1e-9);
  ASSERT_EQ(r->tx_bias_ma.size(), 4u);
  EXPECT_NEAR(*r->tx_bias_ma[0], 8.4, 1e-9);  // x2 multiplier
  ASSERT_EQ(r->tx_power_dbm.size(), 4u);
  EXPECT_NEAR(*r->tx_power_dbm[3], Dbm(1.5), 1e-9);
  ASSERT_EQ(r->rx_power_dbm.size(), 4u);
  EXPECT_NEAR(*r->rx_power_dbm[0], Dbm(2.0), 1e-9);
  EXPECT_NEAR(*r->rx_power_dbm[1], -40.0, 1e-9);
  EXPECT_EQ(*r->rx_power_dbm[2], -40.0);
  EXPECT_NEAR(*r->rx_power_dbm[3], 0.0, 1e-9);
  EXPECT_EQ(r->threshold(Quantity::kTemperature).alarm_high, 80);
  const Thresholds& bias = r->threshold(Quantity::kTxBias);
  EXPECT_NEAR(*bias.alarm_high, 15, 1e-9);
  EXPECT_NEAR(*bias.alarm_low, 2, 1e-9);
  EXPECT_NEAR(*bias.warning_high, 13, 1e-9);
  EXPECT_NEAR(*bias.warning_low, 3, 1e-9);
  EXPECT_NEAR(*r->threshold(Quantity::kRxPower).alarm_low, -10.0, 1e-9);
  EXPECT_THAT(r->flags, UnorderedElementsAre("temperature_high_warning", "tx_fault:lane4",
                                             "rx_los:lane2", "rx_power_low_alarm:lane2"));
}

TEST(Cmis, PagesReadInTurnAndModuleFault) {
  ModuleEeprom e;
  EXPECT_THAT(NextPageReads(e), ::testing::ElementsAre(PageRead{0x50, 0, 0, 128}));
  ModuleEeprom full = Osfp400gDr4();
  StorePageRead({0x50, 0, 0, 128}, Bytes(full.page00.begin(), full.page00.begin() + 128), e);
  EXPECT_THAT(NextPageReads(e),
              ::testing::ElementsAre(PageRead{0x50, 0, 128, 128}, PageRead{0x50, 1, 128, 128}));
  StorePageRead({0x50, 0, 128, 128}, Bytes(full.page00.begin() + 128, full.page00.end()), e);
  StorePageRead({0x50, 1, 128, 128}, full.upper[0x01], e);
  EXPECT_THAT(NextPageReads(e),
              ::testing::ElementsAre(PageRead{0x50, 2, 128, 128}, PageRead{0x50, 0x11, 128, 128}));
  // A page that could not be read is not asked for again; the decoder goes without it.
  EXPECT_THAT(NextPageReads(e, {PageRead{0x50, 2, 128, 128}, PageRead{0x50, 0x11, 128, 128}}),
              ::testing::IsEmpty());
  EXPECT_EQ(e.page00, full.page00);
  e.page00[3] = 0x0A;  // ModuleFault (5 << 1)
  absl::StatusOr<ModuleReading> r = DecodeEeprom(e);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->rx_power_dbm.empty());
  EXPECT_TRUE(r->threshold(Quantity::kTemperature).empty());
  EXPECT_THAT(r->flags, UnorderedElementsAre("temperature_high_warning", "module_fault"));
  // Flat memory (a passive cable): no pages beyond 00h, no monitors.
  e.page00[2] = 0x80;
  EXPECT_THAT(NextPageReads(e), ::testing::IsEmpty());
  r = DecodeEeprom(e);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->temperature_c.has_value());
}

// ---- Round trips ------------------------------------------------------------------------------

void ExpectSameReading(const ModuleReading& want, const ModuleReading& got) {
  EXPECT_EQ(got.spec, want.spec);
  EXPECT_EQ(got.form_factor, want.form_factor);
  EXPECT_EQ(got.vendor, want.vendor);
  EXPECT_EQ(got.part_number, want.part_number);
  EXPECT_EQ(got.revision, want.revision);
  EXPECT_EQ(got.serial, want.serial);
  EXPECT_EQ(got.media, want.media);
  ASSERT_EQ(got.wavelength_nm.has_value(), want.wavelength_nm.has_value());
  if (want.wavelength_nm) {
    EXPECT_NEAR(*got.wavelength_nm, *want.wavelength_nm, 0.05);
  }
  ASSERT_EQ(got.temperature_c.has_value(), want.temperature_c.has_value());
  if (want.temperature_c) {
    EXPECT_NEAR(*got.temperature_c, *want.temperature_c, 1.0 / 256);
  }
  ASSERT_EQ(got.supply_voltage_v.has_value(), want.supply_voltage_v.has_value());
  if (want.supply_voltage_v) {
    EXPECT_NEAR(*got.supply_voltage_v, *want.supply_voltage_v, 1e-4);
  }
  auto lanes = [](const std::vector<std::optional<double>>& w,
                  const std::vector<std::optional<double>>& g, double tolerance, const char* what) {
    ASSERT_EQ(g.size(), w.size()) << what;
    for (size_t i = 0; i < w.size(); ++i) {
      EXPECT_NEAR(*g[i], *w[i], tolerance) << what << " lane " << i + 1;
    }
  };
  lanes(want.tx_bias_ma, got.tx_bias_ma, 0.004 + 1e-9, "tx bias");
  lanes(want.tx_power_dbm, got.tx_power_dbm, 0.01, "tx power");
  lanes(want.rx_power_dbm, got.rx_power_dbm, 0.01, "rx power");
  for (int qi = 0; qi < kQuantityCount; ++qi) {
    const Thresholds& w = want.thresholds[qi];
    const Thresholds& g = got.thresholds[qi];
    const double tolerance = qi == 2 ? 0.004 : 0.01;
    for (auto [wv, gv] :
         {std::pair{&w.alarm_high, &g.alarm_high}, std::pair{&w.alarm_low, &g.alarm_low},
          std::pair{&w.warning_high, &g.warning_high}, std::pair{&w.warning_low, &g.warning_low}}) {
      ASSERT_EQ(gv->has_value(), wv->has_value()) << "quantity " << qi;
      if (wv->has_value()) {
        EXPECT_NEAR(**gv, **wv, tolerance) << "quantity " << qi;
      }
    }
  }
  EXPECT_THAT(got.flags, UnorderedElementsAreArray(want.flags));
}

void SetLimits(ModuleReading& m, Quantity q, double ah, double wh, double wl, double al) {
  Thresholds& t = m.threshold(q);
  t.alarm_high = ah;
  t.warning_high = wh;
  t.warning_low = wl;
  t.alarm_low = al;
}

ModuleReading Reading(ModuleSpec spec, int lanes) {
  ModuleReading m;
  m.spec = spec;
  m.vendor = "ACME OPTICS";
  m.part_number = "RW-TEST-1";
  m.revision = "B";
  m.serial = "SN0001";
  m.wavelength_nm = 1310;
  m.temperature_c = 47.3;
  m.supply_voltage_v = 3.291;
  for (int lane = 0; lane < lanes; ++lane) {
    m.tx_bias_ma.push_back(7.5 + lane * 0.25);
    m.tx_power_dbm.push_back(1.2 - lane * 0.3);
    m.rx_power_dbm.push_back(lane == 1 ? -40.0 : -2.5 + lane);
  }
  SetLimits(m, Quantity::kTemperature, 80, 75, -5, -10);
  SetLimits(m, Quantity::kSupplyVoltage, 3.63, 3.465, 3.135, 2.97);
  SetLimits(m, Quantity::kTxBias, 15, 13, 3, 2);
  SetLimits(m, Quantity::kTxPower, 7.0, 4.0, -3.9, -6.9);
  SetLimits(m, Quantity::kRxPower, 7.0, 4.0, -6.9, -9.9);
  return m;
}

TEST(RoundTrip, Sff8472) {
  ModuleReading m = Reading(ModuleSpec::kSff8472, 1);
  m.form_factor = "SFP";
  m.media = "25GBASE-SR";
  m.flags = {"temperature_high_warning", "rx_power_low_alarm", "rx_los", "tx_fault"};
  absl::StatusOr<ModuleEeprom> e = EncodeEeprom(m);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->page00.size(), 256u);
  EXPECT_EQ(e->a2.size(), 256u);
  absl::StatusOr<ModuleReading> back = DecodeEeprom(*e);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameReading(m, *back);
}

TEST(RoundTrip, Sff8472WithoutDiagnostics) {
  ModuleReading m;
  m.spec = ModuleSpec::kSff8472;
  m.form_factor = "SFP";
  m.vendor = "X";
  m.media = "10G Base-LR";
  absl::StatusOr<ModuleEeprom> e = EncodeEeprom(m);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(e->a2.empty());
  EXPECT_THAT(NextPageReads(*e), ::testing::IsEmpty());  // no A2h to read
  absl::StatusOr<ModuleReading> back = DecodeEeprom(*e);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameReading(m, *back);
}

TEST(RoundTrip, Sff8636) {
  ModuleReading m = Reading(ModuleSpec::kSff8636, 4);
  m.form_factor = "QSFP28";
  m.media = "100G CWDM4";
  m.flags = {"voltage_low_warning",
             "rx_los:lane2",
             "rx_power_low_alarm:lane2",
             "tx_bias_high_warning:lane4",
             "tx_fault:lane3",
             "rx_lol:lane1",
             "tx_los:lane4",
             "tx_power_high_alarm:lane1"};
  absl::StatusOr<ModuleEeprom> e = EncodeEeprom(m);
  ASSERT_TRUE(e.ok()) << e.status();
  absl::StatusOr<ModuleReading> back = DecodeEeprom(*e);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameReading(m, *back);
}

TEST(RoundTrip, CmisAsTheSimulatorsModule) {
  ModuleReading m = Reading(ModuleSpec::kCmis, 4);
  m.form_factor = "OSFP";
  m.media = "400GBASE-DR4";
  m.wavelength_nm = 1311;
  m.flags = {"temperature_high_alarm",     "rx_los:lane1",
             "rx_power_low_alarm:lane1",   "rx_power_low_warning:lane3",
             "tx_adaptive_eq_fault:lane2", "tx_lol:lane4"};
  absl::StatusOr<ModuleEeprom> e = EncodeEeprom(m);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->upper.size(), 3u);  // 01h, 02h, 11h
  absl::StatusOr<ModuleReading> back = DecodeEeprom(*e);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSameReading(m, *back);
}

TEST(RoundTrip, CmisEightLanesAndAHighBiasTakeTheMultiplier) {
  ModuleReading m = Reading(ModuleSpec::kCmis, 8);
  m.form_factor = "QSFP-DD";
  m.media = "400GBASE-SR8";
  m.wavelength_nm = 850;
  m.tx_bias_ma[5] = 200.0;  // beyond 16 bits of 2 uA: x2
  SetLimits(m, Quantity::kTxBias, 250, 220, 3, 2);
  m.flags = {"module_fault", "tx_bias_high_alarm:lane6"};
  absl::StatusOr<ModuleEeprom> e = EncodeEeprom(m);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->upper.at(0x01)[160 - 128] & 0x18, 0x08);
  absl::StatusOr<ModuleReading> back = DecodeEeprom(*e);
  ASSERT_TRUE(back.ok()) << back.status();
  // x2: bias to 4 uA.
  ASSERT_EQ(back->tx_bias_ma.size(), 8u);
  EXPECT_NEAR(*back->tx_bias_ma[5], 200.0, 0.002);
  m.tx_bias_ma[5] = back->tx_bias_ma[5];
  ExpectSameReading(m, *back);
}

// ---- Bad input --------------------------------------------------------------------------------

TEST(BadInput, DecoderSaysWhatIsWrong) {
  ModuleEeprom e;
  EXPECT_THAT(DecodeEeprom(e).status().message(), HasSubstr("page 00h: empty"));
  e.page00.assign(256, 0);
  EXPECT_THAT(DecodeEeprom(e).status().message(),
              HasSubstr("unknown or unspecified identifier 0x00"));
  e.page00[0] = 0x42;
  EXPECT_THAT(DecodeEeprom(e).status().message(), HasSubstr("unsupported identifier 0x42"));
  e = Qsfp28Sr4();
  e.page00.resize(128);
  EXPECT_THAT(DecodeEeprom(e).status().message(),
              HasSubstr("page 00h: truncated: 128 bytes, needs 256"));
  e = Osfp400gDr4();
  e.upper[0x11].resize(64);
  EXPECT_THAT(DecodeEeprom(e).status().message(), HasSubstr("page 11h: 64 bytes"));
  e = Fs10GSr();
  e.a2.resize(100);
  EXPECT_THAT(DecodeEeprom(e).status().message(), HasSubstr("A2h: truncated: 100 bytes"));
  e = Fs10GSr();
  e.page00.resize(50);
  EXPECT_THAT(DecodeEeprom(e).status().message(), HasSubstr("A0h: truncated: 50 bytes"));
}

TEST(BadInput, EncoderRefusesWhatTheSpecCannotHold) {
  ModuleReading m = Reading(ModuleSpec::kSff8636, 5);
  EXPECT_THAT(EncodeEeprom(m).status().message(), HasSubstr("SFF-8636 has 4 lanes"));
  m = Reading(ModuleSpec::kSff8472, 2);
  EXPECT_THAT(EncodeEeprom(m).status().message(), HasSubstr("SFF-8472 has one lane"));
  m = Reading(ModuleSpec::kCmis, 4);
  m.flags = {"rx_los:lane9"};
  EXPECT_THAT(EncodeEeprom(m).status().message(), HasSubstr("lane must be 1-8"));
  m.flags = {"laser_on_fire"};
  EXPECT_THAT(EncodeEeprom(m).status().message(), HasSubstr("\"laser_on_fire\""));
  m.flags = {};
  m.media = "1.6T-WARP";
  EXPECT_THAT(EncodeEeprom(m).status().message(), HasSubstr("has no CMIS code"));
  m.media = "";
  m.vendor = "A VENDOR NAME OVER SIXTEEN";
  EXPECT_THAT(EncodeEeprom(m).status().message(), HasSubstr("longer than its 16-character"));
  m.vendor = "";
  m.form_factor = "SFP";
  EXPECT_THAT(EncodeEeprom(m).status().message(), HasSubstr("not one of CMIS"));
  m.spec = ModuleSpec::kUnknown;
  EXPECT_FALSE(EncodeEeprom(m).ok());
}

}  // namespace eeprom_test
}  // namespace railwatch::optics
