// A healthy simulated fabric with its noise on (bursts of a job's rate, bursts of benign
// pauses) is not all quiet, but stays well inside every shipped playbook's thresholds
// (rules/*.yaml): sampled every second as the host agent samples it, over the playbooks' own
// windows, with a wide margin.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "unit/sim_host/sim_host_util.h"

namespace railwatch::sim {
namespace sim_healthy_test {

using testing::HostSim;

constexpr int kHosts = 8, kNics = 4, kSeconds = 120;

struct Sample {
  std::map<std::string, uint64_t> eth;
  uint64_t xmit_data = 0, ecn_marked = 0, out_of_sequence = 0, symbol_errors = 0,
           link_error_recovery = 0;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

TEST(SimHealthy, BurstyNoiseStaysWellInsideEveryPlaybook) {
  SysfsFabric::Options o;
  o.hosts = kHosts;
  o.nics_per_host = kNics;
  o.jobs = {{"a", 1, 5, 0.8}, {"b", 6, 7, 0.5}};  // host 8 keeps the background rhythm
  o.bursty = true;
  o.seed = 3;
  HostSim sim(o);
  // samples[t][nic index] every second, as the agent reads.
  std::vector<std::vector<Sample>> samples;
  for (int t = 0; t <= kSeconds; ++t) {
    sim.RunTo(absl::Seconds(t));
    std::vector<Sample>& row = samples.emplace_back();
    for (int h = 1; h <= kHosts; ++h) {
      for (int k = 0; k < kNics; ++k) {
        Sample& s = row.emplace_back();
        s.eth = sim.Ethtool(h, k);
        s.xmit_data = sim.Sysfs(h, k, "counters/port_xmit_data");
        s.ecn_marked = sim.Sysfs(h, k, "hw_counters/np_ecn_marked_roce_packets");
        s.out_of_sequence = sim.Sysfs(h, k, "hw_counters/out_of_sequence");
        s.symbol_errors = sim.Sysfs(h, k, "counters/symbol_error");
        s.link_error_recovery = sim.Sysfs(h, k, "counters/link_error_recovery");
      }
    }
  }
  // Rate of `value` for NIC i over the `window` seconds ending at t.
  auto rate = [&](int t, int window, int i, auto value) {
    return static_cast<double>(value(samples[t][i]) - value(samples[t - window][i])) / window;
  };
  auto eth = [](const char* name) { return [name](const Sample& s) { return s.eth.at(name); }; };
  double max_tx_pause = 0, max_rx_pause = 0, max_paused_us = 0, max_prio0 = 0, min_peer_ratio = 1,
         min_leaf_ratio = 1e9;
  bool bursts_seen = false;
  for (int t = 3; t <= kSeconds; ++t) {
    for (int i = 0; i < kHosts * kNics; ++i) {
      max_tx_pause = std::max(max_tx_pause, rate(t, 3, i, eth("tx_prio3_pause")));
      max_rx_pause = std::max(max_rx_pause, rate(t, 3, i, eth("rx_prio3_pause")));
      if (rate(t, 1, i, eth("rx_prio3_pause")) > 15) bursts_seen = true;
      if (t >= 10) max_paused_us = std::max(max_paused_us, rate(t, 10, i, eth("rx_prio3_pause_duration")));
      if (t >= 30) max_prio0 = std::max(max_prio0, rate(t, 30, i, eth("tx_prio0_bytes")));
    }
    // straggler_rail: every job NIC against the median of the others of its rail and job.
    if (t >= 5) {
      for (const SimJob& job : o.jobs) {
        for (int k = 0; k < kNics; ++k) {
          std::vector<double> tx;
          for (int h = job.first_host; h <= job.last_host; ++h) {
            tx.push_back(rate(t, 5, (h - 1) * kNics + k, [](const Sample& s) { return s.xmit_data * 4; }));
          }
          for (size_t a = 0; a < tx.size(); ++a) {
            std::vector<double> others;
            for (size_t b = 0; b < tx.size(); ++b) {
              if (b != a) others.push_back(tx[b]);
            }
            min_peer_ratio = std::min(min_peer_ratio, tx[a] / Median(others));
          }
        }
      }
    }
    // ecn_misconfiguration: each leaf's marks against the median of the other leaves.
    if (t >= 20) {
      std::vector<double> leaf(kNics, 0);
      for (int i = 0; i < kHosts * kNics; ++i) {
        leaf[i % kNics] += rate(t, 20, i, [](const Sample& s) { return s.ecn_marked; });
      }
      for (int k = 0; k < kNics; ++k) {
        std::vector<double> others = leaf;
        others.erase(others.begin() + k);
        min_leaf_ratio = std::min(min_leaf_ratio, leaf[k] / Median(others));
      }
    }
  }
  EXPECT_TRUE(bursts_seen);          // noise there is
  EXPECT_LT(max_tx_pause, 200);      // pfc_storm: 2000/s over 3 s
  EXPECT_LT(max_rx_pause, 200);      // pfc_paused_nics: 1000/s over 3 s
  EXPECT_LT(max_paused_us, 50000);   // pfc_deadlock: 990,000 µs/s over 10 s
  EXPECT_LT(max_prio0, 1e7);         // wrong_traffic_class: 100 MB/s on priority 0 over 30 s
  EXPECT_GT(min_peer_ratio, 0.85);   // straggler_rail: 0.7 of the rail peers over 5 s
  EXPECT_GT(min_leaf_ratio, 0.5);    // ecn_misconfiguration: 0.1 of the other leaves over 20 s

  // link_degradation, roce_retransmissions, pfc_storm's stall events: nothing, or next to it.
  const std::vector<Sample>& last = samples.back();
  for (int k = 0; k < kNics; ++k) {
    std::vector<double> corrected;
    for (int h = 0; h < kHosts; ++h) {
      const int i = h * kNics + k;
      EXPECT_EQ(last[i].symbol_errors, 0u);
      EXPECT_EQ(last[i].link_error_recovery, 0u);
      EXPECT_EQ(last[i].eth.at("rx_crc_errors_phy"), 0u);
      EXPECT_EQ(last[i].eth.at("tx_pause_storm_warning_events"), 0u);
      EXPECT_LT(rate(kSeconds, 60, i, [](const Sample& s) { return s.out_of_sequence; }), 1);
      corrected.push_back(rate(kSeconds, kSeconds, i, eth("rx_corrected_bits_phy")));
    }
    for (double c : corrected) {
      EXPECT_LT(c, 1e6);
      EXPECT_LT(c / Median(corrected), 5);
    }
  }
}

}  // namespace
}  // namespace railwatch::sim
