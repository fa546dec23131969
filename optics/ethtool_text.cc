#include "optics/ethtool_text.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "optics/reader_util.h"

namespace railwatch::optics::reader {
// Named, not anonymous: the unity build puts the readers in one unit.
namespace ethtool_impl {

// What ethtool calls each DOM quantity, in its monitors, thresholds and flags.
struct QuantityName {
  std::string_view name, quantity;
};
constexpr QuantityName kMonitors[] = {
    {"laser bias current", "tx_bias"},
    {"laser tx bias current", "tx_bias"},
    {"laser output power", "tx_power"},
    {"transmit avg optical power", "tx_power"},
    {"receiver signal average optical power", "rx_power"},
    {"receiver signal oma", "rx_power"},
    {"rcvr signal avg optical power", "rx_power"},
    {"module temperature", "temperature"},
    {"module voltage", "voltage"},
};
constexpr QuantityName kLimits[] = {
    {"laser bias current", "tx_bias"},     {"laser output power", "tx_power"},
    {"laser tx power", "tx_power"},        {"laser rx power", "rx_power"},
    {"module temperature", "temperature"}, {"module voltage", "voltage"},
};
// CMIS and SFF-8636 lane status lists: "Rx loss of signal : [ Yes, No, No, No ]".
constexpr QuantityName kLaneStatus[] = {
    {"rx loss of signal", "rx_los"}, {"tx loss of signal", "tx_los"},
    {"rx loss of lock", "rx_lol"},   {"tx loss of lock", "tx_lol"},
    {"tx fault", "tx_fault"},        {"tx adaptive eq fault", "tx_adaptive_eq_fault"},
};

// "<name> high alarm": the quantity, high/low and alarm/warning.
bool ParseLimitName(std::string_view base, std::string_view* quantity, bool* high, bool* alarm) {
  for (const QuantityName& q : kLimits) {
    if (!StartsWith(base, q.name) || base.size() <= q.name.size() || base[q.name.size()] != ' ') {
      continue;
    }
    const std::string_view rest = base.substr(q.name.size() + 1);
    if (rest == "high alarm" || rest == "low alarm" || rest == "high warning" ||
        rest == "low warning") {
      *quantity = q.quantity;
      *high = StartsWith(rest, "high");
      *alarm = rest.substr(rest.find(' ') + 1) == "alarm";
      return true;
    }
  }
  return false;
}

bool ParseQuantity(std::string_view quantity, std::string_view text, double* v) {
  if (quantity == "temperature") return ParseTemperatureC(text, v);
  if (quantity == "voltage") return ParseVolts(text, v);
  if (quantity == "tx_bias") return ParseMilliamps(text, v);
  return ParseDbm(text, v);
}

std::vector<std::optional<double>>* LanesFor(ModuleReading& m, std::string_view quantity) {
  if (quantity == "tx_bias") return &m.tx_bias_ma;
  if (quantity == "tx_power") return &m.tx_power_dbm;
  if (quantity == "rx_power") return &m.rx_power_dbm;
  return nullptr;
}

// "10G Ethernet: 10G Base-SR" -> "10G Base-SR"; "" for a Fibre Channel or SONET line.
std::string MediaOf(std::string_view transceiver_type) {
  const size_t colon = transceiver_type.find(": ");
  if (colon == std::string_view::npos) return "";
  const std::string_view kind = transceiver_type.substr(0, colon);
  if (kind.find("Ethernet") == std::string_view::npos &&
      kind.find("Infiniband") == std::string_view::npos) {
    return "";
  }
  return std::string(Trim(transceiver_type.substr(colon + 2)));
}

}  // namespace ethtool_impl

bool ParseTemperatureC(std::string_view text, double* celsius) {
  double v = 0;
  std::string_view rest;
  if (!LeadingNumber(text, &v, &rest) || !std::isfinite(v)) return false;
  if (StartsWith(rest, "degrees F") || rest == "F" || rest == "°F") {
    *celsius = (v - 32) * 5 / 9;
    return true;
  }
  if (rest.empty() || StartsWith(rest, "degrees C") || StartsWith(rest, "C") ||
      StartsWith(rest, "°C")) {
    *celsius = v;
    return true;
  }
  return false;
}

bool ParseVolts(std::string_view text, double* volts) {
  double v = 0;
  std::string_view rest;
  if (!LeadingNumber(text, &v, &rest) || !std::isfinite(v)) return false;
  if (rest == "mV") {
    *volts = v / 1000;
    return true;
  }
  if (rest.empty() || rest == "V" || rest == "Volts" || rest == "volts") {
    *volts = v;
    return true;
  }
  return false;
}

bool ParseMilliamps(std::string_view text, double* ma) {
  double v = 0;
  std::string_view rest;
  if (!LeadingNumber(text, &v, &rest) || !std::isfinite(v)) return false;
  if (rest == "uA" || rest == "µA") {
    *ma = v / 1000;
    return true;
  }
  if (rest.empty() || rest == "mA") {
    *ma = v;
    return true;
  }
  return false;
}

bool ParseDbm(std::string_view text, double* dbm) {
  // "0.6367 mW / -1.96 dBm" (ethtool: -inf dBm for 0 mW), "-2.5dBm" (SONiC), "0.5 mW".
  std::optional<double> mw, db;
  for (std::string_view part :
       {text.substr(0, text.find('/')), text.find('/') == std::string_view::npos
                                            ? std::string_view()
                                            : text.substr(text.find('/') + 1)}) {
    part = Trim(part);
    if (part.empty()) continue;
    double v = 0;
    std::string_view rest;
    if (!LeadingNumber(part, &v, &rest)) return false;
    if (rest == "dBm") {
      db = v;
    } else if (rest == "mW") {
      if (!std::isfinite(v)) return false;
      mw = v;
    } else {
      return false;
    }
  }
  if (db && std::isfinite(*db)) {
    *dbm = std::max(-40.0, *db);
    return true;
  }
  if (mw) {
    *dbm = MilliwattsToDbm(*mw);
    return true;
  }
  if (db) {  // -inf dBm alone: no light
    *dbm = -40.0;
    return *db < 0;
  }
  return false;
}

void BuildEthtoolModule(ToolReading& r, std::vector<ToolProblem>& problems) {
  using namespace ethtool_impl;  // NOLINT(build/namespaces)
  ModuleReading m;
  for (const ToolField& f : r.fields) {
    std::string base;
    int lane = 0;
    const bool has_lane = SplitLaneSuffix(f.key, &base, &lane);
    std::string_view value = f.value;
    if (!has_lane) {
      if (base == "identifier") {
        m.form_factor = FormFactorOf(value);
        m.spec = SpecOf(m.form_factor, value);
        continue;
      }
      if (base == "module state") {
        r.module_state = std::string(value);
        continue;
      }
      if (base == "revision compliance") {
        if (StartsWith(value, "Rev.")) m.spec = ModuleSpec::kCmis;
        continue;
      }
      if (base == "vendor name") {
        if (m.vendor.empty()) m.vendor = std::string(value);
        continue;
      }
      if (base == "vendor pn") {
        if (m.part_number.empty()) m.part_number = std::string(value);
        continue;
      }
      if (base == "vendor sn") {
        if (m.serial.empty()) m.serial = std::string(value);
        continue;
      }
      if (base == "vendor rev") {
        if (m.revision.empty()) m.revision = std::string(value);
        continue;
      }
      if (base == "transceiver type") {
        if (m.media.empty()) m.media = MediaOf(value);
        continue;
      }
      if (base == "laser wavelength") {
        double nm = 0;
        if (LeadingNumber(value, &nm, nullptr) && nm > 0) m.wavelength_nm = nm;
        continue;
      }
    }
    // Thresholds: "<quantity> high alarm threshold".
    std::string_view quantity;
    bool high = false, alarm = false;
    if (!has_lane && base.size() > 10 && base.substr(base.size() - 10) == " threshold" &&
        ParseLimitName(std::string_view(base).substr(0, base.size() - 10), &quantity, &high,
                       &alarm)) {
      if (IsNotAvailable(value)) continue;
      double v = 0;
      if (!ParseQuantity(quantity, value, &v)) {
        AddProblem(problems, f, NotANumber(f, "a threshold ethtool prints"));
        continue;
      }
      SetThreshold(*ThresholdsFor(m, quantity), high, alarm, v);
      continue;
    }
    // Flags: "<quantity> high alarm[ (Chan N)] : On|Off".
    if (ParseLimitName(base, &quantity, &high, &alarm)) {
      if (value == "On") {
        AddFlag(m, FlagName(quantity, high, alarm, has_lane ? lane : 0));
      } else if (value != "Off") {
        AddProblem(problems, f,
                   absl::StrCat("\"", f.key, "\": flag \"", std::string(value.substr(0, 40)),
                                "\" is neither On nor Off"));
      }
      continue;
    }
    // Lane status lists: "[ Yes, No, No, No ]", or "None".
    bool status = false;
    for (const QuantityName& s : kLaneStatus) {
      if (base != s.name) continue;
      status = true;
      std::string_view list = Trim(value);
      if (list == "None" || list == "No") break;
      if (list == "Yes") {
        AddFlag(m, std::string(s.quantity));
        break;
      }
      if (list.size() < 2 || list.front() != '[' || list.back() != ']') {
        AddProblem(
            problems, f,
            absl::StrCat("\"", f.key, "\": expected a lane list \"[ Yes, No, ... ]\", got \"",
                         std::string(list.substr(0, 40)), "\""));
        break;
      }
      int n = 0;
      for (const std::string& item : SplitList(list.substr(1, list.size() - 2))) {
        ++n;
        if (item == "Yes") AddFlag(m, LaneFlag(s.quantity, n));
      }
      break;
    }
    if (status) continue;
    // Monitors: the reading itself.
    for (const QuantityName& q : kMonitors) {
      if (base != q.name) continue;
      if (IsNotAvailable(value)) break;
      double v = 0;
      if (!ParseQuantity(q.quantity, value, &v)) {
        AddProblem(problems, f, NotANumber(f, "a reading ethtool prints"));
        break;
      }
      if (q.quantity == "temperature") {
        m.temperature_c = v;
      } else if (q.quantity == "voltage") {
        m.supply_voltage_v = v;
      } else {
        SetLane(*LanesFor(m, q.quantity), has_lane ? lane : 1, v);
      }
      break;
    }
  }
  r.module = std::move(m);
}

void BuildEthtoolFec(ToolReading& r, std::vector<ToolProblem>& problems) {
  FecReading fec;
  auto words = [](std::string_view s) {
    std::vector<std::string> out;
    for (const std::string& w : SplitList(s, ' ')) {
      if (!w.empty()) out.push_back(w);
    }
    return out;
  };
  for (const ToolField& f : r.fields) {
    if (f.section.empty()) {
      if (f.key == "Configured FEC encodings" || f.key == "Supported/Configured FEC encodings" ||
          f.key == "Supported FEC encodings") {
        fec.configured = words(f.value);
      } else if (f.key == "Active FEC encoding") {
        fec.active = words(f.value);
      }
      continue;
    }
    uint64_t v = 0;
    if (!ParseCount(f.value, &v)) {
      AddProblem(problems, f, NotANumber(f, "an unsigned count"));
      continue;
    }
    if (f.section == "Statistics") {
      if (f.key == "corrected_blocks") fec.corrected_blocks = v;
      if (f.key == "uncorrectable_blocks") fec.uncorrectable_blocks = v;
      if (f.key == "corrected_bits") fec.corrected_bits = v;
    } else if (f.section == "Statistics/corrected_blocks") {
      fec.corrected_blocks_lanes.push_back(v);
    } else if (f.section == "Statistics/uncorrectable_blocks") {
      fec.uncorrectable_blocks_lanes.push_back(v);
    } else if (f.section == "Statistics/corrected_bits") {
      fec.corrected_bits_lanes.push_back(v);
    }
  }
  r.fec = std::move(fec);
}

void BuildEthtoolStats(ToolReading& r, std::vector<ToolProblem>& problems) {
  PhyCounters phy;
  for (const ToolField& f : r.fields) {
    uint64_t v = 0;
    if (!ParseCount(f.value, &v)) {
      AddProblem(problems, f, NotANumber(f, "an unsigned count"));
      continue;
    }
    if (f.key == "eth-phy-SymbolErrorDuringCarrier") phy.symbol_errors = v;
  }
  r.phy = std::move(phy);
}

}  // namespace railwatch::optics::reader
