// The ethtool collector reading `ethtool -S` dumps from a directory (the agent's
// --ethtool_dumps=DIR, as the simulator writes them): DIR/<netdev>/stats and DIR/<netdev>/driver,
// read again every cycle.
#include "collectors/ethtool_dir_backend.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "collectors/ethtool_collector.h"
#include "common/text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spdlog/sinks/ostream_sink.h"
#include "spdlog/spdlog.h"
#include "support/recording_emitter.h"
#include "support/ttar.h"

namespace railwatch {
namespace ethtool_dir_backend_test {

using ::railwatch::testing::FixturePath;
using ::railwatch::testing::RecordingEmitter;
using ::railwatch::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

namespace fs = std::filesystem;

constexpr char kMlx5[] = "ethtool/ethtool_S_mlx5_core_cx4_ethq_testfile_noindent.txt";

void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

std::string Series(std::string_view name, Labels labels) {
  NormalizeLabels(labels);
  return FormatSeries(name, labels);
}

std::string Pfc(const std::string& netdev, int priority, const std::string& direction) {
  return Series("fabric_pfc_pause_frames_total", {{"interface", netdev},
                                                  {"priority", absl::StrCat(priority)},
                                                  {"direction", direction}});
}

std::string TxBytes(const std::string& netdev, int priority) {
  return Series("fabric_netdev_priority_transmit_bytes_total",
                {{"interface", netdev}, {"priority", absl::StrCat(priority)}});
}

// One simulated host: <root>/class/net/<netdev>/device for the default netdev policy, and
// <root>/ethtool/<netdev>/{stats,driver} for the backend.
class DirRig {
 public:
  void AddNetdev(const std::string& netdev) {
    fs::create_directories(fs::path(root()) / "class" / "net" / netdev / "device");
  }
  void WriteDump(const std::string& netdev, const std::string& stats,
                 const std::string& driver = "mlx5_core\n") {
    WriteFile(dumps() / netdev / "driver", driver);
    WriteFile(dumps() / netdev / "stats", stats);
  }
  fs::path dumps() const { return fs::path(root()) / "ethtool"; }
  const std::string& root() const { return dir_.path(); }

  absl::Status Collect() {
    if (collector_ == nullptr) {
      absl::StatusOr<NetdevSelector> selector = NetdevSelector::Create({root(), ""});
      EXPECT_TRUE(selector.ok()) << selector.status();
      collector_ = std::make_unique<EthtoolCollector>(
          EthtoolCollector::Options{absl::Seconds(30)}, std::move(*selector),
          std::make_unique<DirEthtoolBackend>(dumps().string()), clock);
    }
    clock.Advance(absl::Seconds(1));
    return collector_->Collect(emitter);
  }
  EthtoolCollector& collector() { return *collector_; }

  FakeClock clock;
  RecordingEmitter emitter;

 private:
  TempDir dir_;
  std::unique_ptr<EthtoolCollector> collector_;
};

// Captures what is logged while it lives.
class LogCapture {
 public:
  LogCapture()
      : previous_(spdlog::default_logger()),
        logger_(std::make_shared<spdlog::logger>(
            "capture", std::make_shared<spdlog::sinks::ostream_sink_st>(out_))) {
    spdlog::set_default_logger(logger_);
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  std::string Take() {
    std::string text = out_.str();
    out_.str("");
    return text;
  }

 private:
  std::ostringstream out_;
  std::shared_ptr<spdlog::logger> previous_;
  std::shared_ptr<spdlog::logger> logger_;
};

TEST(DirEthtoolBackend, RecordedMlx5DumpByTheDefaultNetdevPolicy) {
  absl::StatusOr<std::string> mlx5 = ReadFile(FixturePath(kMlx5));
  ASSERT_TRUE(mlx5.ok()) << mlx5.status();
  DirRig rig;
  rig.AddNetdev("ens1f0np0");
  rig.WriteDump("ens1f0np0", *mlx5 + "rx_prio3_pause: 17\ntx_prio3_pause: 4\n");
  // A netdev without a device (a veth) is not selected even with a dump.
  fs::create_directories(fs::path(rig.root()) / "class" / "net" / "veth0");
  rig.WriteDump("veth0", "rx_prio3_pause: 1\n");

  ASSERT_TRUE(rig.Collect().ok());
  EXPECT_EQ(rig.collector().netdevs(), 1u);
  EXPECT_EQ(rig.emitter.Get(TxBytes("ens1f0np0", 0)), 2662454044895u);
  EXPECT_EQ(rig.emitter.Get(Pfc("ens1f0np0", 3, "rx")), 17u);
  EXPECT_EQ(rig.emitter.Get(Pfc("ens1f0np0", 3, "tx")), 4u);
  EXPECT_FALSE(rig.emitter.Get(Pfc("veth0", 3, "rx")).has_value());
}

TEST(DirEthtoolBackend, FilesAreReadAgainEveryCycle) {
  DirRig rig;
  rig.AddNetdev("eth0");
  rig.WriteDump("eth0", "tx_prio3_bytes: 1000\nrx_prio3_pause: 0\n");
  ASSERT_TRUE(rig.Collect().ok());
  EXPECT_EQ(rig.emitter.Get(TxBytes("eth0", 3)), 1000u);
  EXPECT_EQ(rig.emitter.Get(Pfc("eth0", 3, "rx")), 0u);

  // Rewritten in place, as the simulator does between cycles.
  rig.WriteDump("eth0", "tx_prio3_bytes: 5000\nrx_prio3_pause: 250\n");
  ASSERT_TRUE(rig.Collect().ok());
  EXPECT_EQ(rig.emitter.Get(TxBytes("eth0", 3)), 5000u);
  EXPECT_EQ(rig.emitter.Get(Pfc("eth0", 3, "rx")), 250u);

  // New statistics (PFC enabled on priority 4): mapped again in the same cycle.
  rig.WriteDump("eth0", "tx_prio3_bytes: 6000\nrx_prio3_pause: 260\nrx_prio4_pause: 9\n");
  ASSERT_TRUE(rig.Collect().ok());
  EXPECT_EQ(rig.emitter.Get(Pfc("eth0", 3, "rx")), 260u);
  EXPECT_EQ(rig.emitter.Get(Pfc("eth0", 4, "rx")), 9u);

  // Same count, other names: mapped again too, not read under the old names.
  rig.WriteDump("eth0", "tx_prio3_bytes: 7000\nrx_prio3_pause: 270\nrx_prio5_pause: 11\n");
  ASSERT_TRUE(rig.Collect().ok());
  EXPECT_EQ(rig.emitter.Get(Pfc("eth0", 4, "rx")), 9u);  // not moved: no longer read
  EXPECT_EQ(rig.emitter.Get(Pfc("eth0", 5, "rx")), 11u);
}

TEST(DirEthtoolBackend, MissingDirectoryIsANetdevThatWentAway) {
  DirRig rig;
  rig.AddNetdev("eth0");
  rig.AddNetdev("eth1");
  rig.WriteDump("eth0", "rx_prio3_pause: 5\n");
  rig.WriteDump("eth1", "rx_prio3_pause: 6\n");
  ASSERT_TRUE(rig.Collect().ok());
  EXPECT_EQ(rig.collector().netdevs(), 2u);

  fs::remove_all(rig.dumps() / "eth0");
  const size_t points = rig.emitter.points;
  // Gone is not a failure of the collector; the other netdev goes on.
  rig.WriteDump("eth1", "rx_prio3_pause: 7\n");
  EXPECT_TRUE(rig.Collect().ok());
  EXPECT_EQ(rig.emitter.points, points + 1);
  EXPECT_EQ(rig.emitter.Get(Pfc("eth1", 3, "rx")), 7u);
  EXPECT_TRUE(rig.Collect().ok());  // the rescan it triggered drops it
  EXPECT_EQ(rig.collector().netdevs(), 1u);
  EXPECT_EQ(rig.emitter.Get(Pfc("eth0", 3, "rx")), 5u);

  // Back (a driver file alone is not enough): found by the next rescan.
  WriteFile(rig.dumps() / "eth0" / "driver", "mlx5_core\n");
  rig.clock.Advance(absl::Seconds(30));
  EXPECT_TRUE(rig.Collect().ok());
  EXPECT_EQ(rig.collector().netdevs(), 1u);
  rig.WriteDump("eth0", "rx_prio3_pause: 8\n");
  rig.clock.Advance(absl::Seconds(30));
  EXPECT_TRUE(rig.Collect().ok());
  EXPECT_EQ(rig.collector().netdevs(), 2u);
  EXPECT_EQ(rig.emitter.Get(Pfc("eth0", 3, "rx")), 8u);
}

TEST(DirEthtoolBackend, BadLinesAreLoggedWithFileAndLineAndTheRestIsKept) {
  TempDir dir;
  WriteFile(fs::path(dir.path()) / "eth0" / "driver", "mlx5_core\n");
  const std::string stats = (fs::path(dir.path()) / "eth0" / "stats").string();
  WriteFile(stats, "NIC statistics:\n  rx_prio3_pause: 5\n  garbage here\n  tx_prio3_pause: x\n");
  DirEthtoolBackend backend(dir.path());
  LogCapture log;

  absl::StatusOr<std::unique_ptr<EthtoolDevice>> device = backend.Open("eth0");
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ((*device)->driver(), "mlx5_core");
  EXPECT_THAT((*device)->stat_names(), ElementsAre("rx_prio3_pause"));
  const std::string logged = log.Take();
  EXPECT_THAT(logged, HasSubstr(stats + ":3: no ':' in \"garbage here\""));
  EXPECT_THAT(logged, HasSubstr(stats + ":4: \"tx_prio3_pause: x\" is not"));

  absl::StatusOr<std::span<const uint64_t>> values = (*device)->Read();
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_THAT(*values, ElementsAre(5u));
  EXPECT_THAT(log.Take(), Not(HasSubstr("garbage")));  // the same problems: said once

  WriteFile(stats, "rx_prio3_pause: 6\nrx_prio3_pause 7\n");
  values = (*device)->Read();
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_THAT(*values, ElementsAre(6u));
  EXPECT_THAT(log.Take(), HasSubstr(stats + ":2: no ':'"));
}

TEST(DirEthtoolBackend, OpenAndReadStatuses) {
  TempDir dir;
  DirEthtoolBackend backend(dir.path());
  EXPECT_TRUE(absl::IsNotFound(backend.Open("eth0").status()));

  WriteFile(fs::path(dir.path()) / "lo" / "driver", "\n");
  WriteFile(fs::path(dir.path()) / "lo" / "stats", "");
  EXPECT_TRUE(absl::IsUnimplemented(backend.Open("lo").status()));

  WriteFile(fs::path(dir.path()) / "eth0" / "driver", "mlx5_core\n");
  WriteFile(fs::path(dir.path()) / "eth0" / "stats", "rx_prio3_pause: 1\n");
  absl::StatusOr<std::unique_ptr<EthtoolDevice>> device = backend.Open("eth0");
  ASSERT_TRUE(device.ok()) << device.status();
  ASSERT_TRUE((*device)->Read().ok());
  WriteFile(fs::path(dir.path()) / "eth0" / "driver", "bnxt_en\n");
  EXPECT_TRUE(absl::IsFailedPrecondition((*device)->Read().status()));
  fs::remove(fs::path(dir.path()) / "eth0" / "stats");
  EXPECT_TRUE(absl::IsNotFound((*device)->Read().status()));
}

}  // namespace
}  // namespace railwatch
