// The simulator's link and NIC health (issue 24): FEC corrections that follow each link's
// pre-FEC BER, modules whose EEPROM the optics collector's decoder reads (healthy ones with
// noise, drifting ones past their own thresholds), links that fail after their drift, and
// kernel messages that the kmsg collector's parser turns into its events.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "collectors/optics_dir_backend.h"
#include "common/clock.h"
#include "gtest/gtest.h"
#include "logs/kernel_line.h"
#include "logs/kernel_messages.h"
#include "optics/eeprom.h"
#include "unit/sim_host/sim_host_util.h"

namespace railwatch::sim {
namespace sim_link_health_test {
namespace fs = std::filesystem;

using testing::HostSim;
using testing::OneJob;

// The module of mlx5_<nic> on host h, as the optics collector decodes it.
optics::ModuleReading Module(const HostSim& sim, int h, int nic) {
  DirModuleBackend backend(sim.Host(h) + "/optics");
  absl::StatusOr<optics::ModuleEeprom> eeprom = backend.ReadModule(SysfsFabric::NetdevName(nic));
  EXPECT_TRUE(eeprom.ok()) << eeprom.status();
  if (!eeprom.ok()) return {};
  absl::StatusOr<optics::ModuleReading> reading = optics::DecodeEeprom(*eeprom);
  EXPECT_TRUE(reading.ok()) << reading.status();
  return reading.ok() ? *reading : optics::ModuleReading();
}

double CorrectedBitsPerSecond(HostSim& sim, int h, int nic, absl::Duration from,
                              absl::Duration to) {
  sim.RunTo(from);
  const uint64_t a = sim.Ethtool(h, nic, "rx_corrected_bits_phy");
  sim.RunTo(to);
  const uint64_t b = sim.Ethtool(h, nic, "rx_corrected_bits_phy");
  return static_cast<double>(b - a) / absl::ToDoubleSeconds(to - from);
}

TEST(SimLinkHealth, CorrectedBitsFollowTheBitErrorRate) {
  SysfsFabric::Options o = OneJob(3, 2);
  // 120 and 30 symbol errors a minute: pre-FEC BER 5e-5 and 1.25e-5 at 400 Gb/s.
  o.bit_errors = {{"gpu-node-002", "mlx5_1", absl::Seconds(1), 120},
                  {"gpu-node-003", "mlx5_1", absl::Seconds(1), 30}};
  HostSim sim(o);
  sim.RunTo(absl::Seconds(2));
  const uint64_t a2 = sim.Ethtool(2, 1, "rx_corrected_bits_phy");
  const uint64_t a3 = sim.Ethtool(3, 1, "rx_corrected_bits_phy");
  const uint64_t a1 = sim.Ethtool(1, 1, "rx_corrected_bits_phy");
  sim.RunTo(absl::Seconds(12));
  const double r2 = static_cast<double>(sim.Ethtool(2, 1, "rx_corrected_bits_phy") - a2) / 10;
  const double r3 = static_cast<double>(sim.Ethtool(3, 1, "rx_corrected_bits_phy") - a3) / 10;
  const double healthy = static_cast<double>(sim.Ethtool(1, 1, "rx_corrected_bits_phy") - a1) / 10;
  EXPECT_NEAR(r2, 5e-5 * 4e11, 0.25 * 5e-5 * 4e11);
  EXPECT_NEAR(r2 / r3, 4, 0.8);
  // A healthy link's BER: 3.75e-8 to 1.5e-7.
  EXPECT_GT(healthy, 0.7 * 3.75e-8 * 4e11);
  EXPECT_LT(healthy, 1.3 * 1.5e-7 * 4e11);
}

TEST(SimLinkHealth, BerRisingClimbsToItsTargetAndThenTheLinkFails) {
  SysfsFabric::Options o = OneJob(2, 2);
  o.links_at_risk = {{.what = LinkAtRisk::What::kBer,
                      .host = "gpu-node-002",
                      .device = "mlx5_0",
                      .at = absl::Seconds(2),
                      .ramp = absl::Seconds(10),
                      .fails_after = absl::Seconds(20),
                      .to = 1e-4}};
  HostSim sim(o);
  const double before = CorrectedBitsPerSecond(sim, 2, 0, absl::Seconds(0), absl::Seconds(2));
  const double after = CorrectedBitsPerSecond(sim, 2, 0, absl::Seconds(13), absl::Seconds(18));
  EXPECT_LT(before, 1e5);
  EXPECT_NEAR(after, 1e-4 * 4e11, 0.25 * 1e-4 * 4e11);
  EXPECT_EQ(sim.Sysfs(2, 0, "counters/link_downed"), 0u);
  std::ifstream speed(sim.Host(2) + "/class/net/" + SysfsFabric::NetdevName(0) + "/speed");
  std::string mbps;
  speed >> mbps;
  EXPECT_EQ(mbps, "400000");
  sim.RunTo(absl::Seconds(23));
  EXPECT_EQ(sim.Sysfs(2, 0, "counters/link_downed"), 1u);
  std::ifstream speed_down(sim.Host(2) + "/class/net/" + SysfsFabric::NetdevName(0) + "/speed");
  speed_down >> mbps;
  EXPECT_EQ(mbps, "-1");
  // Its peer link is untouched.
  EXPECT_EQ(sim.Sysfs(1, 0, "counters/link_downed"), 0u);
  std::vector<nlohmann::json> truth = sim.Truth();
  ASSERT_EQ(truth.size(), 1u);
  EXPECT_EQ(truth[0]["fault"], "ber_rising");
  EXPECT_EQ(truth[0]["fails_after_s"], 20);
}

TEST(SimLinkHealth, ModulesReadHealthyWithNoiseAndADriftingOneCrossesItsOwnThreshold) {
  SysfsFabric::Options o = OneJob(2, 2);
  o.links_at_risk = {{.what = LinkAtRisk::What::kRxPower,
                      .host = "gpu-node-001",
                      .device = "mlx5_1",
                      .at = absl::Seconds(4),
                      .ramp = absl::Seconds(10),
                      .fails_after = absl::ZeroDuration(),
                      .to = 12},
                     {.what = LinkAtRisk::What::kTemperature,
                      .host = "gpu-node-002",
                      .device = "mlx5_0",
                      .at = absl::Seconds(4),
                      .ramp = absl::Seconds(10),
                      .fails_after = absl::ZeroDuration(),
                      .to = 3}};
  HostSim sim(o);
  sim.RunTo(absl::Seconds(3));
  const optics::ModuleReading drifting0 = Module(sim, 1, 1);
  const optics::ModuleReading healthy0 = Module(sim, 2, 1);
  const optics::ModuleReading hot0 = Module(sim, 2, 0);
  ASSERT_EQ(drifting0.spec, optics::ModuleSpec::kCmis);
  EXPECT_EQ(drifting0.form_factor, "OSFP");
  ASSERT_EQ(drifting0.rx_power_dbm.size(), 4u);
  const optics::Thresholds& rx = drifting0.threshold(optics::Quantity::kRxPower);
  ASSERT_TRUE(rx.warning_low.has_value());
  EXPECT_NEAR(*rx.warning_low, -6.9, 0.01);
  EXPECT_TRUE(drifting0.flags.empty());
  for (const auto& lane : drifting0.rx_power_dbm) EXPECT_GT(*lane, *rx.warning_low + 3);
  sim.RunTo(absl::Seconds(16));
  const optics::ModuleReading drifting = Module(sim, 1, 1);
  const optics::ModuleReading healthy = Module(sim, 2, 1);
  const optics::ModuleReading hot = Module(sim, 2, 0);
  for (size_t lane = 0; lane < 4; ++lane) {
    // 12 dB gone, give or take the noise.
    EXPECT_NEAR(*drifting0.rx_power_dbm[lane] - *drifting.rx_power_dbm[lane], 12, 0.5);
    EXPECT_LT(*drifting.rx_power_dbm[lane], *rx.warning_low);
    // The healthy module only wanders by its noise.
    EXPECT_NEAR(*healthy0.rx_power_dbm[lane], *healthy.rx_power_dbm[lane], 0.4);
    EXPECT_NEAR(*healthy0.tx_bias_ma[lane], *healthy.tx_bias_ma[lane], 0.4);
  }
  EXPECT_FALSE(drifting.flags.empty());
  EXPECT_TRUE(healthy.flags.empty());
  const double alarm = *hot0.threshold(optics::Quantity::kTemperature).alarm_high;
  EXPECT_LT(*hot0.temperature_c, alarm - 10);
  EXPECT_GT(*hot.temperature_c, alarm);
  EXPECT_NE(std::find(hot.flags.begin(), hot.flags.end(), "temperature_high_alarm"),
            hot.flags.end());
  EXPECT_NEAR(*healthy0.temperature_c, *healthy.temperature_c, 2.0);
}

// The events the kmsg collector's parser makes of a host's simulated /dev/kmsg.
std::vector<logs::LogEvent> KernelEvents(const HostSim& sim, int h) {
  std::ifstream in(sim.Host(h) + "/kmsg");
  std::stringstream text;
  text << in.rdbuf();
  // A record is its header line and the dictionary lines (a leading space) after it.
  std::vector<std::string> records;
  for (absl::string_view line : absl::StrSplit(text.str(), '\n', absl::SkipEmpty())) {
    if (line[0] == ' ' && !records.empty()) {
      absl::StrAppend(&records.back(), "\n", line);
    } else {
      records.emplace_back(line);
    }
  }
  FakeClock clock(absl::FromUnixSeconds(1'800'000'000));
  logs::KernelMessageParser parser("kmsg", clock);
  std::vector<logs::LogEvent> events;
  for (const std::string& r : records) {
    std::optional<logs::KmsgRecord> record = logs::ParseKmsgRecord(r);
    EXPECT_TRUE(record.has_value()) << r;
    if (record) parser.FeedRecord(*record, 1'800'000'000'000'000'000, events);
  }
  parser.Flush(events);
  return events;
}

TEST(SimLinkHealth, NicHealthAndPcieAerWriteWhatTheKernelPrints) {
  SysfsFabric::Options o = OneJob(2, 2);
  o.nic_health = {{"gpu-node-002", "mlx5_1", absl::Seconds(2), 2, absl::Seconds(3)}};
  o.pcie_aer = {{"gpu-node-001", "mlx5_0", absl::Seconds(2), 60}};
  HostSim sim(o);
  sim.RunTo(absl::Seconds(1));
  // Before the faults: the NICs' boot messages only, nothing about health.
  for (const logs::LogEvent& e : KernelEvents(sim, 2)) {
    EXPECT_NE(e.kind, "kernel.nic_health") << e.raw;
  }
  sim.RunTo(absl::Seconds(12));
  int health = 0;
  for (const logs::LogEvent& e : KernelEvents(sim, 2)) {
    if (e.kind != "kernel.nic_health") continue;
    ++health;
    EXPECT_EQ(e.Value("pci"), SimNicPciAddress(1)) << e.raw;
  }
  EXPECT_EQ(health, 2);
  int aer = 0;
  for (const logs::LogEvent& e : KernelEvents(sim, 1)) {
    if (e.kind == "kernel.pcie_aer") ++aer;
  }
  // 60 a minute for 10 s: the first at once, then one a second.
  EXPECT_GE(aer, 9);
  EXPECT_LE(aer, 12);
  std::vector<nlohmann::json> truth = sim.Truth();
  ASSERT_EQ(truth.size(), 2u);
}

}  // namespace sim_link_health_test
}  // namespace railwatch::sim
