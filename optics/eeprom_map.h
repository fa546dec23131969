#pragma once

// Where things are in a pluggable module's EEPROM: the byte maps of SFF-8472 (rev 12.4),
// SFF-8636 (rev 2.10a) and CMIS (4.0-5.2), and the SFF-8024 codes railwatch names. Shared by
// the decoder (optics/eeprom.cc) and the encoder (optics/eeprom_encode.cc); the tests check
// both against byte arrays built by hand from the specs, so a misreading here cannot hide
// behind a round trip.
//
// Offsets are the specs' own: 0-127 the lower page (SFF-8472: the first half of A0h or A2h),
// 128-255 an upper page. Two-byte values are big-endian.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "optics/module.h"

namespace railwatch::optics::eeprom_map {

inline constexpr size_t kHalfPage = 128;
inline constexpr size_t kPage = 256;

// Byte 0 of every spec (SFF-8024 table 4-1), the spec it implies and railwatch's name for it.
struct Identifier {
  uint8_t code;
  ModuleSpec spec;
  std::string_view form_factor;
};
inline constexpr Identifier kIdentifiers[] = {
    {0x03, ModuleSpec::kSff8472, "SFP"},      {0x0B, ModuleSpec::kSff8472, "DWDM-SFP"},
    {0x0C, ModuleSpec::kSff8636, "QSFP"},     {0x0D, ModuleSpec::kSff8636, "QSFP+"},
    {0x11, ModuleSpec::kSff8636, "QSFP28"},   {0x18, ModuleSpec::kCmis, "QSFP-DD"},
    {0x19, ModuleSpec::kCmis, "OSFP"},        {0x1B, ModuleSpec::kCmis, "DSFP"},
    {0x1E, ModuleSpec::kCmis, "QSFP (CMIS)"}, {0x1F, ModuleSpec::kCmis, "SFP-DD"},
    {0x20, ModuleSpec::kCmis, "SFP+ (CMIS)"},
};

// The four limits of one quantity, in the order all three specs store them.
enum Level { kAlarmHigh, kAlarmLow, kWarningHigh, kWarningLow };
inline constexpr int kLevels = 4;
inline constexpr std::string_view kLevelSuffix[kLevels] = {"_high_alarm", "_low_alarm",
                                                           "_high_warning", "_low_warning"};
// Flag names (optics/module.h) start with these, indexed by Quantity: the names the pasted
// `ethtool -m` reader (optics/ethtool_text.cc) gives the same flags.
inline constexpr std::string_view kFlagQuantity[kQuantityCount] = {
    "temperature", "voltage", "tx_bias", "tx_power", "rx_power"};

// ---- SFF-8472 (SFP): A0h at I2C address 0x50, A2h at 0x51 ----------------------------------
namespace sff8472 {
inline constexpr int kIdentifier = 0;
inline constexpr int kConnector = 2;
inline constexpr int kEthernet10G = 3;  // bits 7-4: 10GBASE-ER, -LRM, -LR, -SR
inline constexpr int kEthernet1G = 6;   // bit 3 1000BASE-T, 2 -CX, 1 -LX, 0 -SX
inline constexpr int kCableTech = 8;    // bit 3 active, bit 2 passive cable: no wavelength
inline constexpr int kVendorName = 20, kVendorNameLen = 16;
inline constexpr int kExtCompliance = 36;  // SFF-8024 table 4-4
inline constexpr int kVendorPn = 40, kVendorPnLen = 16;
inline constexpr int kVendorRev = 56, kVendorRevLen = 4;
inline constexpr int kWavelength = 60;  // nm, optical modules
inline constexpr int kCcBase = 63;      // sum of 0-62
inline constexpr int kOptions = 65;     // bit 3: TX_FAULT implemented, bit 1: RX_LOS
inline constexpr uint8_t kOptionTxFault = 0x08, kOptionRxLos = 0x02;
inline constexpr int kVendorSn = 68, kVendorSnLen = 16;
inline constexpr int kDateCode = 84, kDateCodeLen = 8;
inline constexpr int kDiagType = 92;
inline constexpr uint8_t kDiagImplemented = 0x40, kDiagInternal = 0x20, kDiagExternal = 0x10,
                         kDiagRxAverage = 0x08;
inline constexpr int kEnhancedOptions = 93;
inline constexpr uint8_t kAlarmFlagsImplemented = 0x80;
inline constexpr int kCompliance = 94;
inline constexpr int kCcExt = 95;  // sum of 64-94

// A2h. Thresholds: quantity q's four limits at 8 q + 2 level (temperature, voltage, bias, Tx
// power, Rx power: the order of Quantity).
inline constexpr int kThresholds = 0;
inline constexpr int kRxPowerCal4 = 56, kRxPowerCal3 = 60, kRxPowerCal2 = 64, kRxPowerCal1 = 68,
                     kRxPowerCal0 = 72;  // IEEE 754 single, big-endian
inline constexpr int kBiasSlope = 76, kBiasOffset = 78, kTxPowerSlope = 80, kTxPowerOffset = 82,
                     kTemperatureSlope = 84, kTemperatureOffset = 86, kVoltageSlope = 88,
                     kVoltageOffset = 90;  // slopes unsigned 8.8, offsets signed 16
inline constexpr int kA2Checksum = 95;     // sum of 0-94
// Diagnostics, indexed by Quantity: 96 temperature ... 104 Rx power.
inline constexpr int kMonitors = 96;
inline constexpr int kStatus = 110;
inline constexpr uint8_t kStatusTxFault = 0x04, kStatusRxLos = 0x02;
inline constexpr int kAlarmFlags = 112, kWarningFlags = 116;
// Bits of the two flag bytes (alarm or warning at +0 and +1) per quantity: high, low.
struct FlagBits {
  int byte;  // 0 or 1 after kAlarmFlags / kWarningFlags
  uint8_t high, low;
};
inline constexpr FlagBits kFlagBits[kQuantityCount] = {
    {0, 0x80, 0x40}, {0, 0x20, 0x10}, {0, 0x08, 0x04}, {0, 0x02, 0x01}, {1, 0x80, 0x40}};
// The A2h bytes the decoder reads: through the warning flags.
inline constexpr size_t kA2MinSize = 118;
}  // namespace sff8472

// ---- SFF-8636 (QSFP+, QSFP28): lower page and upper pages 00h, 03h --------------------------
namespace sff8636 {
inline constexpr int kLanes = 4;
inline constexpr int kIdentifier = 0;
inline constexpr int kRevision = 1;
inline constexpr int kStatus = 2;
inline constexpr uint8_t kFlatMemory = 0x04;  // upper page 00h only: no page 03h
inline constexpr int kLos = 3;                // bit L: Rx LOS lane L+1; bit 4+L: Tx LOS
inline constexpr int kFault = 4;              // bit L: Tx fault lane L+1
inline constexpr int kLol = 5;                // bit L: Rx CDR LOL; bit 4+L: Tx CDR LOL
inline constexpr int kTemperatureFlags = 6, kVoltageFlags = 7;  // bits 7-4: HA, LA, HW, LW
// Per-lane monitor flags: two lanes a byte, lane 1 in the high nibble (HA, LA, HW, LW from bit
// 3 of the nibble down).
inline constexpr int kRxPowerFlags = 9, kTxBiasFlags = 11, kTxPowerFlags = 13;
inline constexpr int kTemperature = 22, kVoltage = 26;
inline constexpr int kRxPower = 34, kTxBias = 42, kTxPower = 50;  // 2 bytes a lane
// Upper page 00h.
inline constexpr int kUpperIdentifier = 128;
inline constexpr int kConnector = 130;
inline constexpr int kEthernetCompliance = 131;  // bit 7: see kExtCompliance
inline constexpr uint8_t kEthernetExtended = 0x80;
inline constexpr int kDeviceTech = 147;  // bits 7-4: transmitter technology (>= 0xA0: copper)
inline constexpr int kVendorName = 148, kVendorNameLen = 16;
inline constexpr int kVendorPn = 168, kVendorPnLen = 16;
inline constexpr int kVendorRev = 184, kVendorRevLen = 2;
inline constexpr int kWavelength = 186;  // nm x 20
inline constexpr int kCcBase = 191;      // sum of 128-190
inline constexpr int kExtCompliance = 192;
inline constexpr int kVendorSn = 196, kVendorSnLen = 16;
inline constexpr int kDateCode = 212, kDateCodeLen = 8;
inline constexpr int kDiagType = 220;
inline constexpr uint8_t kDiagTemperature = 0x20, kDiagVoltage = 0x10, kDiagRxAverage = 0x08,
                         kDiagTxPower = 0x04;
inline constexpr int kCcExt = 223;  // sum of 192-222
// Page 03h thresholds, indexed by Quantity (HA, LA, HW, LW from there).
inline constexpr int kThresholds[kQuantityCount] = {128, 144, 184, 192, 176};
}  // namespace sff8636

// ---- CMIS (QSFP-DD, OSFP, QSFP112): lower page and pages 00h, 01h, 02h, 11h -----------------
namespace cmis {
inline constexpr int kLanesPerBank = 8;
inline constexpr int kIdentifier = 0;
inline constexpr int kRevision = 1;  // major in bits 7-4
inline constexpr int kMemoryModel = 2;
inline constexpr uint8_t kFlatMemory = 0x80;
inline constexpr int kModuleState = 3;  // bits 3-1
inline constexpr uint8_t kStateReady = 3, kStateFault = 5;
// Byte 9, latched: temperature HA, LA, HW, LW in bits 0-3, Vcc in bits 4-7.
inline constexpr int kModuleFlags = 9;
inline constexpr int kTemperature = 14, kVoltage = 16;
inline constexpr int kMediaType = 85;  // 1 MMF, 2 SMF, 3 passive copper, 4 active cable
inline constexpr uint8_t kMediaMmf = 1, kMediaSmf = 2, kMediaCopper = 3, kMediaActive = 4;
// Application 1's descriptor: host interface (FFh: none), media interface, lane counts (host
// in bits 7-4, media in bits 3-0), host lane assignment.
inline constexpr int kApp1HostInterface = 86, kApp1MediaInterface = 87, kApp1Lanes = 88,
                     kApp1HostAssignment = 89;
// Upper page 00h.
inline constexpr int kUpperIdentifier = 128;
inline constexpr int kVendorName = 129, kVendorNameLen = 16;
inline constexpr int kVendorPn = 148, kVendorPnLen = 16;
inline constexpr int kVendorRev = 164, kVendorRevLen = 2;
inline constexpr int kVendorSn = 166, kVendorSnLen = 16;
inline constexpr int kDateCode = 182, kDateCodeLen = 8;
inline constexpr int kConnector = 203;
inline constexpr int kMediaTech = 212;       // < 0x0A: optical (0x00 850 nm VCSEL, 0x04 1310 DFB)
inline constexpr int kPage00Checksum = 222;  // sum of 128-221
// Page 01h.
inline constexpr int kWavelength = 138;      // nm x 20 (0.05 nm units)
inline constexpr int kPagesSupported = 142;  // bits 1-0: banks (0: bank 0 only)
inline constexpr int kCharacteristics = 151;
inline constexpr uint8_t kRxPowerAverage = 0x10;
inline constexpr int kModuleMonitors = 159;
inline constexpr uint8_t kTemperatureMonitor = 0x01, kVoltageMonitor = 0x02;
inline constexpr int kLaneMonitors = 160;
inline constexpr uint8_t kTxBiasMonitor = 0x01, kTxPowerMonitor = 0x02, kRxPowerMonitor = 0x04,
                         kBiasScaleMask = 0x18;  // 00 x1, 01 x2, 10 x4
inline constexpr int kPage01Checksum = 255;      // sum of 130-254
// Page 02h thresholds, indexed by Quantity (HA, LA, HW, LW from there).
inline constexpr int kThresholds[kQuantityCount] = {128, 136, 184, 176, 192};
inline constexpr int kPage02Checksum = 255;  // sum of 128-254
// Page 11h (bank 0): one bit a lane (bit L: lane L+1), latched.
inline constexpr int kTxFault = 135, kTxLos = 136, kTxLol = 137, kTxEqFault = 138;
inline constexpr int kTxPowerFlags = 139;  // HA, LA, HW, LW: 139-142
inline constexpr int kTxBiasFlags = 143;   // 143-146
inline constexpr int kRxLos = 147, kRxLol = 148;
inline constexpr int kRxPowerFlags = 149;                            // 149-152
inline constexpr int kTxPower = 154, kTxBias = 170, kRxPower = 186;  // 2 bytes a lane
}  // namespace cmis

// Media names: what the module is for, as railwatch names it (ModuleReading::media), from the
// SFF-8024 codes. Several codes may share a name; the encoder writes the first.
struct MediaCode {
  uint8_t code;
  std::string_view name;
};
// SFF-8472 byte 36 and SFF-8636 byte 192 (SFF-8024 table 4-4), the SFP and QSFP readings.
inline constexpr MediaCode kSfpExtendedMedia[] = {
    {0x02, "25GBASE-SR"},      {0x03, "25GBASE-LR"},      {0x04, "25GBASE-ER"},
    {0x0B, "25GBASE-CR CA-L"}, {0x0C, "25GBASE-CR CA-S"}, {0x0D, "25GBASE-CR CA-N"},
    {0x16, "10GBASE-T"},
};
inline constexpr MediaCode kQsfpExtendedMedia[] = {
    {0x01, "100G AOC"},     {0x02, "100GBASE-SR4"},   {0x03, "100GBASE-LR4"},
    {0x04, "100GBASE-ER4"}, {0x05, "100GBASE-SR10"},  {0x06, "100G CWDM4"},
    {0x07, "100G PSM4"},    {0x08, "100G ACC"},       {0x0B, "100GBASE-CR4"},
    {0x10, "40GBASE-ER4"},  {0x11, "4x10GBASE-SR"},   {0x12, "40G PSM4"},
    {0x17, "100G CLR4"},    {0x18, "100G AOC"},       {0x19, "100G ACC"},
    {0x20, "100G SWDM4"},   {0x21, "100G PAM4 BiDi"}, {0x25, "100GBASE-DR"},
    {0x26, "100GBASE-FR1"}, {0x27, "100GBASE-LR1"},   {0x40, "200GBASE-CR4"},
    {0x41, "200GBASE-SR4"}, {0x42, "200GBASE-DR4"},   {0x43, "200GBASE-FR4"},
    {0x46, "200GBASE-LR4"},
};
// SFF-8472 byte 3 bits 7-4 and SFF-8636 byte 131 bits 6-0 (one name a bit).
struct MediaBit {
  uint8_t mask;
  std::string_view name;
};
inline constexpr MediaBit kSfp10GMedia[] = {
    {0x10, "10G Base-SR"}, {0x20, "10G Base-LR"}, {0x40, "10G Base-LRM"}, {0x80, "10G Base-ER"}};
inline constexpr MediaBit kSfp1GMedia[] = {
    {0x01, "1000BASE-SX"}, {0x02, "1000BASE-LX"}, {0x04, "1000BASE-CX"}, {0x08, "1000BASE-T"}};
inline constexpr MediaBit kQsfpMedia[] = {
    {0x01, "40G Active Cable"}, {0x02, "40GBASE-LR4"}, {0x04, "40GBASE-SR4"}, {0x08, "40GBASE-CR4"},
    {0x10, "10G Base-SR"},      {0x20, "10G Base-LR"}, {0x40, "10G Base-LRM"}};
// CMIS module media interface codes (SFF-8024 tables 4-6 to 4-10) by media type (byte 85).
struct CmisMedia {
  uint8_t media_type;
  uint8_t code;
  std::string_view name;
};
inline constexpr CmisMedia kCmisMedia[] = {
    {cmis::kMediaMmf, 0x02, "10GBASE-SR"},      {cmis::kMediaMmf, 0x03, "25GBASE-SR"},
    {cmis::kMediaMmf, 0x04, "40GBASE-SR4"},     {cmis::kMediaMmf, 0x07, "50GBASE-SR"},
    {cmis::kMediaMmf, 0x09, "100GBASE-SR4"},    {cmis::kMediaMmf, 0x0C, "100GBASE-SR2"},
    {cmis::kMediaMmf, 0x0E, "200GBASE-SR4"},    {cmis::kMediaMmf, 0x10, "400GBASE-SR8"},
    {cmis::kMediaMmf, 0x11, "400G-SR4"},        {cmis::kMediaMmf, 0x12, "800G-SR8"},
    {cmis::kMediaMmf, 0x1A, "400GBASE-SR4.2"},  {cmis::kMediaSmf, 0x04, "10GBASE-LR"},
    {cmis::kMediaSmf, 0x07, "25GBASE-LR"},      {cmis::kMediaSmf, 0x09, "40GBASE-LR4"},
    {cmis::kMediaSmf, 0x0D, "100GBASE-LR4"},    {cmis::kMediaSmf, 0x0F, "100G PSM4"},
    {cmis::kMediaSmf, 0x10, "100G CWDM4"},      {cmis::kMediaSmf, 0x14, "100GBASE-DR"},
    {cmis::kMediaSmf, 0x15, "100GBASE-FR1"},    {cmis::kMediaSmf, 0x16, "100GBASE-LR1"},
    {cmis::kMediaSmf, 0x17, "200GBASE-DR4"},    {cmis::kMediaSmf, 0x18, "200GBASE-FR4"},
    {cmis::kMediaSmf, 0x19, "200GBASE-LR4"},    {cmis::kMediaSmf, 0x1A, "400GBASE-FR8"},
    {cmis::kMediaSmf, 0x1B, "400GBASE-LR8"},    {cmis::kMediaSmf, 0x1C, "400GBASE-DR4"},
    {cmis::kMediaSmf, 0x1D, "400GBASE-FR4"},    {cmis::kMediaSmf, 0x1E, "400G-LR4-10"},
    {cmis::kMediaCopper, 0x01, "Copper cable"}, {cmis::kMediaActive, 0x01, "Active cable"},
};

}  // namespace railwatch::optics::eeprom_map
