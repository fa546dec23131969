#pragma once

// A simulated switch port's physical layer: the pluggable module in its cage (the same model as
// a NIC's, sim/nic_optics.h: a 400G DR4 OSFP with its own thresholds and healthy readings) and
// the RS(544,514) FEC that corrects what the link garbles. The switch model (SwitchFabric)
// counts the FEC once a simulated second and refreshes the readings every other; the gNMI
// dialects render them
// (docs/LINK_HEALTH.md, "Switch optics and FEC").

#include <array>
#include <cstdint>
#include <random>
#include <string>

#include "sim/nic_optics.h"

namespace railwatch::sim {

// FEC codewords by the number of symbol errors each held: 0..15 corrected (1..15) or clean
// (0), 16 for 16 or more (uncorrectable). SAI's SAI_PORT_STAT_IF_IN_FEC_CODEWORD_ERRORS_S0..S16.
inline constexpr int kFecBins = 17;
// RS(544,514) with 10-bit symbols: 5440 bits a codeword, up to 15 symbol errors corrected.
inline constexpr int kFecCodewordBits = 5440;
inline constexpr int kFecCodewordSymbols = 544;
inline constexpr int kFecCorrectableSymbols = 15;

// What the FEC saw over one step.
struct FecStep {
  std::array<uint64_t, kFecBins> codewords{};  // by symbol errors (16: 16 or more)
  uint64_t corrected = 0;                      // codewords with 1..15 symbol errors
  uint64_t uncorrectable = 0;                  // codewords with 16 or more
  uint64_t symbol_errors = 0;                  // every errored symbol, corrected or not
  uint64_t corrected_bits = 0;                 // bits in the corrected symbols
};

// A codeword's symbol errors at pre-FEC bit error rate `ber`, errors independent: a symbol is
// in error with probability 1-(1-ber)^10, so their number is Poisson with mean 544 x that.
struct FecErrors {
  double ber = -1;
  double mean = 0;  // symbol errors a codeword
  double p0 = 1;    // exp(-mean): a codeword without any
};
FecErrors FecErrorsAt(double ber);

// The FEC over `bits` received with `errors`: about 2.4e-4 is where uncorrectable codewords
// start (one a day at 400G), a decade above it most are lost. Draws only the bins whose
// expected count is not negligible, so a healthy port (1e-7) costs three or four draws.
FecStep DrawFecStep(std::mt19937_64& rng, const FecErrors& errors, double bits);
inline FecStep DrawFecStep(std::mt19937_64& rng, double ber, double bits) {
  return DrawFecStep(rng, FecErrorsAt(ber), bits);
}

// The module in one switch port, and what it reads now. `module` holds the identity,
// thresholds and healthy readings, and the knobs a fault turns (rx_loss_db,
// temperature_rise_c, pre_fec_ber, no_light: sim/nic_optics.h); the readings below follow
// them at the next refresh (every other simulated second), with noise.
struct SwitchPortOptics {
  bool present = false;  // no module (InfiniBand fabrics: their switches speak no gNMI)
  NicOptics module;
  // The OpenConfig transceiver component's name, as the dialect names it ("Ethernet3
  // transceiver" on EOS); interfaces/interface/state/transceiver points at it.
  std::string component;
  // Readings, refreshed every other second: degrees C, V, mA, dBm (-40: no light).
  double temperature_c = 0, supply_voltage_v = 0;
  std::array<double, NicOptics::kLanes> tx_bias_ma{}, tx_power_dbm{}, rx_power_dbm{};
  // The pre-FEC BER the PHY measured over the last step (OpenConfig pre-fec-ber/instant), and
  // what it means per codeword (computed again only when it changes).
  double pre_fec_ber = 0;
  FecErrors fec_errors;
  // For the temperature's warming with load: the port's bytes at the last refresh.
  uint64_t octets_seen = 0;
};

}  // namespace railwatch::sim
