#include "optics/eeprom.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/labels.h"
#include "optics/eeprom_map.h"

namespace railwatch::optics {
// Named, not anonymous: the unity build may put other optics files in the same unit.
namespace eeprom_decode {

namespace m = eeprom_map;
using Bytes = std::vector<uint8_t>;

uint16_t U16(const Bytes& b, int offset) {
  return static_cast<uint16_t>((b[offset] << 8) | b[offset + 1]);
}
int16_t S16(const Bytes& b, int offset) { return static_cast<int16_t>(U16(b, offset)); }

// An upper page is stored as its bytes 128-255; `offset` is the spec's (128-255).
uint8_t UpperByte(const Bytes& page, int offset) { return page[offset - m::kHalfPage]; }
uint16_t UpperU16(const Bytes& page, int offset) {
  return static_cast<uint16_t>((UpperByte(page, offset) << 8) | UpperByte(page, offset + 1));
}

// A space-padded ASCII field; NULs end it, other unprintable bytes read '?'.
std::string Ascii(const Bytes& b, int offset, int length) {
  std::string out;
  for (int i = offset; i < offset + length && i < static_cast<int>(b.size()); ++i) {
    const uint8_t c = b[i];
    if (c == 0) break;
    out.push_back(c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?');
  }
  return std::string(absl::StripAsciiWhitespace(out));
}

double Celsius(double raw) { return raw / 256.0; }
double Volts(double raw) { return raw / 10000.0; }
double Milliamperes(double raw) { return std::max(0.0, raw) * 0.002; }
double Dbm(double raw) { return MilliwattsToDbm(raw / 10000.0); }  // raw: 0.1 µW

// A quantity's value from its raw reading in the spec's unit (bias already scaled).
double FromRaw(Quantity q, double raw) {
  switch (q) {
    case Quantity::kTemperature:
      return Celsius(raw);
    case Quantity::kSupplyVoltage:
      return Volts(raw);
    case Quantity::kTxBias:
      return Milliamperes(raw);
    case Quantity::kTxPower:
    case Quantity::kRxPower:
      return Dbm(raw);
  }
  return raw;
}

// Four limits (HA, LA, HW, LW, two bytes each from `at`) through `convert`; none when all four
// raw values are zero (a module without thresholds).
template <typename Raw, typename Convert>
Thresholds ReadThresholds(Raw raw, Convert convert) {
  uint16_t r[m::kLevels];
  bool any = false;
  for (int l = 0; l < m::kLevels; ++l) {
    r[l] = raw(l);
    any = any || r[l] != 0;
  }
  Thresholds t;
  if (!any) return t;
  t.alarm_high = convert(r[m::kAlarmHigh]);
  t.alarm_low = convert(r[m::kAlarmLow]);
  t.warning_high = convert(r[m::kWarningHigh]);
  t.warning_low = convert(r[m::kWarningLow]);
  return t;
}

std::string LaneFlag(std::string_view name, int lane) {
  return absl::StrCat(AsAbsl(name), ":lane", lane + 1);
}

// Four level flags of one quantity: `set(level)` says whether it is raised.
template <typename IsSet>
void AddLevelFlags(Quantity q, int lane, IsSet set, std::vector<std::string>& flags) {
  for (int l = 0; l < m::kLevels; ++l) {
    if (!set(l)) continue;
    std::string name =
        absl::StrCat(AsAbsl(m::kFlagQuantity[static_cast<int>(q)]), AsAbsl(m::kLevelSuffix[l]));
    flags.push_back(lane < 0 ? name : LaneFlag(name, lane));
  }
}

absl::Status Truncated(std::string_view what, size_t have, size_t need) {
  return absl::InvalidArgumentError(
      absl::StrCat(AsAbsl(what), ": truncated: ", have, " bytes, needs ", need));
}

template <typename Table>
std::string_view NameOfCode(const Table& table, uint8_t code) {
  for (const auto& entry : table) {
    if (entry.code == code) return entry.name;
  }
  return {};
}

// ---- SFF-8472 ---------------------------------------------------------------------------------

std::string Sff8472Media(const Bytes& a0) {
  namespace s = m::sff8472;
  if (const uint8_t ext = a0[s::kExtCompliance]; ext != 0) {
    std::string_view name = NameOfCode(m::kSfpExtendedMedia, ext);
    if (!name.empty()) return std::string(name);
  }
  for (const m::MediaBit& bit : m::kSfp10GMedia) {
    if (a0[s::kEthernet10G] & bit.mask) return std::string(bit.name);
  }
  for (const m::MediaBit& bit : m::kSfp1GMedia) {
    if (a0[s::kEthernet1G] & bit.mask) return std::string(bit.name);
  }
  if (const uint8_t ext = a0[s::kExtCompliance]; ext != 0) {
    return absl::StrFormat("SFF-8024 extended 0x%02x", ext);
  }
  return "";
}

float BigEndianFloat(const Bytes& b, int offset) {
  const uint32_t bits = (uint32_t{b[offset]} << 24) | (uint32_t{b[offset + 1]} << 16) |
                        (uint32_t{b[offset + 2]} << 8) | uint32_t{b[offset + 3]};
  return std::bit_cast<float>(bits);
}

// The raw reading of quantity q (internal calibration: as stored; external: through A2h's
// constants, SFF-8472 section 9.3), in the unit of the internally calibrated value.
class Sff8472Calibration {
 public:
  Sff8472Calibration(const Bytes& a2, bool external) : a2_(a2), external_(external) {}

  double Apply(Quantity q, uint16_t raw) const {
    namespace s = m::sff8472;
    const double x = q == Quantity::kTemperature ? static_cast<int16_t>(raw) : raw;
    if (!external_) return x;
    auto linear = [&](int slope_at, int offset_at) {
      const double slope = a2_[slope_at] + a2_[slope_at + 1] / 256.0;
      return slope * x + S16(a2_, offset_at);
    };
    switch (q) {
      case Quantity::kTemperature:
        return linear(s::kTemperatureSlope, s::kTemperatureOffset);
      case Quantity::kSupplyVoltage:
        return linear(s::kVoltageSlope, s::kVoltageOffset);
      case Quantity::kTxBias:
        return linear(s::kBiasSlope, s::kBiasOffset);
      case Quantity::kTxPower:
        return linear(s::kTxPowerSlope, s::kTxPowerOffset);
      case Quantity::kRxPower: {
        // Rx_PWR = R4 x^4 + R3 x^3 + R2 x^2 + R1 x + R0, in 0.1 µW.
        const int at[] = {s::kRxPowerCal4, s::kRxPowerCal3, s::kRxPowerCal2, s::kRxPowerCal1,
                          s::kRxPowerCal0};
        double v = 0;
        for (int c : at) v = v * x + BigEndianFloat(a2_, c);
        return v;
      }
    }
    return x;
  }

 private:
  const Bytes& a2_;
  const bool external_;
};

absl::StatusOr<ModuleReading> DecodeSff8472(const ModuleEeprom& e, uint8_t identifier) {
  namespace s = m::sff8472;
  const Bytes& a0 = e.page00;
  if (a0.size() < 96) return Truncated("A0h", a0.size(), 96);
  ModuleReading r;
  r.spec = ModuleSpec::kSff8472;
  r.form_factor = std::string(FormFactorOfIdentifier(identifier));
  r.vendor = Ascii(a0, s::kVendorName, s::kVendorNameLen);
  r.part_number = Ascii(a0, s::kVendorPn, s::kVendorPnLen);
  r.revision = Ascii(a0, s::kVendorRev, s::kVendorRevLen);
  r.serial = Ascii(a0, s::kVendorSn, s::kVendorSnLen);
  r.media = Sff8472Media(a0);
  if ((a0[s::kCableTech] & 0x0C) == 0) {
    if (const uint16_t nm = U16(a0, s::kWavelength); nm != 0) r.wavelength_nm = nm;
  }
  if (!(a0[s::kDiagType] & s::kDiagImplemented) || e.a2.empty()) return r;

  const Bytes& a2 = e.a2;
  if (a2.size() < s::kA2MinSize) return Truncated("A2h", a2.size(), s::kA2MinSize);
  const Sff8472Calibration cal(a2, (a0[s::kDiagType] & s::kDiagExternal) != 0);
  for (int qi = 0; qi < kQuantityCount; ++qi) {
    const Quantity q = static_cast<Quantity>(qi);
    const double value = FromRaw(q, cal.Apply(q, U16(a2, s::kMonitors + 2 * qi)));
    switch (q) {
      case Quantity::kTemperature:
        r.temperature_c = value;
        break;
      case Quantity::kSupplyVoltage:
        r.supply_voltage_v = value;
        break;
      case Quantity::kTxBias:
        r.tx_bias_ma = {value};
        break;
      case Quantity::kTxPower:
        r.tx_power_dbm = {value};
        break;
      case Quantity::kRxPower:
        r.rx_power_dbm = {value};
        break;
    }
    const int at = s::kThresholds + 8 * qi;
    r.threshold(q) = ReadThresholds([&](int l) { return U16(a2, at + 2 * l); },
                                    [&](uint16_t raw) { return FromRaw(q, cal.Apply(q, raw)); });
  }
  if (a0[s::kEnhancedOptions] & s::kAlarmFlagsImplemented) {
    for (int qi = 0; qi < kQuantityCount; ++qi) {
      const Quantity q = static_cast<Quantity>(qi);
      const s::FlagBits& bits = s::kFlagBits[qi];
      const uint8_t alarm = a2[s::kAlarmFlags + bits.byte];
      const uint8_t warning = a2[s::kWarningFlags + bits.byte];
      // One lane: its flags are the module's, without a lane suffix (as `ethtool -m` prints
      // them).
      AddLevelFlags(
          q, -1,
          [&](int l) {
            const uint8_t byte = l == m::kAlarmHigh || l == m::kAlarmLow ? alarm : warning;
            const uint8_t mask = l == m::kAlarmHigh || l == m::kWarningHigh ? bits.high : bits.low;
            return (byte & mask) != 0;
          },
          r.flags);
    }
  }
  // The state of the module's TX_FAULT and RX_LOS pins, where it has them.
  if ((a0[s::kOptions] & s::kOptionTxFault) && (a2[s::kStatus] & s::kStatusTxFault)) {
    r.flags.push_back("tx_fault");
  }
  if ((a0[s::kOptions] & s::kOptionRxLos) && (a2[s::kStatus] & s::kStatusRxLos)) {
    r.flags.push_back("rx_los");
  }
  return r;
}

// ---- SFF-8636 ---------------------------------------------------------------------------------

std::string Sff8636Media(const Bytes& p) {
  namespace s = m::sff8636;
  const uint8_t eth = p[s::kEthernetCompliance];
  if (eth & s::kEthernetExtended) {
    const uint8_t ext = p[s::kExtCompliance];
    std::string_view name = NameOfCode(m::kQsfpExtendedMedia, ext);
    return name.empty() ? absl::StrFormat("SFF-8024 extended 0x%02x", ext) : std::string(name);
  }
  for (const m::MediaBit& bit : m::kQsfpMedia) {
    if (eth & bit.mask) return std::string(bit.name);
  }
  return "";
}

absl::StatusOr<ModuleReading> DecodeSff8636(const ModuleEeprom& e, uint8_t identifier) {
  namespace s = m::sff8636;
  const Bytes& p = e.page00;
  if (p.size() < m::kPage) return Truncated("page 00h", p.size(), m::kPage);
  ModuleReading r;
  r.spec = ModuleSpec::kSff8636;
  r.form_factor = std::string(FormFactorOfIdentifier(identifier));
  r.vendor = Ascii(p, s::kVendorName, s::kVendorNameLen);
  r.part_number = Ascii(p, s::kVendorPn, s::kVendorPnLen);
  r.revision = Ascii(p, s::kVendorRev, s::kVendorRevLen);
  r.serial = Ascii(p, s::kVendorSn, s::kVendorSnLen);
  r.media = Sff8636Media(p);
  const bool copper = (p[s::kDeviceTech] >> 4) >= 0xA;
  if (!copper) {
    if (const uint16_t w = U16(p, s::kWavelength); w != 0) r.wavelength_nm = w / 20.0;
  }

  // Temperature and voltage as byte 220 says; modules older than SFF-8636 rev 2.0 leave both
  // bits clear and have both (unless they are copper).
  const uint8_t diag = p[s::kDiagType];
  const bool legacy = (diag & (s::kDiagTemperature | s::kDiagVoltage)) == 0;
  if ((diag & s::kDiagTemperature) || (legacy && !copper)) {
    r.temperature_c = Celsius(S16(p, s::kTemperature));
  }
  if ((diag & s::kDiagVoltage) || (legacy && !copper)) {
    r.supply_voltage_v = Volts(U16(p, s::kVoltage));
  }
  if (!copper) {
    for (int lane = 0; lane < s::kLanes; ++lane) {
      r.rx_power_dbm.push_back(Dbm(U16(p, s::kRxPower + 2 * lane)));
      r.tx_bias_ma.push_back(Milliamperes(U16(p, s::kTxBias + 2 * lane)));
      if (diag & s::kDiagTxPower) r.tx_power_dbm.push_back(Dbm(U16(p, s::kTxPower + 2 * lane)));
    }
  }

  // Flags: module level (bits 7-4 of bytes 6 and 7), then per lane.
  auto module_flags = [&](Quantity q, int byte) {
    AddLevelFlags(
        q, -1, [&](int l) { return (p[byte] & (0x80 >> l)) != 0; }, r.flags);
  };
  module_flags(Quantity::kTemperature, s::kTemperatureFlags);
  module_flags(Quantity::kSupplyVoltage, s::kVoltageFlags);
  auto lane_bits = [&](std::string_view name, int byte, int first_bit) {
    for (int lane = 0; lane < s::kLanes; ++lane) {
      if (p[byte] & (1 << (first_bit + lane))) r.flags.push_back(LaneFlag(name, lane));
    }
  };
  lane_bits("tx_fault", s::kFault, 0);
  lane_bits("tx_los", s::kLos, 4);
  lane_bits("tx_lol", s::kLol, 4);
  auto lane_levels = [&](Quantity q, int first_byte) {
    for (int lane = 0; lane < s::kLanes; ++lane) {
      const uint8_t nibble =
          static_cast<uint8_t>(p[first_byte + lane / 2] >> (lane % 2 == 0 ? 4 : 0));
      AddLevelFlags(
          q, lane, [&](int l) { return (nibble & (0x08 >> l)) != 0; }, r.flags);
    }
  };
  lane_levels(Quantity::kTxPower, s::kTxPowerFlags);
  lane_levels(Quantity::kTxBias, s::kTxBiasFlags);
  lane_bits("rx_los", s::kLos, 0);
  lane_bits("rx_lol", s::kLol, 0);
  lane_levels(Quantity::kRxPower, s::kRxPowerFlags);

  if (auto it = e.upper.find(0x03); it != e.upper.end()) {
    const Bytes& p3 = it->second;
    for (int qi = 0; qi < kQuantityCount; ++qi) {
      const Quantity q = static_cast<Quantity>(qi);
      const int at = s::kThresholds[qi];
      r.threshold(q) = ReadThresholds(
          [&](int l) { return UpperU16(p3, at + 2 * l); },
          [&](uint16_t raw) {
            return FromRaw(q, q == Quantity::kTemperature ? static_cast<int16_t>(raw) : raw);
          });
    }
  }
  return r;
}

// ---- CMIS -------------------------------------------------------------------------------------

std::string CmisMedia(const Bytes& p) {
  namespace c = m::cmis;
  if (p[c::kApp1HostInterface] == 0xFF) return "";
  const uint8_t type = p[c::kMediaType], code = p[c::kApp1MediaInterface];
  for (const m::CmisMedia& media : m::kCmisMedia) {
    if (media.media_type == type && media.code == code) return std::string(media.name);
  }
  if (code == 0) return "";
  return absl::StrFormat("SFF-8024 media type %d interface 0x%02x", type, code);
}

absl::StatusOr<ModuleReading> DecodeCmis(const ModuleEeprom& e, uint8_t identifier) {
  namespace c = m::cmis;
  const Bytes& p = e.page00;
  if (p.size() < m::kPage) return Truncated("page 00h", p.size(), m::kPage);
  ModuleReading r;
  r.spec = ModuleSpec::kCmis;
  r.form_factor = std::string(FormFactorOfIdentifier(identifier));
  r.vendor = Ascii(p, c::kVendorName, c::kVendorNameLen);
  r.part_number = Ascii(p, c::kVendorPn, c::kVendorPnLen);
  r.revision = Ascii(p, c::kVendorRev, c::kVendorRevLen);
  r.serial = Ascii(p, c::kVendorSn, c::kVendorSnLen);
  r.media = CmisMedia(p);

  const bool flat = (p[c::kMemoryModel] & c::kFlatMemory) != 0;
  const Bytes* p01 = nullptr;
  const Bytes* p02 = nullptr;
  const Bytes* p11 = nullptr;
  if (!flat) {
    if (auto it = e.upper.find(0x01); it != e.upper.end()) p01 = &it->second;
    if (auto it = e.upper.find(0x02); it != e.upper.end()) p02 = &it->second;
    if (auto it = e.upper.find(0x11); it != e.upper.end()) p11 = &it->second;
  }
  if (p01 != nullptr && p[c::kMediaTech] < 0x0A) {
    if (const uint16_t w = UpperU16(*p01, c::kWavelength); w != 0) r.wavelength_nm = w / 20.0;
  }

  // Module monitors. A flat-memory module (a passive cable) has none; a paged one without page
  // 01h (not read) is assumed to have both.
  if (!flat) {
    const uint8_t mon = p01 ? UpperByte(*p01, c::kModuleMonitors) : 0xFF;
    if (mon & c::kTemperatureMonitor) r.temperature_c = Celsius(S16(p, c::kTemperature));
    if (mon & c::kVoltageMonitor) r.supply_voltage_v = Volts(U16(p, c::kVoltage));
  }
  AddLevelFlags(
      Quantity::kTemperature, -1, [&](int l) { return (p[c::kModuleFlags] & (0x01 << l)) != 0; },
      r.flags);
  AddLevelFlags(
      Quantity::kSupplyVoltage, -1, [&](int l) { return (p[c::kModuleFlags] & (0x10 << l)) != 0; },
      r.flags);
  if (((p[c::kModuleState] >> 1) & 0x07) == c::kStateFault) r.flags.push_back("module_fault");

  // Lanes: application 1's media lane count (bank 0 holds 8).
  int lanes = c::kLanesPerBank;
  if (p[c::kApp1HostInterface] != 0xFF) {
    const int media_lanes = p[c::kApp1Lanes] & 0x0F;
    if (media_lanes >= 1 && media_lanes <= c::kLanesPerBank) lanes = media_lanes;
  }
  const uint8_t lane_mon = p01 ? UpperByte(*p01, c::kLaneMonitors) : 0x07;
  int bias_scale = 1;
  switch ((lane_mon & c::kBiasScaleMask) >> 3) {
    case 1:
      bias_scale = 2;
      break;
    case 2:
      bias_scale = 4;
      break;
    default:
      break;
  }
  if (p11 != nullptr) {
    const Bytes& q = *p11;
    for (int lane = 0; lane < lanes; ++lane) {
      if (lane_mon & c::kTxBiasMonitor) {
        r.tx_bias_ma.push_back(Milliamperes(UpperU16(q, c::kTxBias + 2 * lane) * bias_scale));
      }
      if (lane_mon & c::kTxPowerMonitor) {
        r.tx_power_dbm.push_back(Dbm(UpperU16(q, c::kTxPower + 2 * lane)));
      }
      if (lane_mon & c::kRxPowerMonitor) {
        r.rx_power_dbm.push_back(Dbm(UpperU16(q, c::kRxPower + 2 * lane)));
      }
    }
    auto lane_bits = [&](std::string_view name, int byte) {
      for (int lane = 0; lane < lanes; ++lane) {
        if (UpperByte(q, byte) & (1 << lane)) r.flags.push_back(LaneFlag(name, lane));
      }
    };
    auto lane_levels = [&](Quantity quantity, int first_byte) {
      for (int lane = 0; lane < lanes; ++lane) {
        AddLevelFlags(
            quantity, lane,
            [&](int l) { return (UpperByte(q, first_byte + l) & (1 << lane)) != 0; }, r.flags);
      }
    };
    lane_bits("tx_fault", c::kTxFault);
    lane_bits("tx_los", c::kTxLos);
    lane_bits("tx_lol", c::kTxLol);
    lane_bits("tx_adaptive_eq_fault", c::kTxEqFault);
    lane_levels(Quantity::kTxPower, c::kTxPowerFlags);
    lane_levels(Quantity::kTxBias, c::kTxBiasFlags);
    lane_bits("rx_los", c::kRxLos);
    lane_bits("rx_lol", c::kRxLol);
    lane_levels(Quantity::kRxPower, c::kRxPowerFlags);
  }

  if (p02 != nullptr) {
    for (int qi = 0; qi < kQuantityCount; ++qi) {
      const Quantity q = static_cast<Quantity>(qi);
      const int at = c::kThresholds[qi];
      r.threshold(q) = ReadThresholds([&](int l) { return UpperU16(*p02, at + 2 * l); },
                                      [&](uint16_t raw) {
                                        if (q == Quantity::kTemperature)
                                          return FromRaw(q, static_cast<int16_t>(raw));
                                        if (q == Quantity::kTxBias)
                                          return FromRaw(q, static_cast<double>(raw) * bias_scale);
                                        return FromRaw(q, raw);
                                      });
    }
  }
  return r;
}

}  // namespace eeprom_decode

namespace m = eeprom_map;

ModuleSpec SpecOfIdentifier(uint8_t identifier) {
  for (const m::Identifier& id : m::kIdentifiers) {
    if (id.code == identifier) return id.spec;
  }
  return ModuleSpec::kUnknown;
}

std::string_view FormFactorOfIdentifier(uint8_t identifier) {
  for (const m::Identifier& id : m::kIdentifiers) {
    if (id.code == identifier) return id.form_factor;
  }
  return {};
}

absl::StatusOr<ModuleReading> DecodeEeprom(const ModuleEeprom& eeprom) {
  if (eeprom.page00.empty()) return absl::InvalidArgumentError("page 00h: empty");
  for (const auto& [page, bytes] : eeprom.upper) {
    if (bytes.size() != m::kHalfPage) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "page %02Xh: %d bytes, expected the 128 of its upper half", page, bytes.size()));
    }
  }
  const uint8_t identifier = eeprom.page00[0];
  switch (SpecOfIdentifier(identifier)) {
    case ModuleSpec::kSff8472:
      return eeprom_decode::DecodeSff8472(eeprom, identifier);
    case ModuleSpec::kSff8636:
      return eeprom_decode::DecodeSff8636(eeprom, identifier);
    case ModuleSpec::kCmis:
      return eeprom_decode::DecodeCmis(eeprom, identifier);
    case ModuleSpec::kUnknown:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("page 00h byte 0: %s identifier 0x%02x",
                      identifier == 0 ? "unknown or unspecified" : "unsupported", identifier));
}

std::vector<PageRead> NextPageReads(const ModuleEeprom& eeprom,
                                    const std::vector<PageRead>& tried) {
  std::vector<PageRead> want;
  const std::vector<uint8_t>& p = eeprom.page00;
  if (p.empty()) {
    want.push_back({0x50, 0, 0, 128});
  } else if (p.size() == m::kHalfPage) {
    want.push_back({0x50, 0, 128, 128});
  }
  if (!p.empty()) {
    switch (SpecOfIdentifier(p[0])) {
      case ModuleSpec::kSff8472:
        if (p.size() > m::sff8472::kDiagType &&
            (p[m::sff8472::kDiagType] & m::sff8472::kDiagImplemented) && eeprom.a2.empty()) {
          want.push_back({0x51, 0, 0, 128});
        }
        break;
      case ModuleSpec::kSff8636:
        if (p.size() > m::sff8636::kStatus && !(p[m::sff8636::kStatus] & m::sff8636::kFlatMemory) &&
            !eeprom.upper.contains(0x03)) {
          want.push_back({0x50, 0x03, 128, 128});
        }
        break;
      case ModuleSpec::kCmis:
        if (p.size() > m::cmis::kMemoryModel &&
            !(p[m::cmis::kMemoryModel] & m::cmis::kFlatMemory)) {
          if (!eeprom.upper.contains(0x01)) {
            want.push_back({0x50, 0x01, 128, 128});
          } else {
            for (uint8_t page : {0x02, 0x11}) {
              if (!eeprom.upper.contains(page)) want.push_back({0x50, page, 128, 128});
            }
          }
        }
        break;
      case ModuleSpec::kUnknown:
        break;
    }
  }
  std::erase_if(want, [&](const PageRead& r) {
    return std::find(tried.begin(), tried.end(), r) != tried.end();
  });
  return want;
}

void StorePageRead(const PageRead& read, std::vector<uint8_t> data, ModuleEeprom& eeprom) {
  if (read.i2c_address == 0x51) {
    if (read.offset == 0) {
      eeprom.a2 = std::move(data);
    } else {
      eeprom.a2.resize(read.offset);
      eeprom.a2.insert(eeprom.a2.end(), data.begin(), data.end());
    }
  } else if (read.page == 0) {
    if (read.offset == 0) {
      eeprom.page00 = std::move(data);
    } else {
      eeprom.page00.resize(read.offset);
      eeprom.page00.insert(eeprom.page00.end(), data.begin(), data.end());
    }
  } else {
    eeprom.upper[read.page] = std::move(data);
  }
}

}  // namespace railwatch::optics
