#include "sim/sysfs_fabric.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "collectors/pread_file.h"
#include "collectors/rdma_sysfs_collector.h"
#include "common/text.h"
#include "gtest/gtest.h"
#include "support/recording_emitter.h"
#include "support/ttar.h"
#include "unit/sim_kinds_truth.h"

namespace railwatch::sim {
namespace sysfs_fabric_test {

uint64_t ReadCounter(const std::string& path) {
  absl::StatusOr<PreadFile> f = PreadFile::Open(path);
  EXPECT_TRUE(f.ok()) << f.status();
  auto v = f->ReadCounter();
  EXPECT_TRUE(v.ok() && v->has_value()) << path;
  return v.ok() && v->has_value() ? **v : 0;
}

std::string ReadText(const std::string& path) { return std::string(FirstLine(*ReadFile(path))); }

TEST(SysfsFabric, TrafficMovesAndFlapIsInjectedWithGroundTruth) {
  railwatch::testing::TempDir dir;
  SysfsFabric::Options o;
  o.root = dir.path();
  o.hosts = 2;
  o.flaps.push_back({"gpu-node-002", "mlx5_3", 1, absl::Seconds(5), absl::Milliseconds(300)});
  o.ground_truth_file = dir.path() + "/truth.jsonl";
  railwatch::sim::testing::GiveKindsTruth(o);
  SysfsFabric fabric(o);
  const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);
  ASSERT_TRUE(fabric.Create(t0).ok());

  const std::string port = dir.path() + "/gpu-node-002/class/infiniband/mlx5_3/ports/1";
  const std::string other = dir.path() + "/gpu-node-001/class/infiniband/mlx5_3/ports/1";
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/.gpu-node-002.staging"));
  EXPECT_EQ(ReadText(port + "/state"), "4: ACTIVE");
  const uint64_t bytes0 = ReadCounter(port + "/counters/port_xmit_data");

  for (int i = 1; i <= 49; ++i) ASSERT_TRUE(fabric.Tick(t0 + absl::Milliseconds(100 * i)).ok());
  EXPECT_GT(ReadCounter(port + "/counters/port_xmit_data"), bytes0);
  EXPECT_EQ(ReadCounter(port + "/counters/link_downed"), 0u);
  EXPECT_FALSE(std::filesystem::exists(o.ground_truth_file));

  ASSERT_TRUE(fabric.Tick(t0 + absl::Seconds(5)).ok());
  EXPECT_EQ(ReadCounter(port + "/counters/link_downed"), 1u);
  EXPECT_EQ(ReadText(port + "/state"), "1: DOWN");
  EXPECT_EQ(ReadCounter(other + "/counters/link_downed"), 0u);  // only the chosen port
  const std::string truth = *ReadFile(o.ground_truth_file);
  EXPECT_NE(truth.find("\"host\": \"gpu-node-002\""), std::string::npos) << truth;
  EXPECT_NE(truth.find(absl::StrCat("\"injected_at_unix_nano\": ",
                                    absl::ToUnixNanos(t0 + absl::Seconds(5)))),
            std::string::npos)
      << truth;

  // A down link carries no traffic, then comes back.
  const uint64_t during = ReadCounter(port + "/counters/port_xmit_data");
  ASSERT_TRUE(fabric.Tick(t0 + absl::Milliseconds(5200)).ok());
  EXPECT_EQ(ReadCounter(port + "/counters/port_xmit_data"), during);
  ASSERT_TRUE(fabric.Tick(t0 + absl::Milliseconds(5400)).ok());
  EXPECT_EQ(ReadText(port + "/state"), "4: ACTIVE");
  EXPECT_EQ(ReadCounter(port + "/counters/link_downed"), 1u);
}

TEST(SysfsFabric, TreeReadsLikeARealHostToTheRdmaCollector) {
  railwatch::testing::TempDir dir;
  SysfsFabric::Options o;
  o.root = dir.path();
  o.hosts = 1;
  o.nics_per_host = 8;
  SysfsFabric fabric(o);
  ASSERT_TRUE(fabric.Create(absl::FromUnixSeconds(1'800'000'000)).ok());

  FakeClock clock;
  RdmaSysfsCollector collector({fabric.HostRoot("gpu-node-001")}, clock);
  railwatch::testing::RecordingEmitter e;
  ASSERT_TRUE(collector.Collect(e).ok());
  EXPECT_EQ(collector.ports(), 8u);
  // NIC 5 -> PCI 0000:68:00.0 on NUMA node 1, netdev enp104s0np0, driver mlx5_core.
  EXPECT_EQ(e.GetGauge("fabric_rdma_port_info{device=\"mlx5_5\",link_layer=\"Ethernet\","
                       "netdev=\"enp104s0np0\",port=\"1\"}"),
            1.0);
  bool found_device = false;
  for (const std::string& name : e.names) {
    if (name.rfind("fabric_rdma_device_info{", 0) != 0) continue;
    if (name.find("device=\"mlx5_5\"") == std::string::npos) continue;
    found_device = true;
    EXPECT_NE(name.find("pci_address=\"0000:68:00.0\""), std::string::npos) << name;
    EXPECT_NE(name.find("numa_node=\"1\""), std::string::npos) << name;
    EXPECT_NE(name.find("driver=\"mlx5_core\""), std::string::npos) << name;
  }
  EXPECT_TRUE(found_device);
  EXPECT_EQ(e.GetGauge("fabric_rdma_port_rate_bytes_per_second{device=\"mlx5_0\",port=\"1\"}"),
            400e9 / 8);
  // Every simulated counter has a canonical name except the one mlx5 counter the table leaves
  // to the driver group (rx_icrc_encapsulated).
  size_t driver_counters = 0;
  for (const std::string& name : e.names) {
    if (name.rfind("fabric_rdma_driver_stat_total{", 0) == 0) ++driver_counters;
  }
  EXPECT_EQ(driver_counters, 8u);
}

TEST(SysfsFabric, UnknownFlapTargetIsRejected) {
  railwatch::testing::TempDir dir;
  SysfsFabric::Options o;
  o.root = dir.path();
  o.hosts = 1;
  o.flaps.push_back({"gpu-node-009", "mlx5_0", 1, absl::Seconds(1)});
  SysfsFabric fabric(o);
  absl::Status s = fabric.Create(absl::Now());
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("gpu-node-009/mlx5_0/1"), std::string::npos);
}

}  // namespace sysfs_fabric_test
}  // namespace railwatch::sim
