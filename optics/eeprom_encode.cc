#include "optics/eeprom_encode.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/labels.h"
#include "optics/eeprom_map.h"

namespace railwatch::optics {
// Named, not anonymous: the unity build may put other optics files in the same unit.
namespace eeprom_encode {

namespace m = eeprom_map;
using Bytes = std::vector<uint8_t>;

void PutU16(Bytes& b, int offset, uint16_t v) {
  b[offset] = static_cast<uint8_t>(v >> 8);
  b[offset + 1] = static_cast<uint8_t>(v & 0xFF);
}
// An upper page stored as its bytes 128-255, addressed by the spec's offset.
void PutUpper(Bytes& page, int offset, uint8_t v) { page[offset - m::kHalfPage] = v; }
void PutUpperU16(Bytes& page, int offset, uint16_t v) {
  PutUpper(page, offset, static_cast<uint8_t>(v >> 8));
  PutUpper(page, offset + 1, static_cast<uint8_t>(v & 0xFF));
}

uint16_t ClampU16(double v) {
  return static_cast<uint16_t>(std::clamp(std::round(v), 0.0, 65535.0));
}
uint16_t RawCelsius(double c) {
  return static_cast<uint16_t>(
      static_cast<int16_t>(std::clamp(std::round(c * 256.0), -32768.0, 32767.0)));
}
uint16_t RawVolts(double v) { return ClampU16(v * 10000.0); }
// `scale`: the CMIS bias multiplier (raw units are 2 µA x scale).
uint16_t RawMilliamperes(double ma, int scale = 1) { return ClampU16(ma * 500.0 / scale); }
uint16_t RawDbm(double dbm) {
  if (dbm <= -40.0) return 0;  // no light, as the decoder reads 0
  return ClampU16(std::pow(10.0, dbm / 10.0) * 10000.0);
}
uint16_t ToRaw(Quantity q, double v, int bias_scale = 1) {
  switch (q) {
    case Quantity::kTemperature:
      return RawCelsius(v);
    case Quantity::kSupplyVoltage:
      return RawVolts(v);
    case Quantity::kTxBias:
      return RawMilliamperes(v, bias_scale);
    case Quantity::kTxPower:
    case Quantity::kRxPower:
      return RawDbm(v);
  }
  return 0;
}

absl::Status PutAscii(Bytes& b, int offset, int length, const std::string& text,
                      std::string_view field) {
  if (static_cast<int>(text.size()) > length) {
    return absl::InvalidArgumentError(absl::StrCat(
        AsAbsl(field), " \"", text, "\" is longer than its ", length, "-character field"));
  }
  for (int i = 0; i < length; ++i) {
    b[offset + i] = i < static_cast<int>(text.size()) ? static_cast<uint8_t>(text[i]) : ' ';
  }
  return absl::OkStatus();
}

uint8_t Checksum(const Bytes& b, int from, int to) {  // sum of bytes [from, to], low 8 bits
  unsigned sum = 0;
  for (int i = from; i <= to; ++i) sum += b[i];
  return static_cast<uint8_t>(sum & 0xFF);
}

uint8_t IdentifierFor(const ModuleReading& r, uint8_t fallback, absl::Status& status) {
  if (r.form_factor.empty()) return fallback;
  for (const m::Identifier& id : m::kIdentifiers) {
    if (id.form_factor == r.form_factor && id.spec == r.spec) return id.code;
  }
  status = absl::InvalidArgumentError(absl::StrCat(
      "form factor \"", r.form_factor, "\" is not one of ", AsAbsl(ModuleSpecName(r.spec))));
  return fallback;
}

// The reading's flags, parsed: module-level names, and per-lane names with their lanes.
struct ParsedFlags {
  std::vector<std::string> module;
  std::vector<std::pair<std::string, int>> lanes;  // (name, lane index from 0)
  bool Has(std::string_view name) const {
    return std::find(module.begin(), module.end(), name) != module.end();
  }
  bool Has(std::string_view name, int lane) const {
    for (const auto& [n, l] : lanes) {
      if (n == name && l == lane) return true;
    }
    return false;
  }
};

// Every flag must be one `known` (module-level) or `known_lane` (per lane, up to `max_lanes`)
// holds.
absl::StatusOr<ParsedFlags> ParseFlags(const ModuleReading& r,
                                       const std::vector<std::string>& known,
                                       const std::vector<std::string>& known_lane, int max_lanes) {
  ParsedFlags out;
  for (const std::string& flag : r.flags) {
    const size_t colon = flag.find(":lane");
    if (colon == std::string::npos) {
      if (std::find(known.begin(), known.end(), flag) == known.end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "flag \"", flag, "\" is not a module-level flag of ", AsAbsl(ModuleSpecName(r.spec))));
      }
      out.module.push_back(flag);
      continue;
    }
    const std::string name = flag.substr(0, colon);
    int lane = 0;
    if (!absl::SimpleAtoi(flag.substr(colon + 5), &lane) || lane < 1 || lane > max_lanes) {
      return absl::InvalidArgumentError(absl::StrCat("flag \"", flag, "\": lane must be 1-",
                                                     max_lanes, " for ",
                                                     AsAbsl(ModuleSpecName(r.spec))));
    }
    if (std::find(known_lane.begin(), known_lane.end(), name) == known_lane.end()) {
      return absl::InvalidArgumentError(absl::StrCat("flag \"", flag, "\" is not a lane flag of ",
                                                     AsAbsl(ModuleSpecName(r.spec))));
    }
    out.lanes.emplace_back(name, lane - 1);
  }
  return out;
}

std::vector<std::string> LevelFlagNames(std::initializer_list<Quantity> qs) {
  std::vector<std::string> out;
  for (Quantity q : qs) {
    for (std::string_view suffix : m::kLevelSuffix) {
      out.push_back(absl::StrCat(AsAbsl(m::kFlagQuantity[static_cast<int>(q)]), AsAbsl(suffix)));
    }
  }
  return out;
}
std::string LevelFlag(Quantity q, int level) {
  return absl::StrCat(AsAbsl(m::kFlagQuantity[static_cast<int>(q)]),
                      AsAbsl(m::kLevelSuffix[level]));
}

int LaneCount(const ModuleReading& r) {
  return static_cast<int>(
      std::max({r.tx_bias_ma.size(), r.tx_power_dbm.size(), r.rx_power_dbm.size()}));
}
double LaneValue(const std::vector<std::optional<double>>& v, int lane, double absent) {
  return lane < static_cast<int>(v.size()) && v[lane].has_value() ? *v[lane] : absent;
}
double ThresholdValue(const Thresholds& t, int level) {
  const std::optional<double>* v = nullptr;
  switch (level) {
    case m::kAlarmHigh:
      v = &t.alarm_high;
      break;
    case m::kAlarmLow:
      v = &t.alarm_low;
      break;
    case m::kWarningHigh:
      v = &t.warning_high;
      break;
    default:
      v = &t.warning_low;
      break;
  }
  return v->value_or(0.0);
}

// ---- SFF-8472 ---------------------------------------------------------------------------------

absl::StatusOr<ModuleEeprom> EncodeSff8472(const ModuleReading& r) {
  namespace s = m::sff8472;
  if (LaneCount(r) > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("SFF-8472 has one lane; the reading has ", LaneCount(r)));
  }
  absl::Status status;
  ModuleEeprom e;
  Bytes& a0 = e.page00;
  a0.assign(m::kPage, 0);
  a0[s::kIdentifier] = IdentifierFor(r, 0x03, status);
  a0[1] = 0x04;              // extended identifier: defined by the 2-wire interface ID
  a0[s::kConnector] = 0x07;  // LC
  if (!status.ok()) return status;
  if (!r.media.empty()) {
    bool found = false;
    for (const m::MediaCode& c : m::kSfpExtendedMedia) {
      if (c.name == r.media) {
        a0[s::kExtCompliance] = c.code;
        found = true;
        break;
      }
    }
    for (const m::MediaBit& bit : m::kSfp10GMedia) {
      if (!found && bit.name == r.media) {
        a0[s::kEthernet10G] = bit.mask;
        found = true;
      }
    }
    for (const m::MediaBit& bit : m::kSfp1GMedia) {
      if (!found && bit.name == r.media) {
        a0[s::kEthernet1G] = bit.mask;
        found = true;
      }
    }
    if (!found) {
      return absl::InvalidArgumentError(
          absl::StrCat("media \"", r.media, "\" has no SFF-8472 code"));
    }
  }
  for (const auto& [text, at, len, field] :
       {std::tuple{&r.vendor, s::kVendorName, s::kVendorNameLen, "vendor"},
        std::tuple{&r.part_number, s::kVendorPn, s::kVendorPnLen, "part number"},
        std::tuple{&r.revision, s::kVendorRev, s::kVendorRevLen, "revision"},
        std::tuple{&r.serial, s::kVendorSn, s::kVendorSnLen, "serial"}}) {
    if (absl::Status st = PutAscii(a0, at, len, *text, field); !st.ok()) return st;
  }
  if (absl::Status st = PutAscii(a0, s::kDateCode, s::kDateCodeLen, "240101", "date"); !st.ok()) {
    return st;
  }
  if (r.wavelength_nm) PutU16(a0, s::kWavelength, ClampU16(*r.wavelength_nm));
  a0[s::kOptions] = s::kOptionTxFault | s::kOptionRxLos;
  a0[s::kCompliance] = 0x08;  // SFF-8472 rev 12.3 and later
  const bool dom = r.has_diagnostics();
  if (dom) {
    a0[s::kDiagType] = s::kDiagImplemented | s::kDiagInternal | s::kDiagRxAverage;
    a0[s::kEnhancedOptions] = s::kAlarmFlagsImplemented;
  }
  a0[s::kCcBase] = Checksum(a0, 0, s::kCcBase - 1);
  a0[s::kCcExt] = Checksum(a0, 64, s::kCcExt - 1);
  if (!dom) return e;

  // One lane: every flag is the module's ("rx_los"); "rx_los:lane1" is taken as the same.
  std::vector<std::string> names =
      LevelFlagNames({Quantity::kTemperature, Quantity::kSupplyVoltage, Quantity::kTxBias,
                      Quantity::kTxPower, Quantity::kRxPower});
  names.push_back("tx_fault");
  names.push_back("rx_los");
  absl::StatusOr<ParsedFlags> flags = ParseFlags(r, names, names, 1);
  if (!flags.ok()) return flags.status();

  Bytes& a2 = e.a2;
  a2.assign(m::kPage, 0);
  for (int qi = 0; qi < kQuantityCount; ++qi) {
    const Quantity q = static_cast<Quantity>(qi);
    const Thresholds& t = r.threshold(q);
    if (!t.empty()) {
      for (int l = 0; l < m::kLevels; ++l) {
        PutU16(a2, s::kThresholds + 8 * qi + 2 * l, ToRaw(q, ThresholdValue(t, l)));
      }
    }
  }
  // Internally calibrated: the external constants say "as read" (slopes 1.0, offsets 0, Rx
  // power R1 = 1.0) for tools that apply them anyway.
  for (int slope : {s::kBiasSlope, s::kTxPowerSlope, s::kTemperatureSlope, s::kVoltageSlope}) {
    a2[slope] = 1;
  }
  a2[s::kRxPowerCal1] = 0x3F;  // 1.0f, big-endian
  a2[s::kRxPowerCal1 + 1] = 0x80;
  PutU16(a2, s::kMonitors + 0, RawCelsius(r.temperature_c.value_or(0.0)));
  PutU16(a2, s::kMonitors + 2, RawVolts(r.supply_voltage_v.value_or(0.0)));
  PutU16(a2, s::kMonitors + 4, RawMilliamperes(LaneValue(r.tx_bias_ma, 0, 0.0)));
  PutU16(a2, s::kMonitors + 6, RawDbm(LaneValue(r.tx_power_dbm, 0, -40.0)));
  PutU16(a2, s::kMonitors + 8, RawDbm(LaneValue(r.rx_power_dbm, 0, -40.0)));
  auto has = [&](const std::string& name) { return flags->Has(name) || flags->Has(name, 0); };
  if (has("tx_fault")) a2[s::kStatus] |= s::kStatusTxFault;
  if (has("rx_los")) a2[s::kStatus] |= s::kStatusRxLos;
  for (int qi = 0; qi < kQuantityCount; ++qi) {
    const Quantity q = static_cast<Quantity>(qi);
    const s::FlagBits& bits = s::kFlagBits[qi];
    for (int l = 0; l < m::kLevels; ++l) {
      if (!has(LevelFlag(q, l))) continue;
      const int base = l == m::kAlarmHigh || l == m::kAlarmLow ? s::kAlarmFlags : s::kWarningFlags;
      a2[base + bits.byte] |= l == m::kAlarmHigh || l == m::kWarningHigh ? bits.high : bits.low;
    }
  }
  a2[s::kA2Checksum] = Checksum(a2, 0, s::kA2Checksum - 1);
  return e;
}

// ---- SFF-8636 ---------------------------------------------------------------------------------

absl::StatusOr<ModuleEeprom> EncodeSff8636(const ModuleReading& r) {
  namespace s = m::sff8636;
  if (LaneCount(r) > s::kLanes) {
    return absl::InvalidArgumentError(
        absl::StrCat("SFF-8636 has 4 lanes; the reading has ", LaneCount(r)));
  }
  absl::StatusOr<ParsedFlags> flags = ParseFlags(
      r, LevelFlagNames({Quantity::kTemperature, Quantity::kSupplyVoltage}),
      [] {
        std::vector<std::string> lane =
            LevelFlagNames({Quantity::kTxBias, Quantity::kTxPower, Quantity::kRxPower});
        for (const char* f : {"tx_fault", "tx_los", "tx_lol", "rx_los", "rx_lol"}) {
          lane.push_back(f);
        }
        return lane;
      }(),
      s::kLanes);
  if (!flags.ok()) return flags.status();
  absl::Status status;
  ModuleEeprom e;
  Bytes& p = e.page00;
  p.assign(m::kPage, 0);
  p[s::kIdentifier] = IdentifierFor(r, 0x11, status);
  if (!status.ok()) return status;
  p[s::kUpperIdentifier] = p[s::kIdentifier];
  p[s::kRevision] = 0x08;   // SFF-8636 rev 2.10a
  p[s::kConnector] = 0x0C;  // MPO 1x12
  if (!r.media.empty()) {
    bool found = false;
    for (const m::MediaCode& c : m::kQsfpExtendedMedia) {
      if (c.name == r.media) {
        p[s::kEthernetCompliance] = s::kEthernetExtended;
        p[s::kExtCompliance] = c.code;
        found = true;
        break;
      }
    }
    for (const m::MediaBit& bit : m::kQsfpMedia) {
      if (!found && bit.name == r.media) {
        p[s::kEthernetCompliance] = bit.mask;
        found = true;
      }
    }
    if (!found) {
      return absl::InvalidArgumentError(
          absl::StrCat("media \"", r.media, "\" has no SFF-8636 code"));
    }
  }
  for (const auto& [text, at, len, field] :
       {std::tuple{&r.vendor, s::kVendorName, s::kVendorNameLen, "vendor"},
        std::tuple{&r.part_number, s::kVendorPn, s::kVendorPnLen, "part number"},
        std::tuple{&r.revision, s::kVendorRev, s::kVendorRevLen, "revision"},
        std::tuple{&r.serial, s::kVendorSn, s::kVendorSnLen, "serial"}}) {
    if (absl::Status st = PutAscii(p, at, len, *text, field); !st.ok()) return st;
  }
  if (absl::Status st = PutAscii(p, s::kDateCode, s::kDateCodeLen, "240101", "date"); !st.ok()) {
    return st;
  }
  const int lanes = LaneCount(r);
  if (r.wavelength_nm) {
    p[s::kDeviceTech] = *r.wavelength_nm < 1000 ? 0x00 : 0x40;  // 850 nm VCSEL, 1310 nm DFB
    PutU16(p, s::kWavelength, ClampU16(*r.wavelength_nm * 20.0));
  } else {
    p[s::kDeviceTech] = lanes > 0 ? 0x80 : 0xA0;  // others (optical), copper unequalized
  }
  uint8_t diag = s::kDiagRxAverage;
  if (r.temperature_c) diag |= s::kDiagTemperature;
  if (r.supply_voltage_v) diag |= s::kDiagVoltage;
  if (!r.tx_power_dbm.empty()) diag |= s::kDiagTxPower;
  p[s::kDiagType] = diag;
  p[s::kCcBase] = Checksum(p, 128, s::kCcBase - 1);
  p[s::kCcExt] = Checksum(p, 192, s::kCcExt - 1);

  PutU16(p, s::kTemperature, RawCelsius(r.temperature_c.value_or(0.0)));
  PutU16(p, s::kVoltage, RawVolts(r.supply_voltage_v.value_or(0.0)));
  for (int lane = 0; lane < lanes; ++lane) {
    PutU16(p, s::kRxPower + 2 * lane, RawDbm(LaneValue(r.rx_power_dbm, lane, -40.0)));
    PutU16(p, s::kTxBias + 2 * lane, RawMilliamperes(LaneValue(r.tx_bias_ma, lane, 0.0)));
    PutU16(p, s::kTxPower + 2 * lane, RawDbm(LaneValue(r.tx_power_dbm, lane, -40.0)));
  }
  for (int l = 0; l < m::kLevels; ++l) {
    if (flags->Has(LevelFlag(Quantity::kTemperature, l))) p[s::kTemperatureFlags] |= 0x80 >> l;
    if (flags->Has(LevelFlag(Quantity::kSupplyVoltage, l))) p[s::kVoltageFlags] |= 0x80 >> l;
  }
  for (int lane = 0; lane < s::kLanes; ++lane) {
    if (flags->Has("rx_los", lane)) p[s::kLos] |= 1 << lane;
    if (flags->Has("tx_los", lane)) p[s::kLos] |= 1 << (4 + lane);
    if (flags->Has("tx_fault", lane)) p[s::kFault] |= 1 << lane;
    if (flags->Has("rx_lol", lane)) p[s::kLol] |= 1 << lane;
    if (flags->Has("tx_lol", lane)) p[s::kLol] |= 1 << (4 + lane);
    for (auto [q, first] : {std::pair{Quantity::kRxPower, s::kRxPowerFlags},
                            std::pair{Quantity::kTxBias, s::kTxBiasFlags},
                            std::pair{Quantity::kTxPower, s::kTxPowerFlags}}) {
      for (int l = 0; l < m::kLevels; ++l) {
        if (!flags->Has(LevelFlag(q, l), lane)) continue;
        p[first + lane / 2] |= static_cast<uint8_t>((0x08 >> l) << (lane % 2 == 0 ? 4 : 0));
      }
    }
  }

  Bytes& p3 = e.upper[0x03];
  p3.assign(m::kHalfPage, 0);
  for (int qi = 0; qi < kQuantityCount; ++qi) {
    const Quantity q = static_cast<Quantity>(qi);
    const Thresholds& t = r.threshold(q);
    if (t.empty()) continue;
    for (int l = 0; l < m::kLevels; ++l) {
      PutUpperU16(p3, s::kThresholds[qi] + 2 * l, ToRaw(q, ThresholdValue(t, l)));
    }
  }
  return e;
}

// ---- CMIS -------------------------------------------------------------------------------------

absl::StatusOr<ModuleEeprom> EncodeCmis(const ModuleReading& r) {
  namespace c = m::cmis;
  const int lanes = LaneCount(r);
  if (lanes > c::kLanesPerBank) {
    return absl::InvalidArgumentError(
        absl::StrCat("CMIS bank 0 has 8 lanes; the reading has ", lanes));
  }
  absl::StatusOr<ParsedFlags> flags = ParseFlags(
      r,
      [] {
        std::vector<std::string> module =
            LevelFlagNames({Quantity::kTemperature, Quantity::kSupplyVoltage});
        module.push_back("module_fault");
        return module;
      }(),
      [] {
        std::vector<std::string> lane =
            LevelFlagNames({Quantity::kTxBias, Quantity::kTxPower, Quantity::kRxPower});
        for (const char* f :
             {"tx_fault", "tx_los", "tx_lol", "tx_adaptive_eq_fault", "rx_los", "rx_lol"}) {
          lane.push_back(f);
        }
        return lane;
      }(),
      c::kLanesPerBank);
  if (!flags.ok()) return flags.status();
  absl::Status status;
  ModuleEeprom e;
  Bytes& p = e.page00;
  p.assign(m::kPage, 0);
  p[c::kIdentifier] = IdentifierFor(r, 0x19, status);
  if (!status.ok()) return status;
  p[c::kUpperIdentifier] = p[c::kIdentifier];
  p[c::kRevision] = 0x50;  // CMIS 5.0
  p[c::kModuleState] =
      static_cast<uint8_t>((flags->Has("module_fault") ? c::kStateFault : c::kStateReady) << 1);
  for (int l = 0; l < m::kLevels; ++l) {
    if (flags->Has(LevelFlag(Quantity::kTemperature, l))) p[c::kModuleFlags] |= 0x01 << l;
    if (flags->Has(LevelFlag(Quantity::kSupplyVoltage, l))) p[c::kModuleFlags] |= 0x10 << l;
  }
  PutU16(p, c::kTemperature, RawCelsius(r.temperature_c.value_or(0.0)));
  PutU16(p, c::kVoltage, RawVolts(r.supply_voltage_v.value_or(0.0)));
  // Application 1 (the only one): the media, `lanes` lanes on both sides; the rest unused.
  for (int app = 0; app < 8; ++app) p[c::kApp1HostInterface + 4 * app] = 0xFF;
  if (!r.media.empty() || lanes > 0) {
    const m::CmisMedia* media = nullptr;
    for (const m::CmisMedia& candidate : m::kCmisMedia) {
      if (candidate.name == r.media) {
        media = &candidate;
        break;
      }
    }
    if (media == nullptr && !r.media.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("media \"", r.media, "\" has no CMIS code"));
    }
    p[c::kMediaType] = media ? media->media_type : 0;
    p[c::kApp1HostInterface] = 0x00;  // undefined: railwatch does not read it
    p[c::kApp1MediaInterface] = media ? media->code : 0;
    const int count = std::max(lanes, 1);
    p[c::kApp1Lanes] = static_cast<uint8_t>((count << 4) | count);
    p[c::kApp1HostAssignment] = 0x01;
  }
  for (const auto& [text, at, len, field] :
       {std::tuple{&r.vendor, c::kVendorName, c::kVendorNameLen, "vendor"},
        std::tuple{&r.part_number, c::kVendorPn, c::kVendorPnLen, "part number"},
        std::tuple{&r.revision, c::kVendorRev, c::kVendorRevLen, "revision"},
        std::tuple{&r.serial, c::kVendorSn, c::kVendorSnLen, "serial"}}) {
    if (absl::Status st = PutAscii(p, at, len, *text, field); !st.ok()) return st;
  }
  if (absl::Status st = PutAscii(p, c::kDateCode, c::kDateCodeLen, "240101  ", "date"); !st.ok()) {
    return st;
  }
  p[c::kConnector] = 0x0C;  // MPO 1x12
  if (r.wavelength_nm) {
    p[c::kMediaTech] = *r.wavelength_nm < 1000 ? 0x00 : 0x04;  // 850 nm VCSEL, 1310 nm DFB
  } else {
    p[c::kMediaTech] = lanes > 0 ? 0x08 : 0x0A;  // others (optical), copper unequalized
  }
  p[c::kPage00Checksum] = Checksum(p, 128, c::kPage00Checksum - 1);

  // The bias multiplier: x1 unless a bias (or its limit) exceeds what 16 bits of 2 µA hold.
  double max_bias = 0;
  for (const std::optional<double>& b : r.tx_bias_ma) max_bias = std::max(max_bias, b.value_or(0));
  const Thresholds& bias_limits = r.threshold(Quantity::kTxBias);
  for (int l = 0; l < m::kLevels; ++l)
    max_bias = std::max(max_bias, ThresholdValue(bias_limits, l));
  const int scale = max_bias <= 131.07 ? 1 : max_bias <= 262.14 ? 2 : 4;

  Bytes& p01 = e.upper[0x01];
  p01.assign(m::kHalfPage, 0);
  if (r.wavelength_nm) PutUpperU16(p01, c::kWavelength, ClampU16(*r.wavelength_nm * 20.0));
  PutUpper(p01, c::kCharacteristics, c::kRxPowerAverage);
  PutUpper(p01, c::kModuleMonitors,
           static_cast<uint8_t>((r.temperature_c ? c::kTemperatureMonitor : 0) |
                                (r.supply_voltage_v ? c::kVoltageMonitor : 0)));
  PutUpper(p01, c::kLaneMonitors,
           static_cast<uint8_t>((r.tx_bias_ma.empty() ? 0 : c::kTxBiasMonitor) |
                                (r.tx_power_dbm.empty() ? 0 : c::kTxPowerMonitor) |
                                (r.rx_power_dbm.empty() ? 0 : c::kRxPowerMonitor) |
                                (scale == 1   ? 0
                                 : scale == 2 ? 0x08
                                              : 0x10)));
  PutUpper(p01, c::kPage01Checksum, Checksum(p01, 130 - 128, c::kPage01Checksum - 1 - 128));

  Bytes& p02 = e.upper[0x02];
  p02.assign(m::kHalfPage, 0);
  for (int qi = 0; qi < kQuantityCount; ++qi) {
    const Quantity q = static_cast<Quantity>(qi);
    const Thresholds& t = r.threshold(q);
    if (t.empty()) continue;
    for (int l = 0; l < m::kLevels; ++l) {
      PutUpperU16(p02, c::kThresholds[qi] + 2 * l, ToRaw(q, ThresholdValue(t, l), scale));
    }
  }
  PutUpper(p02, c::kPage02Checksum, Checksum(p02, 0, c::kPage02Checksum - 1 - 128));

  Bytes& p11 = e.upper[0x11];
  p11.assign(m::kHalfPage, 0);
  for (int lane = 0; lane < lanes; ++lane) {
    PutUpperU16(p11, c::kTxPower + 2 * lane, RawDbm(LaneValue(r.tx_power_dbm, lane, -40.0)));
    PutUpperU16(p11, c::kTxBias + 2 * lane,
                RawMilliamperes(LaneValue(r.tx_bias_ma, lane, 0.0), scale));
    PutUpperU16(p11, c::kRxPower + 2 * lane, RawDbm(LaneValue(r.rx_power_dbm, lane, -40.0)));
  }
  const uint8_t bit = 1;
  for (const auto& [name, lane] : flags->lanes) {
    for (auto [flag, byte] :
         {std::pair{"tx_fault", c::kTxFault}, std::pair{"tx_los", c::kTxLos},
          std::pair{"tx_lol", c::kTxLol}, std::pair{"tx_adaptive_eq_fault", c::kTxEqFault},
          std::pair{"rx_los", c::kRxLos}, std::pair{"rx_lol", c::kRxLol}}) {
      if (name == flag) p11[byte - m::kHalfPage] |= static_cast<uint8_t>(bit << lane);
    }
    for (auto [q, first] : {std::pair{Quantity::kTxPower, c::kTxPowerFlags},
                            std::pair{Quantity::kTxBias, c::kTxBiasFlags},
                            std::pair{Quantity::kRxPower, c::kRxPowerFlags}}) {
      for (int l = 0; l < m::kLevels; ++l) {
        if (name == LevelFlag(q, l)) {
          p11[first + l - m::kHalfPage] |= static_cast<uint8_t>(bit << lane);
        }
      }
    }
  }
  return e;
}

}  // namespace eeprom_encode

absl::StatusOr<ModuleEeprom> EncodeEeprom(const ModuleReading& reading) {
  switch (reading.spec) {
    case ModuleSpec::kSff8472:
      return eeprom_encode::EncodeSff8472(reading);
    case ModuleSpec::kSff8636:
      return eeprom_encode::EncodeSff8636(reading);
    case ModuleSpec::kCmis:
      return eeprom_encode::EncodeCmis(reading);
    case ModuleSpec::kUnknown:
      break;
  }
  return absl::InvalidArgumentError("reading has no spec (SFF-8472, SFF-8636 or CMIS) to encode");
}

}  // namespace railwatch::optics
