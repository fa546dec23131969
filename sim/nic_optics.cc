#include "sim/nic_optics.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"

namespace railwatch::sim {
namespace {

double OpticsUniform(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}
double OpticsNoise(std::mt19937_64& rng, double sigma) {
  return std::normal_distribution<double>(0, sigma)(rng);
}

void SetOpticsThresholds(optics::ModuleReading& m, optics::Quantity q, double alarm_high,
                   double warning_high, double warning_low, double alarm_low) {
  optics::Thresholds& t = m.threshold(q);
  t.alarm_high = alarm_high;
  t.warning_high = warning_high;
  t.warning_low = warning_low;
  t.alarm_low = alarm_low;
}

}  // namespace

NicOptics NicOptics::Draw(std::mt19937_64& rng, int serial) {
  NicOptics o;
  optics::ModuleReading& m = o.module;
  m.spec = optics::ModuleSpec::kCmis;
  m.form_factor = "OSFP";
  m.vendor = "NVIDIA";
  m.part_number = "MMS4X00-NS400";
  m.revision = "A6";
  m.serial = absl::StrFormat("MT2423FT%05d", serial);
  m.media = "400GBASE-DR4";
  m.wavelength_nm = 1311;
  // The limits of a 400G DR4 module's datasheet (the ranges `mlxlink -m` prints for one).
  using Q = optics::Quantity;
  SetOpticsThresholds(m, Q::kTemperature, 80, 75, -5, -10);
  SetOpticsThresholds(m, Q::kSupplyVoltage, 3.63, 3.465, 3.135, 2.97);
  SetOpticsThresholds(m, Q::kTxBias, 15, 13, 3, 2);
  SetOpticsThresholds(m, Q::kTxPower, 7.0, 4.0, -3.9, -6.9);
  SetOpticsThresholds(m, Q::kRxPower, 7.0, 4.0, -6.9, -9.9);
  o.temperature_c = OpticsUniform(rng, 45, 58);
  o.supply_voltage_v = OpticsUniform(rng, 3.24, 3.30);
  for (int lane = 0; lane < kLanes; ++lane) {
    o.tx_bias_ma[lane] = OpticsUniform(rng, 7.5, 9.0);
    o.tx_power_dbm[lane] = OpticsUniform(rng, 0.5, 2.5);
    o.rx_power_dbm[lane] = OpticsUniform(rng, -1.0, 2.5);
  }
  // A healthy PAM4 link's FEC corrects a few bits all the time: 1.5e4-6e4 a second at 400G.
  o.healthy_pre_fec_ber = OpticsUniform(rng, 3.75e-8, 1.5e-7);
  return o;
}

optics::ModuleReading NicOptics::Read(std::mt19937_64& rng, double util) const {
  optics::ModuleReading m = module;
  m.temperature_c = temperature_c + temperature_rise_c + 3 * std::clamp(util, 0.0, 1.0) +
                    OpticsNoise(rng, 0.3);
  m.supply_voltage_v = supply_voltage_v + OpticsNoise(rng, 0.002);
  m.tx_bias_ma.resize(kLanes);
  m.tx_power_dbm.resize(kLanes);
  m.rx_power_dbm.resize(kLanes);
  for (int lane = 0; lane < kLanes; ++lane) {
    m.tx_bias_ma[lane] = tx_bias_ma[lane] + OpticsNoise(rng, 0.05);
    m.tx_power_dbm[lane] = tx_power_dbm[lane] + OpticsNoise(rng, 0.05);
    m.rx_power_dbm[lane] =
        no_light ? -40.0 : std::max(-40.0, rx_power_dbm[lane] - rx_loss_db + OpticsNoise(rng, 0.05));
  }
  // The flags the module raises itself, against its own limits.
  using Q = optics::Quantity;
  const optics::Thresholds& t = m.threshold(Q::kTemperature);
  if (*m.temperature_c >= *t.alarm_high) m.flags.push_back("temperature_high_alarm");
  else if (*m.temperature_c >= *t.warning_high) m.flags.push_back("temperature_high_warning");
  const optics::Thresholds& r = m.threshold(Q::kRxPower);
  for (int lane = 0; lane < kLanes; ++lane) {
    const double rx = *m.rx_power_dbm[lane];
    const std::string suffix = absl::StrFormat(":lane%d", lane + 1);
    if (no_light) m.flags.push_back("rx_los" + suffix);
    if (rx <= *r.alarm_low) m.flags.push_back("rx_power_low_alarm" + suffix);
    else if (rx <= *r.warning_low) m.flags.push_back("rx_power_low_warning" + suffix);
  }
  return m;
}

}  // namespace railwatch::sim
