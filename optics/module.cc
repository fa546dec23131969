#include "optics/module.h"

#include <algorithm>
#include <cmath>

namespace railwatch::optics {

std::string_view ModuleSpecName(ModuleSpec spec) {
  switch (spec) {
    case ModuleSpec::kSff8472:
      return "SFF-8472";
    case ModuleSpec::kSff8636:
      return "SFF-8636";
    case ModuleSpec::kCmis:
      return "CMIS";
    case ModuleSpec::kUnknown:
      break;
  }
  return "unknown";
}

std::string_view QuantityName(Quantity q) {
  switch (q) {
    case Quantity::kTemperature:
      return "temperature_celsius";
    case Quantity::kSupplyVoltage:
      return "supply_voltage_volts";
    case Quantity::kTxBias:
      return "tx_bias_milliamperes";
    case Quantity::kTxPower:
      return "tx_power_dbm";
    case Quantity::kRxPower:
      return "rx_power_dbm";
  }
  return "unknown";
}

double MilliwattsToDbm(double mw) {
  if (!(mw > 0)) return -40.0;
  return std::max(-40.0, 10.0 * std::log10(mw));
}

}  // namespace railwatch::optics
