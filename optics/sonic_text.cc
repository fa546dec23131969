#include "optics/sonic_text.h"

#include <cctype>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "optics/ethtool_text.h"
#include "optics/reader_util.h"

namespace railwatch::optics::reader {
// Named, not anonymous: the unity build puts the readers in one unit.
namespace sonic_impl {

// "RX3Power" -> ("RX", 3, "Power"); "RXPower" -> lane 1.
bool ChannelKey(std::string_view key, std::string_view prefix, std::string_view suffix, int* lane) {
  if (!StartsWith(key, prefix) || !EndsWith(key, suffix) ||
      key.size() < prefix.size() + suffix.size()) {
    return false;
  }
  const std::string_view number =
      key.substr(prefix.size(), key.size() - prefix.size() - suffix.size());
  if (number.empty()) {
    *lane = 1;
    return true;
  }
  uint64_t n = 0;
  if (!ParseCount(number, &n) || n == 0 || n > 64 || number.find(',') != std::string_view::npos) {
    return false;
  }
  *lane = static_cast<int>(n);
  return true;
}

// "400GAUI-8 C2M (Annex 120E) - Host Assign (0x1) - 400GBASE-DR4 (Cl 124) - Media Assign (0x1)"
// -> "400GBASE-DR4".
std::string MediaOfApplication(std::string_view app) {
  std::vector<std::string_view> parts;
  size_t at = 0;
  while (true) {
    const size_t dash = app.find(" - ", at);
    parts.push_back(Trim(app.substr(at, dash == std::string_view::npos ? dash : dash - at)));
    if (dash == std::string_view::npos) break;
    at = dash + 3;
  }
  if (parts.size() < 3) return "";
  std::string_view media = parts[2];
  if (const size_t paren = media.find(" ("); paren != std::string_view::npos) {
    media = media.substr(0, paren);
  }
  return std::string(Trim(media));
}

// "RxPowerHighAlarm", "TempLowWarning", "VccHighAlarm", "TxBiasLowWarning".
bool ThresholdKey(std::string_view key, std::string_view* quantity, bool* high, bool* alarm) {
  struct Prefix {
    std::string_view prefix, quantity;
  };
  static constexpr Prefix kPrefixes[] = {{"RxPower", "rx_power"},
                                         {"TxPower", "tx_power"},
                                         {"TxBias", "tx_bias"},
                                         {"Temp", "temperature"},
                                         {"Vcc", "voltage"}};
  for (const Prefix& p : kPrefixes) {
    if (!StartsWith(key, p.prefix)) continue;
    const std::string_view rest = key.substr(p.prefix.size());
    if (rest == "HighAlarm" || rest == "HighWarning" || rest == "LowAlarm" ||
        rest == "LowWarning") {
      *quantity = p.quantity;
      *high = StartsWith(rest, "High");
      *alarm = EndsWith(rest, "Alarm");
      return true;
    }
  }
  return false;
}

bool ParseSonicQuantity(std::string_view quantity, std::string_view text, double* v) {
  if (quantity == "temperature") return ParseTemperatureC(text, v);
  if (quantity == "voltage") return ParseVolts(text, v);
  if (quantity == "tx_bias") return ParseMilliamps(text, v);
  return ParseDbm(text, v);
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// "Rx loss of signal flag on media lane 3" -> ("rx loss of signal flag", 3).
std::string WithoutLane(std::string_view key, int* lane) {
  std::string k = Lower(key);
  *lane = 0;
  for (std::string_view marker :
       {" on media lane ", " on host lane ", " on lane ", " of host line "}) {
    const size_t at = k.rfind(marker);
    if (at == std::string::npos) continue;
    uint64_t n = 0;
    if (ParseCount(std::string_view(k).substr(at + marker.size()), &n) && n > 0 && n <= 64) {
      *lane = static_cast<int>(n);
      return k.substr(0, at);
    }
  }
  return k;
}

// What a status line's flag is called in ModuleReading::flags; "" when it is not a flag.
std::string StatusFlag(std::string_view base) {
  struct Name {
    std::string_view text, flag;
  };
  static constexpr Name kNames[] = {
      {"rx loss of signal flag", "rx_los"},
      {"tx loss of signal flag", "tx_los"},
      {"tx fault flag", "tx_fault"},
      {"rx clock and data recovery loss of lock", "rx_lol"},
      {"tx clock and data recovery loss of lock", "tx_lol"},
      {"rx cdr loss of lock flag", "rx_lol"},
      {"tx cdr loss of lock flag", "tx_lol"},
      {"tx adaptive eq fault flag", "tx_adaptive_eq_fault"},
      {"tx disable status", "tx_disabled"},
      {"module firmware fault", "module_fw_fault"},
      {"datapath firmware fault", "datapath_fw_fault"},
  };
  for (const Name& n : kNames) {
    if (base == n.text) return std::string(n.flag);
  }
  // "temperature high alarm flag", "vcc low warning flag", "tx power high alarm flag",
  // "rx power low warning flag", "tx bias high alarm flag".
  struct Quantity {
    std::string_view text, quantity;
  };
  static constexpr Quantity kQuantities[] = {
      {"temperature", "temperature"}, {"vcc", "voltage"},
      {"tx power", "tx_power"},       {"rx power", "rx_power"},
      {"tx bias", "tx_bias"},         {"laser temperature", "laser_temperature"}};
  for (const Quantity& q : kQuantities) {
    if (!StartsWith(base, q.text) || base.size() <= q.text.size() + 1) continue;
    std::string_view rest = base.substr(q.text.size() + 1);
    if (!EndsWith(rest, " flag")) continue;
    rest = rest.substr(0, rest.size() - 5);
    if (rest == "high alarm" || rest == "high warning" || rest == "low alarm" ||
        rest == "low warning") {
      return FlagName(q.quantity, StartsWith(rest, "high"), EndsWith(rest, "alarm"));
    }
  }
  return "";
}

}  // namespace sonic_impl

void BuildSonicEeprom(ToolReading& r, std::vector<ToolProblem>& problems) {
  using namespace sonic_impl;  // NOLINT(build/namespaces)
  ModuleReading m;
  bool first_application = true;
  for (const ToolField& f : r.fields) {
    const std::string& k = f.key;
    std::string_view v = f.value;
    if (f.section.empty()) {
      if (IsNotAvailable(v)) continue;
      if (k == "Identifier") {
        m.form_factor = FormFactorOf(v);
        m.spec = SpecOf(m.form_factor, v);
      } else if (k == "CMIS Rev") {
        m.spec = ModuleSpec::kCmis;
      } else if (k == "Vendor Name") {
        m.vendor = std::string(v);
      } else if (k == "Vendor PN") {
        m.part_number = std::string(v);
      } else if (k == "Vendor SN") {
        m.serial = std::string(v);
      } else if (k == "Vendor Rev") {
        m.revision = std::string(v);
      } else if (k == "Application Advertisement" && first_application) {
        first_application = false;
        m.media = MediaOfApplication(v);
      } else if (k == "Wavelength" || k == "Laser wavelength") {
        double nm = 0;
        if (LeadingNumber(v, &nm, nullptr) && nm > 0) m.wavelength_nm = nm;
      }
      continue;
    }
    if (f.section == "Specification compliance") {
      if (m.media.empty() && !IsNotAvailable(v) && k.find("Ethernet") != std::string::npos) {
        m.media = std::string(v);
      }
      continue;
    }
    if (IsNotAvailable(v)) continue;
    if (f.section == "ChannelMonitorValues") {
      int lane = 0;
      std::vector<std::optional<double>>* lanes = nullptr;
      std::string_view quantity;
      if (ChannelKey(k, "RX", "Power", &lane)) {
        lanes = &m.rx_power_dbm, quantity = "rx_power";
      } else if (ChannelKey(k, "TX", "Power", &lane)) {
        lanes = &m.tx_power_dbm, quantity = "tx_power";
      } else if (ChannelKey(k, "TX", "Bias", &lane)) {
        lanes = &m.tx_bias_ma, quantity = "tx_bias";
      } else {
        continue;
      }
      double value = 0;
      if (!ParseSonicQuantity(quantity, v, &value)) {
        AddProblem(problems, f, NotANumber(f, "a reading SONiC prints"));
        continue;
      }
      SetLane(*lanes, lane, value);
    } else if (f.section == "ModuleMonitorValues") {
      double value = 0;
      if (k == "Temperature") {
        if (ParseTemperatureC(v, &value)) {
          m.temperature_c = value;
        } else {
          AddProblem(problems, f, NotANumber(f, "a temperature"));
        }
      } else if (k == "Vcc") {
        if (ParseVolts(v, &value)) {
          m.supply_voltage_v = value;
        } else {
          AddProblem(problems, f, NotANumber(f, "a voltage"));
        }
      }
    } else if (f.section == "ChannelThresholdValues" || f.section == "ModuleThresholdValues") {
      std::string_view quantity;
      bool high = false, alarm = false;
      if (!ThresholdKey(k, &quantity, &high, &alarm)) continue;
      double value = 0;
      if (!ParseSonicQuantity(quantity, v, &value)) {
        AddProblem(problems, f, NotANumber(f, "a threshold SONiC prints"));
        continue;
      }
      SetThreshold(*ThresholdsFor(m, quantity), high, alarm, value);
    }
  }
  r.module = std::move(m);
}

void BuildSonicStatus(ToolReading& r, std::vector<ToolProblem>& problems) {
  using namespace sonic_impl;  // NOLINT(build/namespaces)
  ModuleReading m;
  for (const ToolField& f : r.fields) {
    if (f.key == "CMIS State (SW)" || (f.key == "Current module state" && r.module_state.empty())) {
      r.module_state = f.value;
      continue;
    }
    int lane = 0;
    const std::string flag = StatusFlag(WithoutLane(f.key, &lane));
    if (flag.empty()) continue;
    if (f.value == "True") {
      AddFlag(m, LaneFlag(flag, lane));
    } else if (f.value != "False" && !IsNotAvailable(f.value)) {
      AddProblem(problems, f,
                 absl::StrCat("\"", f.key, "\": flag \"", f.value.substr(0, 40),
                              "\" is neither True nor False"));
    }
  }
  r.module = std::move(m);
}

void BuildSonicFecRow(ToolReading& r, std::vector<ToolProblem>& problems) {
  FecReading fec;
  for (const ToolField& f : r.fields) {
    const std::string& k = f.key;
    if (k == "IFACE") {
      r.device = f.value;
    } else if (k == "STATE") {
      fec.state = f.value;
    } else if (k == "FEC_CORR" || k == "FEC_UNCORR" || k == "FEC_SYMBOL_ERR") {
      if (IsNotAvailable(f.value)) continue;
      uint64_t v = 0;
      if (!ParseCount(f.value, &v)) {
        AddProblem(problems, f, NotANumber(f, "a count"));
        continue;
      }
      (k == "FEC_CORR"     ? fec.corrected_blocks
       : k == "FEC_UNCORR" ? fec.uncorrectable_blocks
                           : fec.symbol_errors) = v;
    } else if (k == "FEC_PRE_BER" || k == "FEC_POST_BER") {
      if (IsNotAvailable(f.value)) continue;
      double v = 0;
      if (!ParseNumber(f.value, &v) || v < 0 || !std::isfinite(v)) {
        AddProblem(problems, f, NotANumber(f, "a bit error rate"));
        continue;
      }
      (k == "FEC_PRE_BER" ? fec.pre_fec_ber : fec.post_fec_ber) = BerValue(v);
    }
  }
  r.fec = std::move(fec);
}

}  // namespace railwatch::optics::reader
