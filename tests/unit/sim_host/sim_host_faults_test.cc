// The host-side faults: each moves the counters its playbook reads (rules/*.yaml) past that
// playbook's thresholds, on the faulty NIC only, and writes its ground truth.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "collectors/pread_file.h"
#include "common/text.h"
#include "gtest/gtest.h"
#include "unit/sim_host/sim_host_util.h"

namespace railwatch::sim {
namespace sim_host_faults_test {
namespace fs = std::filesystem;

using testing::HostSim;
using testing::OneJob;

TEST(SimHostFaults, BitErrorsPassTheLinkDegradationThresholdsOnThatLinkOnly) {
  SysfsFabric::Options o = OneJob(3, 2);
  o.bit_errors = {{"gpu-node-002", "mlx5_1", absl::Seconds(1), 120}};
  HostSim sim(o);
  sim.RunTo(absl::Seconds(1));
  const auto before = sim.Ethtool(2, 1);
  const auto peer_before = sim.Ethtool(1, 1);
  sim.RunTo(absl::Seconds(31));
  const auto after = sim.Ethtool(2, 1);
  auto delta = [&](const std::string& n) { return after.at(n) - before.at(n); };
  // 2 symbol errors a second: over 20 (the playbook's count in 10 minutes) within 30 s, in
  // sysfs and in both ethtool symbol counters; FCS errors too.
  EXPECT_GT(sim.Sysfs(2, 1, "counters/symbol_error"), 30u);
  EXPECT_LT(sim.Sysfs(2, 1, "counters/symbol_error"), 100u);
  EXPECT_GT(delta("rx_pcs_symbol_err_phy"), 30u);
  EXPECT_EQ(delta("rx_symbol_err_phy"), delta("rx_pcs_symbol_err_phy"));
  EXPECT_GT(delta("rx_crc_errors_phy"), 10u);
  EXPECT_EQ(sim.Sysfs(2, 1, "counters/port_rcv_errors"), after.at("rx_crc_errors_phy"));
  // FEC works hard: over 1e6 bits/s and ten times its rail peer.
  const double corrected = static_cast<double>(delta("rx_corrected_bits_phy")) / 30;
  const double peer = static_cast<double>(sim.Ethtool(1, 1).at("rx_corrected_bits_phy") -
                                          peer_before.at("rx_corrected_bits_phy")) / 30;
  EXPECT_GT(corrected, 1e6);
  EXPECT_GT(corrected, 10 * peer);
  // The leaf sees corrupted packets from it; no other link has errors.
  std::vector<NicTraffic> traffic;
  sim.fabric().ReadTraffic(traffic);
  EXPECT_GT(traffic[3].corrupted_packets, 10u);
  EXPECT_EQ(traffic[2].corrupted_packets, 0u);
  EXPECT_EQ(sim.Sysfs(2, 0, "counters/symbol_error"), 0u);
  EXPECT_EQ(sim.Sysfs(1, 1, "counters/symbol_error"), 0u);
  EXPECT_EQ(sim.Sysfs(2, 1, "counters/link_downed"), 0u);  // still up

  std::vector<nlohmann::json> truth = sim.Truth();
  ASSERT_EQ(truth.size(), 1u);
  EXPECT_EQ(truth[0]["fault"], "bit_errors");
  EXPECT_EQ(truth[0]["device"], "mlx5_1");
  EXPECT_EQ(truth[0]["per_minute"], 120);
}

TEST(SimHostFaults, AStragglerMovesItsShareOfItsRailPeersWithItsLinkRateUnchanged) {
  SysfsFabric::Options o = OneJob(4, 2);
  o.stragglers = {{"gpu-node-003", "mlx5_1", absl::Seconds(2), 0.5}};
  HostSim sim(o);
  sim.RunTo(absl::Seconds(2));
  std::vector<uint64_t> before;
  for (int h = 1; h <= 4; ++h) before.push_back(sim.Sysfs(h, 1, "counters/port_xmit_data"));
  sim.RunTo(absl::Seconds(7));
  std::vector<double> moved;
  for (int h = 1; h <= 4; ++h) {
    moved.push_back(static_cast<double>(sim.Sysfs(h, 1, "counters/port_xmit_data") - before[h - 1]));
  }
  // Under the playbook's 0.7 of its peers and above its 0.05, over a 5 s window.
  for (int peer : {0, 1, 3}) EXPECT_NEAR(moved[2] / moved[peer], 0.5, 0.05) << peer;
  EXPECT_EQ(ReadFile(sim.Host(3) + "/class/infiniband/mlx5_1/ports/1/rate").value_or(""),
            "400 Gb/sec (4X NDR)\n");
  EXPECT_EQ(sim.Truth().size(), 1u);
  EXPECT_EQ(sim.Truth()[0]["fault"], "straggler");
  EXPECT_EQ(sim.Truth()[0]["factor"], 0.5);
}

TEST(SimHostFaults, WrongPriorityMovesTheHostsRoceToPriorityZero) {
  SysfsFabric::Options o = OneJob(2, 2);
  o.wrong_priorities = {{"gpu-node-002", absl::Seconds(2)}};
  HostSim sim(o);
  sim.RunTo(absl::Seconds(3));
  const auto before = sim.Ethtool(2, 0);
  const auto other_before = sim.Ethtool(1, 0);
  sim.RunTo(absl::Seconds(33));
  const auto after = sim.Ethtool(2, 0);
  auto rate = [](const std::map<std::string, uint64_t>& a, const std::map<std::string, uint64_t>& b,
                 const std::string& n) { return static_cast<double>(b.at(n) - a.at(n)) / 30; };
  // Over the playbook's 100 MB/s on priority 0, and the lossless priority under 10% of the
  // RDMA bytes; the other host keeps priority 3.
  EXPECT_GT(rate(before, after, "tx_prio0_bytes"), 1e8);
  EXPECT_LT(rate(before, after, "tx_prio3_bytes"), 0.1 * rate(before, after, "tx_vport_rdma_unicast_bytes"));
  EXPECT_GT(rate(before, after, "tx_vport_rdma_unicast_bytes"), 1e8);
  EXPECT_GT(rate(other_before, sim.Ethtool(1, 0), "tx_prio3_bytes"), 1e10);
  std::vector<NicTraffic> traffic;
  sim.fabric().ReadTraffic(traffic);
  EXPECT_EQ(traffic[2].priority, 0);
  EXPECT_EQ(traffic[0].priority, 3);
  ASSERT_EQ(sim.Truth().size(), 1u);
  EXPECT_EQ(sim.Truth()[0]["fault"], "wrong_priority");
  EXPECT_EQ(sim.Truth()[0]["host"], "gpu-node-002");
}

TEST(SimHostFaults, ANicGoneLeavesSysfsAndEthtoolAndItsOpenFilesReadNothing) {
  SysfsFabric::Options o = OneJob(2, 2);
  o.nics_gone = {{"gpu-node-001", "mlx5_1", absl::Seconds(2)}};
  HostSim sim(o);
  sim.RunTo(absl::Seconds(1));
  // Opened before, as the agent holds its counters open.
  absl::StatusOr<PreadFile> held =
      PreadFile::Open(sim.Host(1) + "/class/infiniband/mlx5_1/ports/1/counters/port_xmit_data");
  ASSERT_TRUE(held.ok());
  ASSERT_TRUE(held->ReadCounter()->has_value());
  sim.RunTo(absl::Seconds(3));
  EXPECT_FALSE(fs::exists(sim.Host(1) + "/class/infiniband/mlx5_1"));
  EXPECT_FALSE(fs::exists(sim.Host(1) + "/class/net/enp40s0np0"));
  EXPECT_FALSE(fs::exists(sim.Host(1) + "/ethtool/enp40s0np0"));
  EXPECT_TRUE(fs::exists(sim.Host(1) + "/class/infiniband/mlx5_0"));
  EXPECT_TRUE(fs::exists(sim.Host(1) + "/ethtool/enp24s0np0/stats"));
  absl::StatusOr<std::optional<uint64_t>> v = held->ReadCounter();
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->has_value());
  std::vector<NicTraffic> traffic;
  sim.fabric().ReadTraffic(traffic);
  EXPECT_TRUE(traffic[1].gone);
  EXPECT_FALSE(traffic[1].up);
  EXPECT_FALSE(traffic[0].gone);
  ASSERT_GE(sim.Truth().size(), 1u);
  EXPECT_EQ(sim.Truth()[0]["fault"], "nic_gone");
  EXPECT_EQ(sim.Truth()[0]["device"], "mlx5_1");
}

TEST(SimHostFaults, PacketLossPassesEveryRetransmissionThreshold) {
  SysfsFabric::Options o = OneJob(2, 1);
  o.packet_losses = {{"gpu-node-002", "mlx5_0", absl::Seconds(1), 500}};
  HostSim sim(o);
  sim.RunTo(absl::Seconds(1));
  const uint64_t oos = sim.Sysfs(2, 0, "hw_counters/out_of_sequence");
  const uint64_t nak = sim.Sysfs(2, 0, "hw_counters/packet_seq_err");
  const uint64_t timeouts = sim.Sysfs(2, 0, "hw_counters/local_ack_timeout_err");
  const uint64_t retrans = sim.Sysfs(2, 0, "hw_counters/roce_adp_retrans");
  sim.RunTo(absl::Seconds(61));
  // rules/roce-retransmissions.yaml, per NIC over 1 minute: > 100/s, > 10/s, > 0.05/s, > 10/s.
  EXPECT_NEAR((sim.Sysfs(2, 0, "hw_counters/out_of_sequence") - oos) / 60.0, 500, 25);
  EXPECT_GT((sim.Sysfs(2, 0, "hw_counters/packet_seq_err") - nak) / 60.0, 10);
  EXPECT_GT((sim.Sysfs(2, 0, "hw_counters/local_ack_timeout_err") - timeouts) / 60.0, 0.05);
  EXPECT_GT((sim.Sysfs(2, 0, "hw_counters/roce_adp_retrans") - retrans) / 60.0, 10);
  EXPECT_LT(sim.Sysfs(1, 0, "hw_counters/out_of_sequence"), 10u);
  EXPECT_EQ(sim.Sysfs(1, 0, "hw_counters/packet_seq_err"), 0u);
  ASSERT_EQ(sim.Truth().size(), 1u);
  EXPECT_EQ(sim.Truth()[0]["fault"], "packet_loss");
  EXPECT_EQ(sim.Truth()[0]["per_second"], 500);
}

TEST(SimHostFaults, ADriverReloadRestartsTheCountersAsNoise) {
  SysfsFabric::Options o = OneJob(1, 2);
  o.driver_reloads = {{"gpu-node-001", "mlx5_0", absl::Seconds(2)}};
  HostSim sim(o);
  sim.RunTo(absl::Milliseconds(1900));
  const uint64_t bytes = sim.Sysfs(1, 0, "counters/port_xmit_data");
  const uint64_t eth_bytes = sim.Ethtool(1, 0, "tx_prio3_bytes");
  const uint64_t other = sim.Sysfs(1, 1, "counters/port_xmit_data");
  sim.RunTo(absl::Seconds(2));
  // From 0 again, carrying only this tick's traffic (100 ms at 0.8 of 400 Gb/s = 4 GB).
  EXPECT_LT(sim.Sysfs(1, 0, "counters/port_xmit_data"), bytes);
  EXPECT_LT(sim.Sysfs(1, 0, "counters/port_xmit_data") * 4, 5e9);
  EXPECT_LT(sim.Ethtool(1, 0, "tx_prio3_bytes"), eth_bytes);
  EXPECT_LT(sim.Ethtool(1, 0, "tx_prio3_bytes"), 5e9);
  EXPECT_GT(sim.Sysfs(1, 1, "counters/port_xmit_data"), other);
  std::vector<nlohmann::json> truth = sim.Truth();
  ASSERT_EQ(truth.size(), 1u);
  EXPECT_EQ(truth[0]["noise"], "driver_reload");
  EXPECT_FALSE(truth[0].contains("fault"));
  EXPECT_EQ(truth[0]["at_unix_nano"], absl::ToUnixNanos(sim.t0 + absl::Seconds(2)));
}

TEST(SimHostFaults, RepeatedFlapsAreEachADownAndUpOnEveryCounterWithTheirOwnGroundTruth) {
  SysfsFabric::Options o = OneJob(1, 1);
  o.flaps = ExpandRepeatedFlap({"gpu-node-001", "mlx5_0", 1, absl::Seconds(1), 3, absl::Seconds(2)},
                               absl::Milliseconds(300));
  HostSim sim(o);
  const std::string net = sim.Host(1) + "/class/net/enp24s0np0/";
  EXPECT_EQ(ReadFile(net + "carrier_changes").value_or(""), "1\n");
  sim.RunTo(absl::Milliseconds(1100));
  EXPECT_EQ(ReadFile(net + "carrier").value_or(""), "0\n");
  EXPECT_EQ(ReadFile(net + "operstate").value_or(""), "down\n");
  sim.RunTo(absl::Seconds(7));
  EXPECT_EQ(sim.Sysfs(1, 0, "counters/link_downed"), 3u);
  EXPECT_EQ(ReadFile(net + "carrier_changes").value_or(""), "7\n");
  EXPECT_EQ(ReadFile(net + "carrier_down_count").value_or(""), "3\n");
  EXPECT_EQ(ReadFile(net + "carrier").value_or(""), "1\n");
  EXPECT_EQ(sim.Ethtool(1, 0, "link_down_events_phy"), 3u);
  std::vector<nlohmann::json> truth = sim.Truth();
  ASSERT_EQ(truth.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(truth[i]["fault"], "link_flap");
    EXPECT_EQ(truth[i]["repeat"], i + 1);
    EXPECT_EQ(truth[i]["of"], 3);
    EXPECT_EQ(truth[i]["injected_at_unix_nano"],
              absl::ToUnixNanos(sim.t0 + absl::Seconds(1 + 2 * i)));
  }
}

TEST(SimHostFaults, AStormingNicPausesAtStormRateAndItsLeafRelaysToTheOthers) {
  SysfsFabric::Options o = OneJob(3, 2);
  o.storms = {{"gpu-node-002", "mlx5_1", absl::Seconds(1), absl::Seconds(10)}};
  HostSim sim(o);
  sim.RunTo(absl::Seconds(1));
  const auto source0 = sim.Ethtool(2, 1), relay0 = sim.Ethtool(1, 1), other0 = sim.Ethtool(1, 0);
  sim.RunTo(absl::Seconds(4));
  const auto source = sim.Ethtool(2, 1), relay = sim.Ethtool(1, 1), other = sim.Ethtool(1, 0);
  auto rate = [](const auto& a, const auto& b, const char* n) {
    return static_cast<double>(b.at(n) - a.at(n)) / 3;
  };
  // rules/pfc-storm.yaml: the source sends > 2000/s and is not paused (> 1000/s received);
  // every other NIC behind the leaf receives the relay, and is.
  EXPECT_NEAR(rate(source0, source, "tx_prio3_pause"), 20000, 1000);
  EXPECT_LT(rate(source0, source, "rx_prio3_pause"), 100);
  EXPECT_GT(rate(source0, source, "tx_prio3_pause_duration"), 990000);
  EXPECT_GE(source.at("tx_pause_storm_warning_events") - source0.at("tx_pause_storm_warning_events"), 1u);
  EXPECT_NEAR(rate(relay0, relay, "rx_prio3_pause"), 3000, 300);
  EXPECT_LT(rate(relay0, relay, "tx_prio3_pause"), 100);
  EXPECT_LT(rate(relay0, relay, "rx_prio3_pause_duration"), 500000);  // not a deadlock
  EXPECT_LT(rate(other0, other, "rx_prio3_pause"), 100);  // another rail's leaf
  sim.RunTo(absl::Seconds(12));
  const auto quiet = sim.Ethtool(2, 1);
  sim.RunTo(absl::Seconds(15));
  EXPECT_LT(rate(quiet, sim.Ethtool(2, 1), "tx_prio3_pause"), 100);
}

TEST(SimHostFaults, ADeadlockedNicIsPausedAllTheTimeAndSendsNothing) {
  SysfsFabric::Options o = OneJob(2, 2);
  o.deadlocks = {{"gpu-node-002", "mlx5_0", absl::Seconds(1)}};
  HostSim sim(o);
  sim.RunTo(absl::Seconds(1));
  const auto before = sim.Ethtool(2, 0);
  sim.RunTo(absl::Seconds(11));
  const auto after = sim.Ethtool(2, 0);
  auto rate = [&](const char* n) { return static_cast<double>(after.at(n) - before.at(n)) / 10; };
  // rules/pfc-deadlock.yaml: paused > 990,000 µs a second, under 1 MB/s sent on priority 3.
  EXPECT_GT(rate("rx_prio3_pause_duration"), 990000);
  EXPECT_LE(rate("rx_prio3_pause_duration"), 1e6);
  EXPECT_LT(rate("tx_prio3_bytes"), 1e6);
  EXPECT_NEAR(rate("rx_prio3_pause"), kDeadlockPauseRate, 600);
  // It pauses its port back now and then (the cycle holds both ends): nothing like a storm.
  EXPECT_NEAR(rate("tx_prio3_pause"), kDeadlockNicPauseRate, 15);
}

TEST(SimHostFaults, AnEcnMisconfiguredLeafPausesItsNicsAtCongestionRate) {
  SysfsFabric::Options o = OneJob(4, 2);
  o.hosts_per_leaf = 2;
  o.ecn_misconfigs = {{"leaf-g1-r0", 0, absl::Seconds(1), 3, 1}};
  HostSim sim(o);
  sim.RunTo(absl::Seconds(2));
  std::vector<std::map<std::string, uint64_t>> before;
  for (int h = 1; h <= 4; ++h) before.push_back(sim.Ethtool(h, 0));
  const uint64_t marks_hit = sim.Sysfs(3, 0, "hw_counters/np_ecn_marked_roce_packets");
  const uint64_t marks_ok = sim.Sysfs(1, 0, "hw_counters/np_ecn_marked_roce_packets");
  sim.RunTo(absl::Seconds(22));
  for (int h = 1; h <= 4; ++h) {
    const double pauses =
        static_cast<double>(sim.Ethtool(h, 0, "rx_prio3_pause") - before[h - 1].at("rx_prio3_pause")) / 20;
    if (h >= 3) {
      // Group 1's leaf on rail 0: past rules/ecn-misconfiguration.yaml's 20/s, under the
      // 1000/s that would make the NIC look paused by a storm.
      EXPECT_GT(pauses, 200) << h;
      EXPECT_LT(pauses, 1000) << h;
    } else {
      EXPECT_LT(pauses, 10) << h;
    }
  }
  // The misconfigured leaf marks almost nothing; group 0's leaf of the same rail marks.
  EXPECT_LT(sim.Sysfs(3, 0, "hw_counters/np_ecn_marked_roce_packets") - marks_hit, 200u);
  EXPECT_GT(sim.Sysfs(1, 0, "hw_counters/np_ecn_marked_roce_packets") - marks_ok, 5000u);
}

TEST(SimHostFaults, TargetsThatDoNotExistAreRefusedByName) {
  struct Case {
    std::function<void(SysfsFabric::Options&)> set;
    std::string error;
  };
  const std::vector<Case> cases = {
      {[](auto& o) { o.bit_errors = {{"gpu-node-009", "mlx5_0", absl::Seconds(1)}}; },
       "ber target gpu-node-009/mlx5_0 is not a simulated NIC"},
      {[](auto& o) { o.packet_losses = {{"gpu-node-001", "mlx5_7", absl::Seconds(1)}}; },
       "packet_loss target gpu-node-001/mlx5_7"},
      {[](auto& o) { o.wrong_priorities = {{"node-1", absl::Seconds(1)}}; },
       "wrong_priority target node-1 is not a simulated host"},
      {[](auto& o) { o.nccl_errors = {{"gpu-node-002", absl::Seconds(1)}}; },
       "nccl_error target gpu-node-002 runs no job"},
      {[](auto& o) { o.ecn_misconfigs = {{"leaf-g1-r0", 0, absl::Seconds(1), 3, 1}}; },
       "leaf-g1-r0 is not a simulated leaf (leaf-r0 .. leaf-r1)"},
  };
  for (const Case& c : cases) {
    SysfsFabric::Options o;
    o.hosts = 2;
    o.nics_per_host = 2;
    o.jobs = {{"train", 1, 1, 0.8}};
    o.root = "/nonexistent-never-written";
    c.set(o);
    SysfsFabric fabric(o);
    absl::Status s = fabric.Create(absl::Now());
    EXPECT_NE(s.message().find(c.error), std::string::npos) << s << " / " << c.error;
  }
}

TEST(SimHostFaults, TheSameSeedGivesTheSameCounters) {
  auto run = [](uint64_t seed) {
    SysfsFabric::Options o = OneJob(2, 2);
    o.bursty = true;
    o.seed = seed;
    o.bit_errors = {{"gpu-node-001", "mlx5_0", absl::Seconds(1)}};
    HostSim sim(o);
    sim.RunTo(absl::Seconds(5));
    return std::make_pair(sim.Ethtool(1, 0), sim.Sysfs(2, 1, "counters/port_xmit_data"));
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_NE(run(7), run(8));
}

}  // namespace
}  // namespace railwatch::sim
