// The optics collector over the simulator's files (collectors/optics_dir_backend.h): modules of
// each spec written by optics::EncodeEeprom into DIR/<netdev>/module/, FEC statistics in
// DIR/<netdev>/fec, link speed in <root>/class/net/<netdev>/speed; the series the collector
// makes of them, its cadence, and bad files.
#include "collectors/optics_collector.h"

#include <filesystem>
#include <fstream>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "collectors/optics_dir_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "optics/eeprom_encode.h"
#include "support/recording_emitter.h"
#include "support/ttar.h"

namespace railwatch {
namespace optics_collector_test {

using ::railwatch::testing::RecordingEmitter;
using ::railwatch::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace fs = std::filesystem;

void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}
void WriteBytes(const fs::path& path, const std::vector<uint8_t>& bytes) {
  WriteFile(path, std::string(bytes.begin(), bytes.end()));
}

std::string Series(std::string_view name, Labels labels) {
  NormalizeLabels(labels);
  return FormatSeries(name, labels);
}
std::string Of(std::string_view name, const std::string& netdev, Labels more = {}) {
  more.push_back({"interface", netdev});
  return Series(name, std::move(more));
}

optics::ModuleReading Module(optics::ModuleSpec spec, int lanes, const std::string& serial) {
  optics::ModuleReading m;
  m.spec = spec;
  m.vendor = "ACME";
  m.part_number = "PN-1";
  m.serial = serial;
  m.temperature_c = 50.5;
  m.supply_voltage_v = 3.3;
  for (int lane = 0; lane < lanes; ++lane) {
    m.tx_bias_ma.push_back(8.0);
    m.tx_power_dbm.push_back(1.0);
    m.rx_power_dbm.push_back(lane == 0 ? -3.0 : 0.5);
  }
  optics::Thresholds& rx = m.threshold(optics::Quantity::kRxPower);
  rx.alarm_high = 7.0;
  rx.warning_high = 4.0;
  rx.warning_low = -6.9;
  rx.alarm_low = -9.9;
  return m;
}

// One simulated host: <root>/class/net/<netdev>/{device,speed} and <root>/optics/<netdev>/.
class OpticsRig {
 public:
  void AddNetdev(const std::string& netdev, const std::string& speed) {
    fs::create_directories(fs::path(root()) / "class" / "net" / netdev / "device");
    if (!speed.empty()) WriteFile(fs::path(root()) / "class" / "net" / netdev / "speed", speed);
  }
  void WriteModule(const std::string& netdev, const optics::ModuleReading& m) {
    absl::StatusOr<optics::ModuleEeprom> e = optics::EncodeEeprom(m);
    ASSERT_TRUE(e.ok()) << e.status();
    const fs::path dir = optics() / netdev / "module";
    fs::remove_all(dir);
    if (m.spec == optics::ModuleSpec::kSff8472) {
      WriteBytes(dir / "a0", e->page00);
      if (!e->a2.empty()) WriteBytes(dir / "a2", e->a2);
    } else {
      WriteBytes(dir / "page00", e->page00);
      for (const auto& [page, bytes] : e->upper) {
        WriteBytes(dir / absl::StrFormat("page%02x", page), bytes);
      }
    }
  }
  fs::path optics() const { return fs::path(root()) / "optics"; }
  const std::string& root() const { return dir_.path(); }

  absl::Status Collect(absl::Duration advance = absl::Seconds(1)) {
    if (collector_ == nullptr) {
      absl::StatusOr<NetdevSelector> selector = NetdevSelector::Create({root(), ""});
      EXPECT_TRUE(selector.ok()) << selector.status();
      OpticsCollector::Options options;
      options.sysfs_root = root();
      collector_ = std::make_unique<OpticsCollector>(
          options, *std::move(selector), std::make_unique<DirModuleBackend>(optics().string()),
          clock);
    }
    clock.Advance(advance);
    return collector_->Collect(emitter);
  }
  OpticsCollector& collector() { return *collector_; }

  FakeClock clock;
  RecordingEmitter emitter;

 private:
  TempDir dir_;
  std::unique_ptr<OpticsCollector> collector_;
};

TEST(OpticsCollector, ModulesOfEachSpecBecomeSeries) {
  OpticsRig rig;
  rig.AddNetdev("eth0", "400000\n");
  rig.AddNetdev("eth1", "-1\n");  // link down: no speed
  rig.AddNetdev("eth2", "");      // no speed file
  rig.AddNetdev("eth3", "100000\n");
  optics::ModuleReading osfp = Module(optics::ModuleSpec::kCmis, 4, "SN-OSFP");
  osfp.form_factor = "OSFP";
  osfp.media = "400GBASE-DR4";
  osfp.flags = {"rx_los:lane1", "rx_power_low_alarm:lane1"};
  rig.WriteModule("eth0", osfp);
  optics::ModuleReading qsfp = Module(optics::ModuleSpec::kSff8636, 4, "SN-QSFP");
  qsfp.form_factor = "QSFP28";
  qsfp.media = "100GBASE-SR4";
  rig.WriteModule("eth1", qsfp);
  optics::ModuleReading sfp = Module(optics::ModuleSpec::kSff8472, 1, "SN-SFP");
  sfp.form_factor = "SFP";
  sfp.media = "10G Base-SR";
  rig.WriteModule("eth2", sfp);
  // eth3: no module.

  ASSERT_TRUE(rig.Collect().ok());
  const RecordingEmitter& e = rig.emitter;
  EXPECT_EQ(rig.collector().netdevs(), 4u);
  EXPECT_EQ(e.GetGauge(Of("fabric_optics_module_info", "eth0",
                          {{"form_factor", "OSFP"},
                           {"spec", "CMIS"},
                           {"vendor", "ACME"},
                           {"part_number", "PN-1"},
                           {"serial", "SN-OSFP"},
                           {"media", "400GBASE-DR4"}})),
            1.0);
  EXPECT_EQ(e.GetGauge(Of("fabric_optics_module_info", "eth2",
                          {{"form_factor", "SFP"},
                           {"spec", "SFF-8472"},
                           {"vendor", "ACME"},
                           {"part_number", "PN-1"},
                           {"serial", "SN-SFP"},
                           {"media", "10G Base-SR"}})),
            1.0);
  for (const char* netdev : {"eth0", "eth1", "eth2"}) {
    EXPECT_DOUBLE_EQ(*e.GetGauge(Of("fabric_optics_temperature_celsius", netdev)), 50.5) << netdev;
    EXPECT_NEAR(*e.GetGauge(Of("fabric_optics_supply_voltage_volts", netdev)), 3.3, 1e-9);
    EXPECT_NEAR(*e.GetGauge(Of("fabric_optics_rx_power_dbm", netdev, {{"lane", "1"}})), -3.0, 0.01);
    EXPECT_NEAR(*e.GetGauge(Of("fabric_optics_threshold", netdev,
                               {{"quantity", "rx_power_dbm"}, {"level", "alarm_low"}})),
                -9.9, 0.01);
  }
  EXPECT_NEAR(*e.GetGauge(Of("fabric_optics_tx_bias_milliamperes", "eth1", {{"lane", "4"}})), 8.0,
              1e-9);
  EXPECT_NEAR(*e.GetGauge(Of("fabric_optics_tx_power_dbm", "eth0", {{"lane", "3"}})), 1.0, 0.01);
  EXPECT_FALSE(e.GetGauge(Of("fabric_optics_rx_power_dbm", "eth0", {{"lane", "5"}})));
  // The module's flags: how many, and which.
  EXPECT_EQ(e.GetGauge(Of("fabric_optics_alarm_flags", "eth0",
                          {{"flags", "rx_los:lane1,rx_power_low_alarm:lane1"}})),
            2.0);
  EXPECT_EQ(e.GetGauge(Of("fabric_optics_alarm_flags", "eth1", {{"flags", ""}})), 0.0);
  // No module on eth3: nothing, and counted as absent, not as an error.
  EXPECT_FALSE(e.GetGauge(Of("fabric_optics_temperature_celsius", "eth3")));
  EXPECT_EQ(rig.collector().module_reads(), 3u);
  EXPECT_EQ(rig.collector().modules_absent(), 1u);
  EXPECT_EQ(e.GetGauge("railwatch_optics_modules_absent"), 1.0);
  EXPECT_EQ(e.Get("railwatch_optics_module_reads_total"), 3u);
  EXPECT_EQ(e.Get(Series("railwatch_optics_read_errors_total", {{"what", "module"}})), 0u);
  // Speed: Mb/s x 125000; absent while down or unknown.
  EXPECT_EQ(e.GetGauge(Of("fabric_netdev_speed_bytes_per_second", "eth0")), 5e10);
  EXPECT_EQ(e.GetGauge(Of("fabric_netdev_speed_bytes_per_second", "eth3")), 1.25e10);
  EXPECT_FALSE(e.GetGauge(Of("fabric_netdev_speed_bytes_per_second", "eth1")));
  EXPECT_FALSE(e.GetGauge(Of("fabric_netdev_speed_bytes_per_second", "eth2")));
}

TEST(OpticsCollector, ModulesEveryIntervalSpeedEveryCycle) {
  OpticsRig rig;
  rig.AddNetdev("eth0", "400000\n");
  optics::ModuleReading m = Module(optics::ModuleSpec::kCmis, 4, "A");
  rig.WriteModule("eth0", m);
  ASSERT_TRUE(rig.Collect().ok());
  EXPECT_DOUBLE_EQ(*rig.emitter.GetGauge(Of("fabric_optics_temperature_celsius", "eth0")), 50.5);

  m.temperature_c = 71.25;
  rig.WriteModule("eth0", m);
  WriteFile(fs::path(rig.root()) / "class/net/eth0/speed", "200000\n");
  ASSERT_TRUE(rig.Collect(absl::Seconds(1)).ok());
  // The speed moved at once; the module is read again only after --optics_interval (10 s).
  EXPECT_EQ(rig.emitter.GetGauge(Of("fabric_netdev_speed_bytes_per_second", "eth0")), 2.5e10);
  EXPECT_DOUBLE_EQ(*rig.emitter.GetGauge(Of("fabric_optics_temperature_celsius", "eth0")), 50.5);
  ASSERT_TRUE(rig.Collect(absl::Seconds(9)).ok());
  EXPECT_DOUBLE_EQ(*rig.emitter.GetGauge(Of("fabric_optics_temperature_celsius", "eth0")), 71.25);
  EXPECT_EQ(rig.collector().module_reads(), 2u);

  // A module swapped for another: a new info series with its serial number.
  m.serial = "B";
  rig.WriteModule("eth0", m);
  ASSERT_TRUE(rig.Collect(absl::Seconds(10)).ok());
  EXPECT_TRUE(rig.emitter.GetGauge(Of("fabric_optics_module_info", "eth0",
                                      {{"form_factor", "OSFP"},  // CMIS's default
                                       {"spec", "CMIS"},
                                       {"vendor", "ACME"},
                                       {"part_number", "PN-1"},
                                       {"serial", "B"},
                                       {"media", ""}})));
}

TEST(OpticsCollector, FecCountersAndTheEthtoolCollectorsShare) {
  OpticsRig rig;
  rig.AddNetdev("eth0", "400000\n");
  rig.AddNetdev("eth1", "400000\n");
  rig.AddNetdev("eth2", "400000\n");
  const std::string fec =
      "# as ethtool -I --show-fec prints them\n"
      "active: RS\n"
      "corrected_blocks: 1200\n"
      "uncorrectable_blocks: 3\n"
      "corrected_bits: 98765\n"
      "corrected_blocks_lane1: 700\n"
      "corrected_blocks_lane2: 500\n";
  for (const char* netdev : {"eth0", "eth1", "eth2"}) {
    WriteFile(rig.optics() / netdev / "fec", fec);
  }
  // mlx5_core's corrected bits and bnxt_en's blocks and bits come from `ethtool -S` (the
  // vocabulary's ethtool sources): the ethtool collector has those series.
  WriteFile(rig.optics() / "eth0" / "driver", "mlx5_core\n");
  WriteFile(rig.optics() / "eth1" / "driver", "bnxt_en\n");
  ASSERT_TRUE(rig.Collect().ok());
  const RecordingEmitter& e = rig.emitter;
  const char* kCorrected = "fabric_netdev_fec_corrected_blocks_total";
  const char* kUncorrectable = "fabric_netdev_fec_uncorrectable_blocks_total";
  const char* kBits = "fabric_netdev_fec_corrected_bits_total";
  EXPECT_EQ(e.Get(Of(kCorrected, "eth0")), 1200u);
  EXPECT_EQ(e.Get(Of(kUncorrectable, "eth0")), 3u);
  EXPECT_FALSE(e.Get(Of(kBits, "eth0")));
  EXPECT_FALSE(e.Get(Of(kCorrected, "eth1")));
  EXPECT_FALSE(e.Get(Of(kUncorrectable, "eth1")));
  EXPECT_FALSE(e.Get(Of(kBits, "eth1")));
  EXPECT_EQ(e.Get(Of(kCorrected, "eth2")), 1200u);
  EXPECT_EQ(e.Get(Of(kBits, "eth2")), 98765u);
  // Per lane, always here (no driver prints them in ethtool -S).
  EXPECT_EQ(e.Get(Of("fabric_netdev_fec_lane_corrected_blocks_total", "eth1", {{"lane", "2"}})),
            500u);
  EXPECT_EQ(e.GetGauge(Of("fabric_netdev_fec_mode_info", "eth2", {{"mode", "RS"}})), 1.0);
  EXPECT_EQ(e.Get(Series("railwatch_optics_read_errors_total", {{"what", "fec"}})), 0u);
}

TEST(OpticsCollector, BadFilesAreCountedAndTheRestGoesOn) {
  OpticsRig rig;
  rig.AddNetdev("eth0", "400000\n");
  rig.AddNetdev("eth1", "400000\n");
  rig.WriteModule("eth0", Module(optics::ModuleSpec::kCmis, 4, "A"));
  // eth1: a CMIS page 00h cut short, and a fec file with two bad lines.
  WriteFile(rig.optics() / "eth1" / "module" / "page00", std::string("\x18\x50", 2) + "short");
  WriteFile(rig.optics() / "eth1" / "fec",
            "corrected_blocks: 10\nuncorrectable blocks 3\ncorrected_bits: lots\n");
  ASSERT_TRUE(rig.Collect().ok());
  EXPECT_EQ(rig.collector().module_reads(), 1u);
  EXPECT_EQ(rig.collector().read_errors("module"), 1u);
  EXPECT_EQ(rig.collector().read_errors("fec"), 2u);
  EXPECT_EQ(rig.emitter.Get(Of("fabric_netdev_fec_corrected_blocks_total", "eth1")), 10u);
  EXPECT_TRUE(rig.emitter.GetGauge(Of("fabric_optics_temperature_celsius", "eth0")));
  EXPECT_FALSE(rig.emitter.GetGauge(Of("fabric_optics_temperature_celsius", "eth1")));

  // Every read failing is a failed cycle.
  fs::remove_all(rig.optics() / "eth0");
  WriteFile(rig.optics() / "eth0" / "module" / "page00", std::string(7, '\x19'));
  fs::remove(rig.optics() / "eth1" / "fec");
  WriteFile(rig.optics() / "eth0" / "fec", "bogus\n");
  WriteFile(rig.optics() / "eth1" / "fec", "corrected_blocks_lane99: 1\n");
  absl::Status status = rig.Collect(absl::Seconds(10));
  EXPECT_TRUE(status.ok()) << "fec files with problems are still read: " << status;
  fs::remove(rig.optics() / "eth0" / "fec");
  fs::remove(rig.optics() / "eth1" / "fec");
  status = rig.Collect(absl::Seconds(10));
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("page 00h: truncated"));
}

TEST(FecFile, ParsesAndSaysWhereItCouldNot) {
  FecStats s = ParseFecFile(
      "active: BaseR\n"
      "corrected_blocks_lane1: 5\n"
      "corrected_blocks_lane2: 7   # comment\n"
      "\n"
      "uncorrectable_blocks: 0\n"
      "frobnicated: 1\n"
      "active: Sometimes\n",
      "DIR/eth0/fec");
  EXPECT_EQ(s.active_mode, "BaseR");
  EXPECT_EQ(s.corrected_blocks.total, 12u);  // lanes without a total: their sum
  EXPECT_THAT(s.corrected_blocks.lanes, ElementsAre(5u, 7u));
  EXPECT_EQ(s.uncorrectable_blocks.total, 0u);
  EXPECT_FALSE(s.corrected_bits.total);
  ASSERT_EQ(s.problems.size(), 2u);
  EXPECT_THAT(s.problems[0], HasSubstr("DIR/eth0/fec:6: unknown name \"frobnicated\""));
  EXPECT_THAT(s.problems[1], HasSubstr("DIR/eth0/fec:7: active: expected RS, BaseR"));
}

TEST(OpticsSetup, FlagsChooseTheBackend) {
  FakeClock clock;
  OpticsCollectorSetup setup;
  setup.sysfs_root = "/nonexistent-root";
  absl::StatusOr<std::unique_ptr<Collector>> c = MakeOpticsCollector(setup, clock);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(*c, nullptr);  // auto on a simulated tree without --optics_dir: off
  setup.dir = "/nonexistent-root/optics";
  c = MakeOpticsCollector(setup, clock);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_NE(*c, nullptr);
  EXPECT_EQ((*c)->name(), "optics");
  setup.mode = "off";
  c = MakeOpticsCollector(setup, clock);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(*c, nullptr);
  setup.mode = "sometimes";
  EXPECT_THAT(MakeOpticsCollector(setup, clock).status().message(),
              HasSubstr("expected auto, on or off"));
  setup.mode = "on";
  setup.interval = absl::ZeroDuration();
  EXPECT_FALSE(MakeOpticsCollector(setup, clock).ok());
  setup.interval = absl::Seconds(10);
  setup.netdevs = "eth[";
  EXPECT_FALSE(MakeOpticsCollector(setup, clock).ok());
}

}  // namespace optics_collector_test
}  // namespace railwatch
