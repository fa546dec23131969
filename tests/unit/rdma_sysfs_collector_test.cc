#include "collectors/rdma_sysfs_collector.h"

#include <dirent.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/recording_emitter.h"
#include "support/ttar.h"

namespace railwatch {
namespace {

using ::railwatch::testing::FixturePath;
using ::railwatch::testing::RecordingEmitter;
using ::railwatch::testing::TempDir;
using ::railwatch::testing::UnpackTtar;

std::string Key(const std::string& name, const std::string& device, const std::string& port) {
  return absl::StrCat(name, "{device=\"", device, "\",port=\"", port, "\"}");
}

size_t OpenFds() {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    (void)e;
    ++n;
  }
  return n;
}

// Unpacks a ttar fixture and runs one collection over the sysfs root inside it.
struct FixtureRun {
  FixtureRun(const std::string& ttar, const std::string& sysfs_subdir) {
    EXPECT_TRUE(UnpackTtar(FixturePath(ttar), dir.path()).ok());
    collector = std::make_unique<RdmaSysfsCollector>(
        RdmaSysfsCollector::Options{absl::StrCat(dir.path(), "/", sysfs_subdir)}, clock);
    status = collector->Collect(emitter);
  }
  TempDir dir;
  FakeClock clock;
  std::unique_ptr<RdmaSysfsCollector> collector;
  RecordingEmitter emitter;
  absl::Status status;
};

TEST(RdmaSysfsCollector, ProcfsFixtureMlx5CountersAndHwCounters) {
  FixtureRun run("sysfs_infiniband_procfs_fixtures.ttar", "fixtures/sys");
  ASSERT_TRUE(run.status.ok()) << run.status;
  const RecordingEmitter& e = run.emitter;
  const RdmaSysfsCollector& c = *run.collector;

  // IB data counters count 4-byte words: scaled into bytes.
  EXPECT_EQ(e.Get(Key("fabric_rdma_port_transmit_bytes_total", "mlx5_0", "1")),
            uint64_t{2880761508848} * 4);
  EXPECT_EQ(e.Get(Key("fabric_rdma_port_receive_bytes_total", "mlx5_0", "1")),
            uint64_t{18126345378} * 4);
  EXPECT_EQ(e.Get(Key("fabric_rdma_link_downed_total", "mlx5_0", "1")), 0u);
  // hw_counters, named canonically.
  EXPECT_EQ(e.Get(Key("fabric_rdma_out_of_sequence_total", "mlx5_0", "1")), 1u);
  EXPECT_EQ(e.Get(Key("fabric_rdma_local_ack_timeout_errors_total", "mlx5_0", "1")), 131u);
  EXPECT_EQ(e.Get(Key("fabric_roce_adaptive_retransmissions_total", "mlx5_0", "1")), 99u);
  EXPECT_EQ(e.Get(Key("fabric_rdma_requester_cqe_errors_total", "mlx5_0", "1")), 3481u);
  EXPECT_EQ(e.Get(Key("fabric_rdma_responder_cqe_errors_total", "mlx5_0", "1")), 8109u);
  // mlx4 has two ports, each its own series; hfi1 has no hw_counters: those are absent.
  EXPECT_EQ(e.Get(Key("fabric_rdma_port_transmit_wait_total", "mlx4_0", "2")), 3846u);
  EXPECT_EQ(e.Get(Key("fabric_rdma_port_transmit_bytes_total", "hfi1_0", "1")),
            uint64_t{273558326543} * 4);
  EXPECT_FALSE(e.Get(Key("fabric_rdma_out_of_sequence_total", "hfi1_0", "1")).has_value());
  EXPECT_EQ(c.ports(), 4u);
  for (MetricKind k : e.kinds) EXPECT_EQ(k, MetricKind::kCounter);
}

TEST(RdmaSysfsCollector, NodeExporterFixtureNoPmaIsAbsentAndCountersExtWins) {
  FixtureRun run("sysfs_infiniband_node_exporter_sys.ttar", "sys");
  ASSERT_TRUE(run.status.ok()) << run.status;
  const RecordingEmitter& e = run.emitter;

  // i40iw0 answers "N/A (no PMA)" everywhere: no series at all, never zeros.
  EXPECT_FALSE(e.HasDevice("i40iw0"));
  // mlx4 port 2: counters/port_xmit_data reads 0 but counters_ext/port_xmit_data_64 has the
  // real 64-bit value, which is preferred.
  EXPECT_EQ(e.Get(Key("fabric_rdma_port_transmit_bytes_total", "mlx4_0", "2")),
            uint64_t{3733440} * 4);
  EXPECT_EQ(e.Get(Key("fabric_rdma_port_receive_bytes_total", "mlx4_0", "2")),
            uint64_t{4631917} * 4);
  // A saturated 32-bit counter is reported as read.
  EXPECT_EQ(e.Get(Key("fabric_rdma_port_transmit_wait_total", "mlx4_0", "1")), 4294967295u);
}

TEST(RdmaSysfsCollector, NoInfinibandClassIsNotAnError) {
  TempDir dir;
  FakeClock clock;
  RdmaSysfsCollector c({dir.path()}, clock);
  RecordingEmitter e;
  EXPECT_TRUE(c.Collect(e).ok());
  EXPECT_EQ(e.points, 0u);
}

// Writes `content` into an existing file in place, as sysfs (and the simulator) present it.
void Overwrite(const std::string& path, const std::string& content) {
  std::fstream f(path, std::ios::in | std::ios::out);
  f.seekp(0);
  f << content;
  f.close();
  std::filesystem::resize_file(path, content.size());
}

TEST(RdmaSysfsCollector, OpensOnceAndPreadsNewValues) {
  TempDir dir;
  const std::string port = absl::StrCat(dir.path(), "/class/infiniband/mlx5_7/ports/1");
  std::filesystem::create_directories(port + "/counters");
  std::ofstream(port + "/counters/link_downed") << "3\n";
  std::ofstream(port + "/counters/port_xmit_data") << "100\n";
  FakeClock clock;
  RdmaSysfsCollector c({dir.path(), absl::Hours(1)}, clock);
  RecordingEmitter e;
  ASSERT_TRUE(c.Collect(e).ok());
  EXPECT_EQ(c.open_counters(), 2u);
  EXPECT_EQ(e.Get(Key("fabric_rdma_link_downed_total", "mlx5_7", "1")), 3u);
  // Only the two files present became series: a missing counter is absent.
  EXPECT_EQ(e.names.size(), 2u);

  const size_t fds = OpenFds();
  Overwrite(port + "/counters/link_downed", "4\n");
  Overwrite(port + "/counters/port_xmit_data", "12345678901\n");
  clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(c.Collect(e).ok());
  EXPECT_EQ(e.Get(Key("fabric_rdma_link_downed_total", "mlx5_7", "1")), 4u);
  EXPECT_EQ(e.Get(Key("fabric_rdma_port_transmit_bytes_total", "mlx5_7", "1")),
            uint64_t{12345678901} * 4);
  // The second cycle opened nothing new.
  EXPECT_EQ(OpenFds(), fds);

  // A value shrinking in place (a counter reset) must not be misread from a stale tail.
  Overwrite(port + "/counters/link_downed", "0\n");
  ASSERT_TRUE(c.Collect(e).ok());
  EXPECT_EQ(e.Get(Key("fabric_rdma_link_downed_total", "mlx5_7", "1")), 0u);
}

TEST(RdmaSysfsCollector, DeviceThatAppearsIsFoundAtRescan) {
  TempDir dir;
  FakeClock clock;
  RdmaSysfsCollector c({dir.path(), absl::Seconds(30)}, clock);
  RecordingEmitter e;
  ASSERT_TRUE(c.Collect(e).ok());
  const std::string port = absl::StrCat(dir.path(), "/class/infiniband/mlx5_0/ports/1/counters");
  std::filesystem::create_directories(port);
  std::ofstream(port + "/symbol_error") << "7\n";
  clock.Advance(absl::Seconds(10));
  ASSERT_TRUE(c.Collect(e).ok());
  EXPECT_FALSE(e.Get(Key("fabric_rdma_symbol_errors_total", "mlx5_0", "1")).has_value());
  clock.Advance(absl::Seconds(30));
  ASSERT_TRUE(c.Collect(e).ok());
  EXPECT_EQ(e.Get(Key("fabric_rdma_symbol_errors_total", "mlx5_0", "1")), 7u);
}

}  // namespace
}  // namespace railwatch
