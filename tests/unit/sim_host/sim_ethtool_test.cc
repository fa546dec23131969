// The simulated hosts' netdevs and `ethtool -S` dumps, read the way the host agent reads them:
// the netdev selector finds the netdevs, the dump parses without a bad line, and the canonical
// ethtool mapping turns it into the PFC, per-priority and PHY-error series the playbooks read.
#include <filesystem>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "collectors/ethtool_dump.h"
#include "collectors/ethtool_mapping.h"
#include "collectors/link_netdevs.h"
#include "common/labels.h"
#include "common/text.h"
#include "gtest/gtest.h"
#include "unit/sim_host/sim_host_util.h"

namespace railwatch::sim {
namespace sim_ethtool_test {

using testing::HostSim;
using testing::OneJob;

TEST(SimEthtool, NetdevsAreFoundAndTheDumpMapsToTheCanonicalSeries) {
  HostSim sim(OneJob(1, 2));
  sim.RunTo(absl::Seconds(1));

  absl::StatusOr<NetdevSelector> selector = NetdevSelector::Create({sim.Host(1), ""});
  ASSERT_TRUE(selector.ok()) << selector.status();
  EXPECT_EQ(selector->List(), (std::vector<std::string>{"enp24s0np0", "enp40s0np0"}));
  EXPECT_EQ(*ReadFile(sim.Host(1) + "/ethtool/enp24s0np0/driver"), "mlx5_core\n");

  absl::StatusOr<std::string> text = ReadFile(sim.Host(1) + "/ethtool/enp40s0np0/stats");
  ASSERT_TRUE(text.ok()) << text.status();
  // Lines of one length (64 bytes, padded with blanks), so that a rewrite never moves one.
  EXPECT_EQ(text->rfind("NIC statistics:", 0), 0u) << text->substr(0, 80);
  EXPECT_EQ(text->substr(64, 17), "     rx_packets: ");
  EXPECT_EQ(text->size() % 64, 0u);
  for (size_t i = 63; i < text->size(); i += 64) ASSERT_EQ((*text)[i], '\n') << i;
  EthtoolStatsText stats = ParseEthtoolStats(*text);
  EXPECT_TRUE(stats.problems.empty());
  std::set<std::string> series;
  for (const EthtoolMapping::Target& t : EthtoolMapping::Canonical().Map("mlx5_core", stats.names)) {
    series.insert(FormatSeries(t.spec->name, t.labels));
  }
  for (const char* want : {
           "fabric_pfc_pause_frames_total{direction=\"tx\",priority=\"3\"}",
           "fabric_pfc_pause_frames_total{direction=\"rx\",priority=\"3\"}",
           "fabric_pfc_pause_duration_microseconds_total{direction=\"rx\",priority=\"3\"}",
           "fabric_pfc_pause_transitions_total{direction=\"rx\",priority=\"3\"}",
           "fabric_pfc_pause_storm_warning_events_total",
           "fabric_pfc_pause_storm_error_events_total",
           "fabric_netdev_priority_transmit_bytes_total{priority=\"3\"}",
           "fabric_netdev_priority_transmit_bytes_total{priority=\"0\"}",
           "fabric_netdev_priority_receive_bytes_total{priority=\"3\"}",
           "fabric_netdev_receive_crc_errors_total",
           "fabric_netdev_symbol_errors_total",
           "fabric_netdev_fec_corrected_bits_total",
           "fabric_netdev_discards_total{direction=\"rx\"}",
           "fabric_netdev_link_down_events_total",
           "fabric_netdev_pause_control_frames_total{direction=\"tx\"}"}) {
    EXPECT_TRUE(series.contains(want)) << want;
  }
  // PFC is on priority 3 only: no other priority has pause counters, and 802.3x pause is off.
  EXPECT_FALSE(series.contains("fabric_pfc_pause_frames_total{direction=\"tx\",priority=\"0\"}"));
  EXPECT_FALSE(series.contains("fabric_link_pause_frames_total{direction=\"tx\"}"));
}

TEST(SimEthtool, CountersMoveWithTheSysfsCounters) {
  HostSim sim(OneJob(2, 2));
  sim.RunTo(absl::Seconds(1));
  const auto e0 = sim.Ethtool(2, 1);
  const uint64_t tx0 = sim.Sysfs(2, 1, "counters/port_xmit_data");
  const uint64_t rx0 = sim.Sysfs(2, 1, "counters/port_rcv_data");
  sim.RunTo(absl::Seconds(11));
  const auto e1 = sim.Ethtool(2, 1);
  const uint64_t tx_bytes = (sim.Sysfs(2, 1, "counters/port_xmit_data") - tx0) * 4;
  const uint64_t rx_bytes = (sim.Sysfs(2, 1, "counters/port_rcv_data") - rx0) * 4;
  auto delta = [&](const std::string& name) { return e1.at(name) - e0.at(name); };
  // RoCE is on priority 3 and in the vport RDMA counters, byte for byte with the IB counters
  // (within the rounding to 4-byte words).
  EXPECT_NEAR(static_cast<double>(delta("tx_prio3_bytes")), static_cast<double>(tx_bytes), 400);
  EXPECT_NEAR(static_cast<double>(delta("rx_prio3_bytes")), static_cast<double>(rx_bytes), 400);
  EXPECT_EQ(delta("tx_vport_rdma_unicast_bytes"), delta("tx_prio3_bytes"));
  // About 0.8 of 400 Gb/s for 10 s.
  EXPECT_GT(tx_bytes, 0.75 * 50e9 * 10);
  EXPECT_LT(tx_bytes, 0.85 * 50e9 * 10);
  // Priority 0 carries the kernel's trickle: about 1.5 MB/s.
  EXPECT_GT(delta("tx_prio0_bytes"), 5e6);
  EXPECT_LT(delta("tx_prio0_bytes"), 30e6);
  EXPECT_EQ(delta("tx_bytes"), delta("tx_prio0_bytes"));
  // Benign pauses, about 2/s each way, each a few microseconds; none of the faults' counters.
  EXPECT_GT(delta("tx_prio3_pause"), 5u);
  EXPECT_LT(delta("tx_prio3_pause"), 50u);
  EXPECT_GT(delta("rx_prio3_pause"), 5u);
  EXPECT_LT(delta("rx_prio3_pause_duration"), 2000u);
  EXPECT_EQ(delta("rx_pause_ctrl_phy"), delta("rx_prio3_pause"));
  EXPECT_EQ(delta("tx_pause_storm_warning_events"), 0u);
  EXPECT_EQ(delta("rx_crc_errors_phy"), 0u);
  EXPECT_EQ(delta("rx_pcs_symbol_err_phy"), 0u);
  // FEC corrects some bits on every PAM4 link.
  EXPECT_GT(delta("rx_corrected_bits_phy"), 1e5);
  EXPECT_LT(delta("rx_corrected_bits_phy"), 1e6);
}

TEST(SimEthtool, DumpsAreRewrittenAtMostEveryInterval) {
  SysfsFabric::Options o = OneJob(1, 1);
  o.ethtool_interval = absl::Milliseconds(500);
  HostSim sim(o);
  sim.RunTo(absl::Milliseconds(500));
  const uint64_t first = sim.Ethtool(1, 0, "tx_prio3_bytes");
  EXPECT_GT(first, 0u);
  sim.RunTo(absl::Milliseconds(900));
  EXPECT_EQ(sim.Ethtool(1, 0, "tx_prio3_bytes"), first);
  sim.RunTo(absl::Milliseconds(1000));
  EXPECT_GT(sim.Ethtool(1, 0, "tx_prio3_bytes"), first);
}

TEST(SimEthtool, OffWritesNoDumps) {
  SysfsFabric::Options o = OneJob(1, 1);
  o.ethtool = false;
  HostSim sim(o);
  sim.RunTo(absl::Seconds(1));
  EXPECT_FALSE(std::filesystem::exists(sim.Host(1) + "/ethtool"));
  // The netdev itself is still there: it is the host's, not the dump's.
  EXPECT_TRUE(std::filesystem::exists(sim.Host(1) + "/class/net/enp24s0np0/device"));
}

}  // namespace
}  // namespace railwatch::sim
