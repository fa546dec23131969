#include "collectors/rdma_sysfs_collector.h"

#include "collectors/rdma_attributes.h"
#include "collectors/verbs_devices.h"

#include <dirent.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/vocabulary.h"
#include "support/recording_emitter.h"
#include "support/ttar.h"

namespace railwatch {
namespace rdma_sysfs_collector_test {

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
  // Counters are counters; the port attributes and info series are gauges.
  for (size_t i = 0; i < e.names.size(); ++i) {
    const bool total = e.names[i].find("_total{") != std::string::npos;
    EXPECT_EQ(e.kinds[i], total ? MetricKind::kCounter : MetricKind::kGauge) << e.names[i];
  }
  // Every hw_counter of this mlx5 has a canonical name; `lifespan` is not a counter at all.
  for (const std::string& name : e.names) {
    EXPECT_EQ(name.find("lifespan"), std::string::npos) << name;
    EXPECT_EQ(name.find("fabric_rdma_driver_stat_total{counter=\"out_of_sequence\""),
              std::string::npos);
  }

  // Port attributes: "4: ACTIVE" (this fixture's mlx5 phys_state says "4: ACTIVE" too),
  // "25 Gb/sec (1X EDR)".
  EXPECT_EQ(e.GetGauge(Key("fabric_rdma_port_state", "mlx5_0", "1")), 4.0);
  EXPECT_EQ(e.GetGauge(Key("fabric_rdma_port_physical_state", "mlx5_0", "1")), 4.0);
  EXPECT_EQ(e.GetGauge(Key("fabric_rdma_port_rate_bytes_per_second", "mlx5_0", "1")), 25e9 / 8);
  EXPECT_EQ(e.GetGauge(Key("fabric_rdma_port_rate_bytes_per_second", "mlx4_0", "1")), 40e9 / 8);
  // Device info, node_guid without its trailing newline; link layer despite mlx4 port 2's
  // extra blank line.
  EXPECT_EQ(e.GetGauge("fabric_rdma_device_info{board_id=\"SM_2001000001034\",device=\"mlx5_0\","
                       "fw_ver=\"14.28.2006\",hca_type=\"MT4118\","
                       "node_guid=\"0a7f:bc12:45ef:d23b\"}"),
            1.0);
  EXPECT_EQ(e.GetGauge("fabric_rdma_port_info{device=\"mlx4_0\",link_layer=\"InfiniBand\","
                       "port=\"2\"}"),
            1.0);
}

TEST(RdmaSysfsCollector, NodeExporterFixtureNoPmaIsAbsentAndCountersExtWins) {
  FixtureRun run("sysfs_infiniband_node_exporter_sys.ttar", "sys");
  ASSERT_TRUE(run.status.ok()) << run.status;
  const RecordingEmitter& e = run.emitter;

  // i40iw0 answers "N/A (no PMA)" everywhere: no counter series at all, never zeros; only
  // what it does have (state, rate, device info).
  for (const std::string& name : e.names) {
    if (name.find("device=\"i40iw0\"") == std::string::npos) continue;
    EXPECT_EQ(name.find("_total"), std::string::npos) << name;
  }
  EXPECT_EQ(e.GetGauge(Key("fabric_rdma_port_rate_bytes_per_second", "i40iw0", "1")), 10e9 / 8);
  EXPECT_EQ(e.GetGauge(Key("fabric_rdma_port_state", "i40iw0", "1")), 4.0);
  // mlx4 port 2: counters/port_xmit_data reads 0 but counters_ext/port_xmit_data_64 has the
  // real 64-bit value, which is preferred.
  EXPECT_EQ(e.Get(Key("fabric_rdma_port_transmit_bytes_total", "mlx4_0", "2")),
            uint64_t{3733440} * 4);
  EXPECT_EQ(e.Get(Key("fabric_rdma_port_receive_bytes_total", "mlx4_0", "2")),
            uint64_t{4631917} * 4);
  // A saturated 32-bit counter is reported as read, and flagged: it has stopped counting.
  EXPECT_EQ(e.Get(Key("fabric_rdma_port_transmit_wait_total", "mlx4_0", "1")), 4294967295u);
  EXPECT_EQ(e.GetGauge("fabric_rdma_counter_saturated{counter=\"port_xmit_wait\","
                       "device=\"mlx4_0\",port=\"1\"}"),
            1.0);
  // Port 2's port_xmit_wait (3846) is not saturated: no saturation series for it.
  EXPECT_FALSE(e.GetGauge("fabric_rdma_counter_saturated{counter=\"port_xmit_wait\","
                          "device=\"mlx4_0\",port=\"2\"}")
                   .has_value());
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
  // Only the two files present became counter series: a missing counter is absent.
  EXPECT_EQ(e.counters.size(), 2u);

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

TEST(RdmaSysfsCollector, DetailCountersAreReadEveryDetailIntervalTheRestEveryCycle) {
  TempDir dir;
  const std::string port = absl::StrCat(dir.path(), "/class/infiniband/mlx5_0/ports/1");
  std::filesystem::create_directories(port + "/counters");
  std::filesystem::create_directories(port + "/hw_counters");
  // Read every cycle: a playbook's counter. Detail: a CQE error count and a driver-only one.
  std::ofstream(port + "/counters/symbol_error") << "1\n";
  std::ofstream(port + "/hw_counters/req_cqe_error") << "10\n";
  std::ofstream(port + "/hw_counters/vendor_only_thing") << "100\n";
  ASSERT_FALSE(FindMetric("fabric_rdma_symbol_errors_total")->detail);
  ASSERT_TRUE(FindMetric("fabric_rdma_requester_cqe_errors_total")->detail);
  FakeClock clock;
  RdmaSysfsCollector::Options options{dir.path(), absl::Hours(1)};
  options.detail_interval = absl::Seconds(10);
  RdmaSysfsCollector c(options, clock);
  RecordingEmitter e;
  const std::string cqe = Key("fabric_rdma_requester_cqe_errors_total", "mlx5_0", "1");
  const std::string driver = "fabric_rdma_driver_stat_total{counter=\"vendor_only_thing\",device=\"mlx5_0\",port=\"1\"}";
  // The first cycle reads everything, so that every series has its first point at once.
  ASSERT_TRUE(c.Collect(e).ok());
  EXPECT_EQ(e.Get(cqe), 10u);
  EXPECT_EQ(e.Get(driver), 100u);
  const size_t first_cycle = e.points;

  Overwrite(port + "/counters/symbol_error", "2\n");
  Overwrite(port + "/hw_counters/req_cqe_error", "11\n");
  Overwrite(port + "/hw_counters/vendor_only_thing", "101\n");
  for (int second = 1; second < 10; ++second) {
    clock.Advance(absl::Seconds(1));
    ASSERT_TRUE(c.Collect(e).ok());
    EXPECT_EQ(e.Get(Key("fabric_rdma_symbol_errors_total", "mlx5_0", "1")), 2u);
    EXPECT_EQ(e.Get(cqe), 10u) << "read again after " << second << " s";
    EXPECT_EQ(e.Get(driver), 100u);
  }
  // Nine cycles without the two detail counters.
  EXPECT_EQ(e.points - first_cycle, 9 * (first_cycle - 2));
  clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(c.Collect(e).ok());
  EXPECT_EQ(e.Get(cqe), 11u);
  EXPECT_EQ(e.Get(driver), 101u);

  // Zero (the collector's own default): every cycle.
  options.detail_interval = absl::ZeroDuration();
  RdmaSysfsCollector every(options, clock);
  RecordingEmitter e2;
  ASSERT_TRUE(every.Collect(e2).ok());
  Overwrite(port + "/hw_counters/req_cqe_error", "12\n");
  clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(every.Collect(e2).ok());
  EXPECT_EQ(e2.Get(cqe), 12u);
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

// Builds a device directory the way the kernel lays one out: attributes, a `device` symlink to
// the PCI function (with its driver, NUMA node and netdevs), and per-port counter groups.
class SysfsTree {
 public:
  explicit SysfsTree(const std::string& root) : root_(root) {}

  void Write(const std::string& relative, const std::string& content) {
    const std::filesystem::path path = std::filesystem::path(root_) / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << content;
  }
  void AddPciFunction(const std::string& device, const std::string& pci, const std::string& driver,
                      const std::string& numa, const std::vector<std::string>& netdevs) {
    const std::string fn = absl::StrCat("devices/pci0000:00/", pci);
    Write(absl::StrCat(fn, "/numa_node"), numa + "\n");
    for (const auto& n : netdevs) {
      std::filesystem::create_directories(absl::StrCat(root_, "/", fn, "/net/", n));
    }
    std::filesystem::create_directories(absl::StrCat(root_, "/bus/pci/drivers/", driver));
    std::filesystem::create_symlink(absl::StrCat(root_, "/bus/pci/drivers/", driver),
                                    absl::StrCat(root_, "/", fn, "/driver"));
    const std::string dev_dir = absl::StrCat(root_, "/class/infiniband/", device);
    std::filesystem::create_directories(dev_dir);
    std::filesystem::create_symlink(absl::StrCat("../../../", fn), dev_dir + "/device");
  }

 private:
  std::string root_;
};

TEST(RdmaSysfsCollector, DriversWithoutPmaCountersMapToCanonicalNames) {
  TempDir dir;
  SysfsTree tree(dir.path());
  // bnxt_re has no counters/ at all: its transport counters live in hw_counters/.
  tree.AddPciFunction("bnxt_re0", "0000:ca:00.0", "bnxt_en", "1", {"ens1f0np0"});
  tree.Write("class/infiniband/bnxt_re0/fw_ver", "220.0.57.0\n");
  tree.Write("class/infiniband/bnxt_re0/ports/1/state", "4: ACTIVE\n");
  tree.Write("class/infiniband/bnxt_re0/ports/1/phys_state", "5: LinkUp\n");
  tree.Write("class/infiniband/bnxt_re0/ports/1/rate", "200 Gb/sec (4X HDR)\n");
  tree.Write("class/infiniband/bnxt_re0/ports/1/link_layer", "Ethernet\n");
  tree.Write("class/infiniband/bnxt_re0/ports/1/gid_attrs/ndevs/0", "ens1f0np0\n");
  tree.Write("class/infiniband/bnxt_re0/ports/1/gid_attrs/ndevs/1", "ens1f0np0\n");
  tree.Write("class/infiniband/bnxt_re0/ports/1/hw_counters/tx_bytes", "5000\n");
  tree.Write("class/infiniband/bnxt_re0/ports/1/hw_counters/rx_pkts", "40\n");
  tree.Write("class/infiniband/bnxt_re0/ports/1/hw_counters/seq_err_naks_rcvd", "6\n");
  tree.Write("class/infiniband/bnxt_re0/ports/1/hw_counters/max_retry_exceeded", "2\n");
  tree.Write("class/infiniband/bnxt_re0/ports/1/hw_counters/to_retransmits", "9\n");
  tree.Write("class/infiniband/bnxt_re0/ports/1/hw_counters/oos_drop_count", "11\n");
  tree.Write("class/infiniband/bnxt_re0/ports/1/hw_counters/res_rx_pci_err", "1\n");
  tree.Write("class/infiniband/bnxt_re0/ports/1/hw_counters/active_qps", "128\n");
  tree.Write("class/infiniband/bnxt_re0/ports/1/hw_counters/lifespan", "10\n");
  // irdma (E810) names its counters in camel case, and gen3 with spaces.
  tree.AddPciFunction("irdma0", "0000:51:00.0", "ice", "-1", {"ens2f0"});
  tree.Write("class/infiniband/irdma0/ports/1/hw_counters/cnpSent", "77\n");
  tree.Write("class/infiniband/irdma0/ports/1/hw_counters/RxECNMrkd", "88\n");
  tree.Write("class/infiniband/irdma0/ports/1/hw_counters/Rcvd Out of order packets", "3\n");
  tree.Write("class/infiniband/irdma0/ports/1/hw_counters/ip4InOctets", "123\n");
  // EFA: SRD retransmissions and unresponsive peers; device-wide hw_counters too.
  tree.Write("class/infiniband/rdmap16s27/ports/1/hw_counters/retrans_pkts", "15\n");
  tree.Write("class/infiniband/rdmap16s27/ports/1/hw_counters/unresponsive_remote_events",
             "1\n");
  tree.Write("class/infiniband/rdmap16s27/hw_counters/submitted_cmds", "900\n");

  FakeClock clock;
  RdmaSysfsCollector c({dir.path()}, clock);
  RecordingEmitter e;
  ASSERT_TRUE(c.Collect(e).ok());

  EXPECT_EQ(e.Get(Key("fabric_rdma_port_transmit_bytes_total", "bnxt_re0", "1")), 5000u);
  EXPECT_EQ(e.Get(Key("fabric_rdma_port_receive_packets_total", "bnxt_re0", "1")), 40u);
  EXPECT_EQ(e.Get(Key("fabric_rdma_packet_sequence_errors_total", "bnxt_re0", "1")), 6u);
  EXPECT_EQ(e.Get(Key("fabric_rdma_transport_retries_exceeded_total", "bnxt_re0", "1")), 2u);
  EXPECT_EQ(e.Get(Key("fabric_rdma_local_ack_timeout_errors_total", "bnxt_re0", "1")), 9u);
  EXPECT_EQ(e.Get(Key("fabric_rdma_out_of_sequence_total", "bnxt_re0", "1")), 11u);
  EXPECT_EQ(e.Get("fabric_rdma_driver_stat_total{counter=\"res_rx_pci_err\","
                  "device=\"bnxt_re0\",port=\"1\"}"),
            1u);
  EXPECT_EQ(e.GetGauge("fabric_rdma_driver_gauge{counter=\"active_qps\",device=\"bnxt_re0\","
                       "port=\"1\"}"),
            128.0);
  EXPECT_EQ(e.GetGauge(Key("fabric_rdma_port_physical_state", "bnxt_re0", "1")), 5.0);
  EXPECT_EQ(e.GetGauge(Key("fabric_rdma_port_rate_bytes_per_second", "bnxt_re0", "1")),
            200e9 / 8);
  // NIC -> netdev through the GID table (de-duplicated), PCI address, driver, NUMA node.
  EXPECT_EQ(e.GetGauge("fabric_rdma_port_info{device=\"bnxt_re0\",link_layer=\"Ethernet\","
                       "netdev=\"ens1f0np0\",port=\"1\"}"),
            1.0);
  EXPECT_EQ(e.GetGauge("fabric_rdma_device_info{device=\"bnxt_re0\",driver=\"bnxt_en\","
                       "fw_ver=\"220.0.57.0\",netdevs=\"ens1f0np0\",numa_node=\"1\","
                       "pci_address=\"0000:ca:00.0\"}"),
            1.0);
  // NUMA node -1 means "unknown": no label. The port has no GID table: the PCI function's
  // netdev stands in.
  EXPECT_EQ(e.GetGauge("fabric_rdma_device_info{device=\"irdma0\",driver=\"ice\","
                       "netdevs=\"ens2f0\",pci_address=\"0000:51:00.0\"}"),
            1.0);
  EXPECT_EQ(e.GetGauge("fabric_rdma_port_info{device=\"irdma0\",netdev=\"ens2f0\","
                       "port=\"1\"}"),
            1.0);

  EXPECT_EQ(e.Get(Key("fabric_roce_cnp_sent_total", "irdma0", "1")), 77u);
  EXPECT_EQ(e.Get(Key("fabric_roce_ecn_marked_packets_total", "irdma0", "1")), 88u);
  EXPECT_EQ(e.Get(Key("fabric_rdma_out_of_sequence_total", "irdma0", "1")), 3u);
  EXPECT_EQ(e.Get("fabric_rdma_driver_stat_total{counter=\"ip4InOctets\","
                  "device=\"irdma0\",port=\"1\"}"),
            123u);

  EXPECT_EQ(e.Get(Key("fabric_rdma_retransmitted_packets_total", "rdmap16s27", "1")), 15u);
  EXPECT_EQ(e.Get(Key("fabric_rdma_unresponsive_remote_events_total", "rdmap16s27", "1")), 1u);
  EXPECT_EQ(e.Get("fabric_rdma_driver_stat_total{counter=\"submitted_cmds\","
                  "device=\"rdmap16s27\"}"),
            900u);

  for (const std::string& name : e.names) {
    EXPECT_EQ(name.find("lifespan"), std::string::npos) << name;
    // A mapped counter is not reported a second time under its driver name.
    EXPECT_EQ(name.find("counter=\"seq_err_naks_rcvd\""), std::string::npos) << name;
  }
}

// What LLDP may announce for a port, for topology discovery: the netdev's MAC (RoCE) and the
// port GUID (InfiniBand: GID 0's low 64 bits).
TEST(RdmaSysfsCollector, PortInfoCarriesTheMacAndOnInfinibandThePortGuid) {
  TempDir dir;
  SysfsTree tree(dir.path());
  tree.AddPciFunction("mlx5_0", "0000:0c:00.0", "mlx5_core", "0", {"enp12s0np0"});
  tree.Write("class/infiniband/mlx5_0/ports/1/link_layer", "Ethernet\n");
  tree.Write("class/infiniband/mlx5_0/ports/1/gid_attrs/ndevs/0", "enp12s0np0\n");
  tree.Write("class/infiniband/mlx5_0/ports/1/gids/0", "fe80:0000:0000:0000:0e42:a1ff:fe65:8c4a\n");
  tree.Write("class/net/enp12s0np0/address", "0c:42:a1:65:8c:4a\n");
  tree.AddPciFunction("mlx5_1", "0000:0d:00.0", "mlx5_core", "0", {"ibp13s0"});
  tree.Write("class/infiniband/mlx5_1/ports/1/link_layer", "InfiniBand\n");
  tree.Write("class/infiniband/mlx5_1/ports/1/gids/0", "fe80:0000:0000:0000:0c42:a103:0065:8c4b\n");
  FakeClock clock;
  RdmaSysfsCollector c({dir.path()}, clock);
  RecordingEmitter e;
  ASSERT_TRUE(c.Collect(e).ok());
  EXPECT_EQ(e.GetGauge("fabric_rdma_port_info{device=\"mlx5_0\",link_layer=\"Ethernet\","
                       "mac=\"0c:42:a1:65:8c:4a\",netdev=\"enp12s0np0\",port=\"1\"}"),
            1.0);
  // No address file for ibp13s0 here: no mac label, and the GUID from GID 0.
  EXPECT_EQ(e.GetGauge("fabric_rdma_port_info{device=\"mlx5_1\",link_layer=\"InfiniBand\","
                       "netdev=\"ibp13s0\",port=\"1\",port_guid=\"0c42:a103:0065:8c4b\"}"),
            1.0);
}

TEST(RdmaSysfsCollector, NarrowPmaCounterSaturationIsFlaggedAndClears) {
  TempDir dir;
  const std::string port = absl::StrCat(dir.path(), "/class/infiniband/mlx5_0/ports/1");
  std::filesystem::create_directories(port + "/counters");
  // link_downed is an 8-bit PMA counter: it stops at 255.
  std::ofstream(port + "/counters/link_downed") << "254\n";
  FakeClock clock;
  RdmaSysfsCollector c({dir.path(), absl::Hours(1)}, clock);
  RecordingEmitter e;
  ASSERT_TRUE(c.Collect(e).ok());
  const std::string saturated =
      "fabric_rdma_counter_saturated{counter=\"link_downed\",device=\"mlx5_0\",port=\"1\"}";
  EXPECT_FALSE(e.GetGauge(saturated).has_value());

  Overwrite(port + "/counters/link_downed", "255\n");
  ASSERT_TRUE(c.Collect(e).ok());
  EXPECT_EQ(e.GetGauge(saturated), 1.0);

  // Cleared (perfquery -R): counting again, and the flag says so.
  Overwrite(port + "/counters/link_downed", "0\n");
  ASSERT_TRUE(c.Collect(e).ok());
  EXPECT_EQ(e.GetGauge(saturated), 0.0);
}

TEST(RdmaSysfsCollector, PortGoingDownIsSeenEveryCycle) {
  TempDir dir;
  SysfsTree tree(dir.path());
  tree.Write("class/infiniband/mlx5_3/ports/1/state", "4: ACTIVE\n");
  tree.Write("class/infiniband/mlx5_3/ports/1/phys_state", "5: LinkUp\n");
  tree.Write("class/infiniband/mlx5_3/ports/1/rate", "400 Gb/sec (4X NDR)\n");
  FakeClock clock;
  RdmaSysfsCollector c({dir.path(), absl::Hours(1)}, clock);
  RecordingEmitter e;
  ASSERT_TRUE(c.Collect(e).ok());
  EXPECT_EQ(e.GetGauge(Key("fabric_rdma_port_state", "mlx5_3", "1")), 4.0);
  EXPECT_EQ(e.GetGauge(Key("fabric_rdma_port_rate_bytes_per_second", "mlx5_3", "1")),
            400e9 / 8);

  const std::string port = absl::StrCat(dir.path(), "/class/infiniband/mlx5_3/ports/1");
  Overwrite(port + "/state", "1: DOWN\n");
  Overwrite(port + "/phys_state", "3: Disabled\n");
  Overwrite(port + "/rate", "200 Gb/sec (2X NDR)\n");
  clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(c.Collect(e).ok());
  EXPECT_EQ(e.GetGauge(Key("fabric_rdma_port_state", "mlx5_3", "1")), 1.0);
  EXPECT_EQ(e.GetGauge(Key("fabric_rdma_port_physical_state", "mlx5_3", "1")), 3.0);
  EXPECT_EQ(e.GetGauge(Key("fabric_rdma_port_rate_bytes_per_second", "mlx5_3", "1")),
            200e9 / 8);
}

TEST(RdmaAttributes, ParsesStatesAndRates) {
  EXPECT_EQ(ParseNumberedState("4: ACTIVE\n")->number, 4);
  EXPECT_EQ(ParseNumberedState("5: LinkUp")->name, "LinkUp");
  EXPECT_FALSE(ParseNumberedState("ACTIVE").has_value());
  EXPECT_FALSE(ParseNumberedState("x: ACTIVE").has_value());
  // Found by tests/fuzz/sysfs_fuzz (regressions/sysfs_fuzz/state-negative.txt).
  EXPECT_FALSE(ParseNumberedState("-5: LinkUp").has_value());
  EXPECT_FALSE(ParseNumberedState("256: ACTIVE").has_value());
  EXPECT_EQ(ParseNumberedState("0: NOP")->number, 0);
  EXPECT_EQ(ParseRateBitsPerSecond("100 Gb/sec (4X EDR)"), 100e9);
  EXPECT_EQ(ParseRateBitsPerSecond("2.5 Gb/sec (1X SDR)"), 2.5e9);
  EXPECT_EQ(ParseRateBitsPerSecond("10 Gb/sec (4X)"), 10e9);
  EXPECT_FALSE(ParseRateBitsPerSecond("fast").has_value());
  EXPECT_FALSE(ParseRateBitsPerSecond("").has_value());
  // Found by tests/fuzz/sysfs_fuzz (regressions/sysfs_fuzz/): numbers SimpleAtod reads that no
  // port runs at.
  EXPECT_FALSE(ParseRateBitsPerSecond("inf Gb/sec (4X EDR)").has_value());
  EXPECT_FALSE(ParseRateBitsPerSecond("nan Gb/sec").has_value());
  EXPECT_FALSE(ParseRateBitsPerSecond("1e400 Gb/sec").has_value());
  EXPECT_FALSE(ParseRateBitsPerSecond("1e300 Mb/sec").has_value());
  EXPECT_EQ(ParseRateBitsPerSecond("800 Gb/sec (4X XDR)"), 800e9);
  // Verbs codes: 4X (2) EDR (32) = 100 Gb/s, 4X NDR = 400 Gb/s, 1X SDR = 2.5 Gb/s.
  EXPECT_EQ(VerbsRateBitsPerSecond(32, 2), 100e9);
  EXPECT_EQ(VerbsRateBitsPerSecond(128, 2), 400e9);
  EXPECT_EQ(VerbsRateBitsPerSecond(1, 1), 2.5e9);
  EXPECT_FALSE(VerbsRateBitsPerSecond(3, 2).has_value());
}

TEST(VerbsDevices, WithoutKernelRdmaTheListFailsAndTheCollectorFallsBackQuietly) {
  // On a kernel without RDMA (this CI's), libibverbs cannot list devices; on one with RDMA it
  // lists exactly what /sys/class/infiniband holds.
  absl::StatusOr<std::vector<std::string>> names = ListVerbsDevices();
  std::error_code ec;
  const bool kernel_rdma = std::filesystem::is_directory("/sys/class/infiniband", ec);
  if (!kernel_rdma) {
    EXPECT_FALSE(names.ok() && !names->empty());
    FakeClock clock;
    RdmaSysfsCollector c(RdmaSysfsCollector::Options{}, clock);
    RecordingEmitter e;
    EXPECT_TRUE(c.Collect(e).ok());
    EXPECT_FALSE(c.using_verbs());
    EXPECT_EQ(c.ports(), 0u);
  } else {
    ASSERT_TRUE(names.ok()) << names.status();
    size_t sysfs_devices = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/sys/class/infiniband")) {
      (void)entry;
      ++sysfs_devices;
    }
    EXPECT_EQ(names->size(), sysfs_devices);
  }
}

}  // namespace
}  // namespace railwatch
