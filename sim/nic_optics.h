#pragma once

// A simulated NIC port's pluggable module (a 400G DR4 OSFP, CMIS) and its PHY's pre-FEC bit
// error rate: what the host agent reads through the module's EEPROM and the FEC counters, and
// what the link-at-risk faults (sim/faults/link_at_risk.cc) move. Healthy modules differ a
// little from one another and read with a little noise, as real ones do; a fault drifts one
// quantity from its healthy value toward where the link fails.

#include <array>
#include <cstdint>
#include <random>

#include "optics/module.h"

namespace railwatch::sim {

struct NicOptics {
  static constexpr int kLanes = 4;

  // Identity and the module's own thresholds: fixed for its life.
  optics::ModuleReading module;
  // Its healthy readings.
  double temperature_c = 50, supply_voltage_v = 3.3;
  std::array<double, kLanes> rx_power_dbm{}, tx_power_dbm{}, tx_bias_ma{};
  double healthy_pre_fec_ber = 1e-7;

  // What faults set: 0 while healthy.
  double rx_loss_db = 0;          // the fibre into this module loses this much (all lanes)
  double temperature_rise_c = 0;  // over its healthy temperature
  double pre_fec_ber = 0;         // the PHY's pre-FEC BER when a fault sets it
  bool no_light = false;          // the link failed: no light received (LOS)

  // A module as a healthy 400G DR4 OSFP reads, drawn from `rng`; `serial` makes its serial
  // number.
  static NicOptics Draw(std::mt19937_64& rng, int serial);
  // What the module reads now: its healthy values, the faults' drift, and noise (about 0.05 dB
  // on powers, 0.3 °C, 0.05 mA). `util` (0-1, the share of line rate moved) warms it a little.
  optics::ModuleReading Read(std::mt19937_64& rng, double util) const;
  double PreFecBer() const { return pre_fec_ber > 0 ? pre_fec_ber : healthy_pre_fec_ber; }
};

}  // namespace railwatch::sim
