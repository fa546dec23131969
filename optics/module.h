#pragma once

// What a pluggable module (an SFP, QSFP28, QSFP-DD or OSFP optic, or an active cable's end)
// says about itself: identity, digital diagnostics (DOM) per lane, its own alarm and warning
// thresholds, and the alarm and warning flags it has raised. One struct whatever the source:
// the module's EEPROM read through the kernel (optics/eeprom.h, decoding SFF-8472, SFF-8636
// and CMIS), pasted `ethtool -m`, `mlxlink -m` or SONiC `show interfaces transceiver` text
// (optics/readers.h), or a switch's telemetry. Units are fixed: degrees Celsius, volts,
// milliamperes, dBm (a module that reads 0 mW is -40 dBm, as ethtool prints it).

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace railwatch::optics {

// The management interface the module's EEPROM follows.
enum class ModuleSpec {
  kUnknown,
  kSff8472,  // SFP, SFP+, SFP28 (A0h/A2h)
  kSff8636,  // QSFP+, QSFP28 (and SFF-8436 QSFP)
  kCmis,     // QSFP-DD, OSFP, QSFP112 (CMIS 3.0-5.x)
};
std::string_view ModuleSpecName(ModuleSpec spec);  // "SFF-8472", "SFF-8636", "CMIS", "unknown"

// What DOM measures. Units: kTemperature degrees Celsius, kSupplyVoltage volts, kTxBias
// milliamperes, kTxPower and kRxPower dBm.
enum class Quantity { kTemperature, kSupplyVoltage, kTxBias, kTxPower, kRxPower };
inline constexpr int kQuantityCount = 5;
// "temperature_celsius", "supply_voltage_volts", "tx_bias_milliamperes", "tx_power_dbm",
// "rx_power_dbm": the `quantity` label of fabric_optics_threshold.
std::string_view QuantityName(Quantity q);

// The module's own limits for one quantity (absent where the module has none, as SFF-8472
// modules without "internally calibrated" DOM or CMIS modules without page 02h).
struct Thresholds {
  std::optional<double> alarm_high, warning_high, warning_low, alarm_low;
  bool empty() const { return !alarm_high && !warning_high && !warning_low && !alarm_low; }
};

struct ModuleReading {
  ModuleSpec spec = ModuleSpec::kUnknown;
  // "SFP", "QSFP+", "QSFP28", "QSFP-DD", "OSFP", ... (the identifier byte's name).
  std::string form_factor;
  std::string vendor, part_number, serial, revision;
  // What the module is for, as the source names it: "10G Base-SR", "400GBASE-DR4".
  std::string media;
  std::optional<double> wavelength_nm;

  // Diagnostics. Per-lane vectors are indexed by lane - 1 (lane 1 first); a lane the source
  // does not report is nullopt.
  std::optional<double> temperature_c;
  std::optional<double> supply_voltage_v;
  std::vector<std::optional<double>> tx_bias_ma;
  std::vector<std::optional<double>> tx_power_dbm;
  std::vector<std::optional<double>> rx_power_dbm;

  std::array<Thresholds, kQuantityCount> thresholds;  // indexed by Quantity
  const Thresholds& threshold(Quantity q) const { return thresholds[static_cast<int>(q)]; }
  Thresholds& threshold(Quantity q) { return thresholds[static_cast<int>(q)]; }

  // The alarm and warning flags the module has set, by name: "temperature_high_alarm",
  // "rx_power_low_warning", "tx_bias_high_alarm", "rx_los", "tx_fault", "rx_lol", "tx_lol",
  // per lane with a suffix: "rx_power_low_warning:lane2". Empty when none is set.
  std::vector<std::string> flags;

  // True when the source had any diagnostics at all (a module without DOM, or an excerpt
  // without them, has identity only).
  bool has_diagnostics() const {
    return temperature_c || supply_voltage_v || !tx_bias_ma.empty() || !tx_power_dbm.empty() ||
           !rx_power_dbm.empty();
  }
};

// Milliwatts to dBm; 0 (or less) reads -40 dBm, the floor ethtool prints for no light.
double MilliwattsToDbm(double mw);

}  // namespace railwatch::optics
