// The simulated leaves' PFC faults: a deadlock (a stuck queue that is no storm) and the PFC
// storm spreading through the spines (their flags' parsers: tests/unit/fault_flags_test.cc).
#include <fstream>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "sim/fault_specs.h"
#include "support/ttar.h"
#include "unit/sim_gnmi/sim_gnmi_fixture.h"
#include "unit/sim_kinds_truth.h"
#include "yaml-cpp/yaml.h"

namespace railwatch::sim::testing {
namespace switch_faults_test {

const absl::Time kStart = absl::FromUnixSeconds(1'800'000'000);
constexpr absl::Duration kTick = absl::Milliseconds(100);

// A switch fabric whose NICs all keep moving 4 GB per 100 ms each way, ticked every 100 ms.
class Ticked {
 public:
  explicit Ticked(SwitchFabric::Options o) {
    GiveKindsTruth(o);
    absl::StatusOr<std::unique_ptr<SwitchFabric>> f = SwitchFabric::Create(o, kStart);
    EXPECT_TRUE(f.ok()) << f.status();
    if (f.ok()) fabric_ = std::move(*f);
    hosts_ = o.hosts;
    nics_ = o.nics_per_host;
  }
  void RunUntil(absl::Duration t) {
    for (; now_ + kTick <= t; now_ += kTick) {
      ++ticks_;
      ASSERT_TRUE(
          fabric_
              ->Update(kStart + now_ + kTick, EveryNic(hosts_, nics_, 4'000'000'000ull * ticks_,
                                                       4'000'000'000ull * ticks_))
              .ok());
    }
  }
  PortCounters Port(int sw, int port) const { return CountersOf(*fabric_, sw, port); }
  // Every port's counters, switch by switch.
  std::vector<std::vector<PortCounters>> All() const {
    std::vector<std::vector<PortCounters>> out(fabric_->switches().size());
    for (size_t s = 0; s < out.size(); ++s) {
      for (size_t p = 0; p < fabric_->switches()[s].ports.size(); ++p)
        out[s].push_back(Port(static_cast<int>(s), static_cast<int>(p)));
    }
    return out;
  }
  std::unique_ptr<SwitchFabric> fabric_;

 private:
  int hosts_ = 0, nics_ = 0;
  uint64_t ticks_ = 0;
  absl::Duration now_;
};

TEST(SwitchDeadlock, QueueThreeSendsNothingAndTheWatchdogHoldsItStormedUntilTheEnd) {
  railwatch::testing::TempDir dir;
  SwitchFabric::Options o;
  o.hosts = 4;
  o.nics_per_host = 2;
  o.spines = 1;
  o.dialects = {"sonic"};
  o.ground_truth_file = dir.path() + "/truth.jsonl";
  o.deadlocks.push_back({"gpu-node-002", "mlx5_1", absl::Seconds(2), absl::Seconds(10)});
  Ticked f(o);
  ASSERT_NE(f.fabric_, nullptr);
  // leaf-r1, host 2 on panel position 1.
  f.RunUntil(absl::Seconds(2) - kTick);
  const PortCounters healthy = f.Port(1, 1);
  EXPECT_GT(healthy.queue_pkts[kRocePriority], 0u);
  EXPECT_FALSE(healthy.wd_stormed[kRocePriority]);
  f.RunUntil(absl::Seconds(2) + absl::Milliseconds(100));
  EXPECT_EQ(f.Port(1, 1).wd_detected[kRocePriority], 0u) << "detection takes 200 ms";
  f.RunUntil(absl::Seconds(3));
  const PortCounters stuck = f.Port(1, 1);
  EXPECT_EQ(stuck.wd_detected[kRocePriority], 1u);
  EXPECT_TRUE(stuck.wd_stormed[kRocePriority]);
  f.RunUntil(absl::Seconds(11));
  const PortCounters later = f.Port(1, 1);
  // Nothing left queue 3 since the deadlock began; the watchdog never restored in between.
  EXPECT_EQ(later.queue_pkts[kRocePriority], stuck.queue_pkts[kRocePriority]);
  EXPECT_EQ(later.queue_octets[kRocePriority], stuck.queue_octets[kRocePriority]);
  EXPECT_EQ(later.wd_detected[kRocePriority], 1u);
  EXPECT_EQ(later.wd_restored[kRocePriority], 0u);
  EXPECT_TRUE(later.wd_stormed[kRocePriority]);
  EXPECT_GT(later.queue_dropped[kRocePriority], stuck.queue_dropped[kRocePriority])
      << "the watchdog drops";
  EXPECT_GT(later.queue_pkts[0], stuck.queue_pkts[0]) << "best effort still flows";
  EXPECT_GT(f.Port(1, 0).queue_pkts[kRocePriority], healthy.queue_pkts[kRocePriority] * 4)
      << "the other ports carry on";
  EXPECT_GT(later.in_octets, stuck.in_octets) << "the port still receives";
  // Over at 12 s: restored once, and the queue sends again.
  f.RunUntil(absl::Seconds(13));
  const PortCounters over = f.Port(1, 1);
  EXPECT_FALSE(over.wd_stormed[kRocePriority]);
  EXPECT_EQ(over.wd_restored[kRocePriority], 1u);
  EXPECT_GT(over.queue_pkts[kRocePriority], later.queue_pkts[kRocePriority]);

  std::ifstream in(o.ground_truth_file);
  std::string line, extra;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_FALSE(std::getline(in, extra));
  YAML::Node t = YAML::Load(line);  // JSON is YAML
  EXPECT_EQ(t["fault"].as<std::string>(), "pfc_deadlock");
  EXPECT_EQ(t["host"].as<std::string>(), "gpu-node-002");
  EXPECT_EQ(t["device"].as<std::string>(), "mlx5_1");
  EXPECT_EQ(t["switch"].as<std::string>(), "leaf-r1");
  EXPECT_EQ(t["interface"].as<std::string>(), "Ethernet4");
  EXPECT_EQ(t["queue"].as<int>(), 3);
  EXPECT_EQ(t["duration_ms"].as<int64_t>(), 10000);
  EXPECT_EQ(t["injected_at_unix_nano"].as<int64_t>(), absl::ToUnixNanos(kStart + absl::Seconds(2)));
}

// rules/pfc-storm.yaml must not see a storm: no switch port receives pauses at a storm's rate
// (2,000/s); the deadlocked NIC sends its port under 100/s (the watchdog branch's bar) while
// the port pauses it at the quantum refresh rate; every other port stays benign.
TEST(SwitchDeadlock, PausesGoBothWaysOnTheLinkAndNoPortLooksLikeAStormSource) {
  SwitchFabric::Options o;
  o.hosts = 4;
  o.nics_per_host = 2;
  o.spines = 2;
  o.deadlocks.push_back({"gpu-node-003", "mlx5_0", absl::Seconds(1)});
  Ticked f(o);
  ASSERT_NE(f.fabric_, nullptr);
  f.RunUntil(absl::Seconds(2));
  const auto before = f.All();
  f.RunUntil(absl::Seconds(12));
  const auto after = f.All();
  for (size_t s = 0; s < after.size(); ++s) {
    for (size_t p = 0; p < after[s].size(); ++p) {
      const double rx =
          (after[s][p].in_pfc[kRocePriority] - before[s][p].in_pfc[kRocePriority]) / 10.0;
      const double tx =
          (after[s][p].out_pfc[kRocePriority] - before[s][p].out_pfc[kRocePriority]) / 10.0;
      if (s == 0 && p == 2) {  // leaf-r0, gpu-node-003
        EXPECT_GT(rx, 30) << "the NIC holds the port's queue";
        EXPECT_LT(rx, 100);
        EXPECT_NEAR(tx, 12000, 200) << "the port holds the NIC in XOFF";
      } else {
        EXPECT_LT(rx, 10) << "switch " << s << " port " << p;
        EXPECT_LT(tx, 10) << "switch " << s << " port " << p;
      }
    }
  }
}

TEST(SwitchDeadlock, UnknownNicIsRefused) {
  SwitchFabric::Options o;
  o.hosts = 2;
  o.nics_per_host = 2;
  o.deadlocks.push_back({"gpu-node-003", "mlx5_0", absl::Seconds(1)});
  absl::StatusOr<std::unique_ptr<SwitchFabric>> f = SwitchFabric::Create(o, kStart);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(std::string(f.status().message()).find("gpu-node-003/mlx5_0 is not a simulated NIC"),
            std::string::npos);
}

// Pauses per second over (from, to] on every port: received [0] and sent [1], switch by switch.
using PauseRates = std::vector<std::vector<std::pair<double, double>>>;
PauseRates Rates(Ticked& f, absl::Duration from, absl::Duration to) {
  f.RunUntil(from);
  const auto a = f.All();
  f.RunUntil(to);
  const auto b = f.All();
  const double seconds = absl::ToDoubleSeconds(to - from);
  PauseRates r(a.size());
  for (size_t s = 0; s < a.size(); ++s) {
    for (size_t p = 0; p < a[s].size(); ++p) {
      r[s].push_back({(b[s][p].in_pfc[kRocePriority] - a[s][p].in_pfc[kRocePriority]) / seconds,
                      (b[s][p].out_pfc[kRocePriority] - a[s][p].out_pfc[kRocePriority]) / seconds});
    }
  }
  return r;
}

TEST(SwitchStorm, SpreadsThroughTheSpinesToTheOtherLeavesAndPointsOnlyAtItsSource) {
  SwitchFabric::Options o;
  o.hosts = 4;
  o.nics_per_host = 2;
  o.hosts_per_leaf = 2;
  o.spines = 2;
  // gpu-node-003/mlx5_1: leaf-g1-r1 (index 3), panel position 0.
  o.storms.push_back({"gpu-node-003", "mlx5_1", absl::Seconds(2), absl::ZeroDuration()});
  Ticked f(o);
  ASSERT_NE(f.fabric_, nullptr);
  const std::vector<SimSwitch>& sw = f.fabric_->switches();
  constexpr int kLeaf = 3;
  // The storm's first second (it starts on the 2 s tick): the leaf relays, the spines not yet.
  const PauseRates first = Rates(f, absl::Seconds(2), absl::Milliseconds(2900));
  EXPECT_NEAR(first[kLeaf][1].second, 3000, 300);
  for (int s = 4; s < 6; ++s) {
    for (const auto& [rx, tx] : first[s]) EXPECT_LT(tx, 20) << sw[s].name;
  }
  const PauseRates r = Rates(f, absl::Seconds(4), absl::Seconds(9));
  // Whoever receives more than a storm's 2,000/s on some port is the source's port, or a
  // port whose peer is itself paused that hard (rules/lists.yaml pfc_paused_switches): only
  // the NIC is a source.
  auto paused_hard = [&](int s) {
    for (const auto& [rx, tx] : r[s]) {
      if (rx > 1000) return true;
    }
    return false;
  };
  for (int s = 0; s < 6; ++s) {
    for (size_t p = 0; p < r[s].size(); ++p) {
      const auto [rx, tx] = r[s][p];
      const SwitchPort& port = sw[s].ports[p];
      if (s == kLeaf && p == 0) {
        EXPECT_NEAR(rx, 20000, 200);
      } else if (rx > 2000) {
        ASSERT_GE(port.peer_switch, 0)
            << sw[s].name << " " << port.name << " receives a storm from a NIC";
        EXPECT_TRUE(paused_hard(port.peer_switch)) << sw[s].name << " " << port.name;
      }
      if (s == kLeaf) {
        if (p != 0) {
          EXPECT_NEAR(tx, 3000, 150) << "the leaf relays on " << port.name;
        }
      } else if (s < 4 && port.uplink) {
        EXPECT_NEAR(rx, 1500, 120) << "the spines relay on to " << sw[s].name << " " << port.name;
        EXPECT_LT(rx, 2000);
        EXPECT_LT(tx, 10);
      } else if (s < 4) {
        EXPECT_LT(rx, 10) << sw[s].name << " " << port.name
                          << ": hosts of other leaves are not paused";
        EXPECT_LT(tx, 10) << sw[s].name << " " << port.name;
      } else if (port.peer_switch == kLeaf) {
        EXPECT_NEAR(rx, 3000, 150) << sw[s].name << " receives the leaf's relay";
        EXPECT_LT(tx, 10) << sw[s].name << " does not pause the storm's leaf";
      } else {
        EXPECT_NEAR(tx, 1500, 120) << sw[s].name << " " << port.name;
      }
    }
  }
}

TEST(SwitchNoise, BenignPauseRateIsPerPortAndMayBeZero) {
  for (const double rate : {0.0, 10.0}) {
    SwitchFabric::Options o;
    o.hosts = 4;
    o.nics_per_host = 2;
    o.spines = 1;
    o.benign_pause_rate = rate;
    Ticked f(o);
    ASSERT_NE(f.fabric_, nullptr);
    const PauseRates r = Rates(f, absl::ZeroDuration(), absl::Seconds(20));
    for (const auto& ports : r) {
      for (const auto& [rx, tx] : ports) {
        EXPECT_NEAR(rx, rate, rate / 2 + 1e-9);
        EXPECT_NEAR(tx, rate, rate / 2 + 1e-9);
      }
    }
  }
}

// What the switch agent reads from a SONiC leaf: the queues' watchdog fields and packets.
nlohmann::json SonicQueues(std::unique_ptr<::gnmi::gNMI::Stub> stub,
                           std::unique_ptr<grpc::ClientContext> ctx, const std::string& port) {
  const ::gnmi::Notification n =
      Once(P("/COUNTERS/" + port + "/Queues", "COUNTERS_DB"), std::move(stub), std::move(ctx));
  return n.update_size() == 1 ? nlohmann::json::parse(n.update(0).val().json_ietf_val())
                              : nlohmann::json();
}

TEST_F(SimGnmiTest, DeadlockedSonicQueueIsStormedAndSendsNothing) {
  SwitchFabric::Options extra;
  extra.deadlocks.push_back({"gpu-node-002", "mlx5_0", absl::Milliseconds(500)});
  Start({"sonic"}, 2, 1, 0, {}, extra);
  for (int i = 0; i < 10; ++i) Advance(absl::Milliseconds(100));
  const nlohmann::json a = SonicQueues(Stub(0), Context(), "Ethernet4");
  for (int i = 0; i < 20; ++i) Advance(absl::Milliseconds(100));
  const nlohmann::json b = SonicQueues(Stub(0), Context(), "Ethernet4");
  ASSERT_TRUE(b.contains("Ethernet4:3")) << b.dump();
  EXPECT_EQ(b["Ethernet4:3"]["PFC_WD_STATUS"], "stormed");
  EXPECT_EQ(b["Ethernet4:3"]["SAI_QUEUE_ATTR_PAUSE_STATUS"], "true");
  EXPECT_EQ(b["Ethernet4:3"]["PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED"], "1");
  EXPECT_EQ(b["Ethernet4:3"]["PFC_WD_QUEUE_STATS_DEADLOCK_RESTORED"], "0");
  EXPECT_EQ(a["Ethernet4:3"]["SAI_QUEUE_STAT_PACKETS"], b["Ethernet4:3"]["SAI_QUEUE_STAT_PACKETS"]);
  EXPECT_EQ(b["Ethernet4:4"]["PFC_WD_STATUS"], "operational");
}

}  // namespace switch_faults_test
}  // namespace railwatch::sim::testing
