// The simulated switch ports' physical layer: modules, their readings, and the FEC.
#include "sim/switch_phy.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "sim/switch_model.h"
#include "sim/traffic_model.h"

namespace railwatch::sim {
namespace {

// How often the PHY advances: the FEC is counted once a simulated second, not every tick (a
// 100 ms tick of a 3,000-port fabric would pay for it ten times), and the readings refreshed
// every other second (the agents sample them every 10 s; a host's module is written every 2 s).
constexpr double kPhyStepSeconds = 1.0;
constexpr int kReadingSteps = 2;
// Below this many expected codewords in a bin past the mode, the rest are not drawn.
constexpr double kNegligibleCodewords = 1e-9;
// The switch ports' serial numbers follow the NICs' (MT2423FT00001 ...).
constexpr int kSwitchSerialBase = 60000;

// Nearly a standard normal: four 16-bit uniforms of one draw, summed (Irwin-Hall), centred
// and scaled to unit variance; a tenth of std::normal_distribution's cost, which matters at
// 3,000 ports of 14 readings each.
double FastNormal(std::mt19937_64& rng) {
  const uint64_t r = rng();
  const double sum =
      static_cast<double>((r & 0xffff) + ((r >> 16) & 0xffff) + ((r >> 32) & 0xffff) + (r >> 48)) /
      65536.0;
  return (sum - 2) * 1.7320508075688772;  // sqrt(12 / 4)
}

// A count drawn with `expected` as its mean, cheaply where that is close enough: below 0.05
// a Bernoulli draw (P(2 or more) under 0.13%), from 10 to 50 a normal one (Poisson's
// skew is small there); Poisson between, DrawCount's above.
uint64_t DrawRareCount(std::mt19937_64& rng, double expected) {
  if (expected <= 0) return 0;
  if (expected < 0.05) return std::uniform_real_distribution<double>(0, 1)(rng) < expected ? 1 : 0;
  if (expected >= 10 && expected < 50) {
    const double n = std::round(expected + std::sqrt(expected) * FastNormal(rng));
    return n > 0 ? static_cast<uint64_t>(n) : 0;
  }
  return DrawCount(rng, expected);
}

// The transceiver component's name, as each network OS names it: EOS "Ethernet3 transceiver"
// (featureprofiles' findTransceiverName), the generic OpenConfig target "transceiver-<port>",
// Cumulus the port's own name; SONiC keys its tables by port and has no components.
std::string ComponentName(Dialect d, const std::string& port) {
  switch (d) {
    case Dialect::kAristaEos:
      return absl::StrCat(port, " transceiver");
    case Dialect::kOpenConfig:
      return absl::StrCat("transceiver-", port);
    case Dialect::kCumulus:
    case Dialect::kSonic:
      return port;
  }
  return port;
}

}  // namespace

FecErrors FecErrorsAt(double ber) {
  FecErrors e;
  e.ber = ber;
  ber = std::clamp(ber, 0.0, 0.5);
  e.mean = kFecCodewordSymbols * (1 - std::pow(1 - ber, 10));
  e.p0 = std::exp(-e.mean);
  return e;
}

FecStep DrawFecStep(std::mt19937_64& rng, const FecErrors& errors, double bits) {
  FecStep out;
  const double codewords = std::floor(bits / kFecCodewordBits);
  if (codewords <= 0) return out;
  const double mean = errors.mean;
  // Poisson(mean) term by term: P(k) = P(k-1) x mean / k.
  double pk = errors.p0;
  uint64_t errored = 0;
  for (int k = 1; k <= kFecCodewordSymbols; ++k) {
    pk *= mean / k;
    const double expected = codewords * pk;
    if (k > mean && expected < kNegligibleCodewords) break;
    const uint64_t n = DrawRareCount(rng, expected);
    if (n == 0) continue;
    errored += n;
    out.symbol_errors += n * static_cast<uint64_t>(k);
    if (k <= kFecCorrectableSymbols) {
      out.codewords[k] += n;
      out.corrected += n;
      // Independent bit errors land one to a symbol.
      out.corrected_bits += n * static_cast<uint64_t>(k);
    } else {
      out.codewords[kFecBins - 1] += n;
      out.uncorrectable += n;
    }
  }
  const auto total = static_cast<uint64_t>(codewords);
  out.codewords[0] = total > errored ? total - errored : 0;
  return out;
}

void SwitchFabric::InitOptics() {
  absl::MutexLock lock(&mu_);
  if (options_.infiniband) return;
  int serial = kSwitchSerialBase;
  for (SimSwitch& sw : switches_) {
    for (SwitchPort& p : sw.ports) {
      SwitchPortOptics& o = p.optics;
      o.present = true;
      o.module = NicOptics::Draw(phy_rng_, ++serial);
      o.component = ComponentName(sw.dialect, p.name);
      o.temperature_c = o.module.temperature_c;
      o.supply_voltage_v = o.module.supply_voltage_v;
      o.tx_bias_ma = o.module.tx_bias_ma;
      o.tx_power_dbm = o.module.tx_power_dbm;
      o.rx_power_dbm = o.module.rx_power_dbm;
      o.pre_fec_ber = o.module.PreFecBer();
    }
  }
}

void SwitchFabric::AdvancePhy(double dt) {
  if (options_.infiniband) return;
  phy_pending_s_ += dt;
  if (phy_pending_s_ < kPhyStepSeconds) return;
  const double step = phy_pending_s_;
  phy_pending_s_ = 0;
  reading_s_ += step;
  const bool read = ++phy_steps_ % kReadingSteps == 1 % kReadingSteps;
  const double read_s = reading_s_;
  if (read) reading_s_ = 0;
  std::mt19937_64& rng = phy_rng_;
  auto noise = [&rng](double sigma) { return sigma * FastNormal(rng); };
  for (SimSwitch& sw : switches_) {
    for (SwitchPort& p : sw.ports) {
      SwitchPortOptics& o = p.optics;
      if (!o.present) continue;
      const NicOptics& m = o.module;
      const double line_bits = p.speed_gbps * 1e9 * step;
      if (read) {
        // Readings, as NicOptics::Read makes them (without its allocations): healthy values,
        // the faults' drift, a little warmth with load, noise. A port that is down receives
        // no light.
        const uint64_t octets = p.c.in_octets + p.c.out_octets;
        const double bits = p.speed_gbps * 1e9 * read_s;
        const double util =
            bits > 0
                ? static_cast<double>(octets - std::min(octets, o.octets_seen)) * 8 / (2 * bits)
                : 0;
        o.octets_seen = octets;
        o.temperature_c =
            m.temperature_c + m.temperature_rise_c + 3 * std::clamp(util, 0.0, 1.0) + noise(0.3);
        o.supply_voltage_v = m.supply_voltage_v + noise(0.002);
        const bool dark = m.no_light || !p.up;
        for (int lane = 0; lane < NicOptics::kLanes; ++lane) {
          o.tx_bias_ma[lane] = m.tx_bias_ma[lane] + noise(0.05);
          o.tx_power_dbm[lane] = m.tx_power_dbm[lane] + noise(0.05);
          o.rx_power_dbm[lane] =
              dark ? -40.0 : std::max(-40.0, m.rx_power_dbm[lane] - m.rx_loss_db + noise(0.05));
        }
      }
      // The FEC counts every codeword on the line, idle ones too, while the link is up.
      if (!p.up || m.no_light) continue;
      o.pre_fec_ber = m.PreFecBer();
      if (o.fec_errors.ber != o.pre_fec_ber) o.fec_errors = FecErrorsAt(o.pre_fec_ber);
      const FecStep f = DrawFecStep(rng, o.fec_errors, line_bits);
      PortCounters& c = p.c;
      c.fec_corrected += f.corrected;
      c.fec_uncorrectable += f.uncorrectable;
      c.fec_symbol_errors += f.symbol_errors;
      c.fec_corrected_bits += f.corrected_bits;
      for (int k = 0; k < kFecBins; ++k) c.fec_codewords[k] += f.codewords[k];
      // A lost codeword takes its frames with it: they fail the FCS.
      c.in_errors += f.uncorrectable;
      c.in_crc_errors += f.uncorrectable;
    }
  }
}

}  // namespace railwatch::sim
