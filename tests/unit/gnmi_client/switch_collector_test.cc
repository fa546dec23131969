// The switch collector against an in-process fake gNMI target: SAMPLE and ON_CHANGE updates
// become canonical points and events with the switch label and the notifications' times.
#include <map>
#include <memory>
#include <set>
#include <string>

#include "fake_gnmi_target.h"
#include "gnmi_test_util.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace railwatch::testing {
namespace switch_collector_test {

constexpr char kInOctets[] = "/interfaces/interface[name=Ethernet1]/state/counters/in-octets";
constexpr char kOperStatus[] = "/interfaces/interface[name=Ethernet7]/state/oper-status";
constexpr int64_t kT0 = 1700000000123456789;

class SwitchCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(target_.Start().ok());
    GnmiSwitchCollector::Options options;
    options.targets.push_back(TestTarget("leaf-r0", target_.address()));
    options.channel = FastChannel();
    options.self_labels = {{"agent", "switch-agent-1"}};
    auto c = GnmiSwitchCollector::Create(std::move(options), ShippedProfiles());
    ASSERT_TRUE(c.ok()) << c.status();
    collector_ = *std::move(c);
    collector_->Start();
    ASSERT_TRUE(target_.WaitForStreams(1, absl::Seconds(20)));
  }

  // Waits until the collector has taken in `n` updates in all, then drains them.
  void CollectUpdates(uint64_t n) {
    ASSERT_TRUE(CollectUntil(*collector_, log_, [&] {
      return collector_->target_stats(0).updates >= n;
    }));
    ASSERT_TRUE(collector_->Collect(log_).ok());
  }

  FakeGnmiTarget target_{{}};
  std::unique_ptr<GnmiSwitchCollector> collector_;
  PointLog log_;
};

TEST_F(SwitchCollectorTest, AsksForTheProfilesSubscriptionsInStreamMode) {
  const ::gnmi::SubscribeRequest request = target_.last_request();
  ASSERT_TRUE(request.has_subscribe());
  const ::gnmi::SubscriptionList& list = request.subscribe();
  EXPECT_EQ(list.mode(), ::gnmi::SubscriptionList::STREAM);
  EXPECT_EQ(list.encoding(), ::gnmi::JSON_IETF);
  std::vector<GnmiProfile> profiles = ShippedProfiles();
  const GnmiProfile* openconfig = nullptr;
  for (const GnmiProfile& p : profiles) {
    if (p.name() == "openconfig") openconfig = &p;
  }
  ASSERT_NE(openconfig, nullptr);
  // The optional subscriptions go on streams of their own (refused by this target).
  int shared = 0;
  for (const GnmiSubscriptionSpec& spec : openconfig->subscriptions()) shared += !spec.optional;
  ASSERT_EQ(list.subscription_size(), shared);
  int sample = 0, on_change = 0;
  for (const ::gnmi::Subscription& s : list.subscription()) {
    if (s.mode() == ::gnmi::SAMPLE) {
      ++sample;
      EXPECT_EQ(s.sample_interval(), 1'000'000'000u) << s.DebugString();
    } else if (s.mode() == ::gnmi::ON_CHANGE) {
      ++on_change;
      EXPECT_EQ(s.sample_interval(), 0u);
    }
  }
  EXPECT_GT(sample, 0);
  EXPECT_GT(on_change, 0);
}

TEST_F(SwitchCollectorTest, EverySampleBecomesACounterPointWithItsTimestamp) {
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(target_.Broadcast(UintUpdate(kInOctets, 1000 + 7 * i, kT0 + i * 1'000'000'000LL)),
              1);
  }
  CollectUpdates(5);
  const auto ids = log_.SeriesOf("fabric_switch_interface_receive_bytes_total");
  ASSERT_EQ(ids.size(), 1u);
  const PointLog::Definition& def = log_.definitions[ids[0]];
  EXPECT_EQ(def.kind, MetricKind::kCounter);
  // The switch's own labels only: no host of the agent that collected it.
  EXPECT_EQ(def.labels, (Labels{{"interface", "Ethernet1"}, {"switch", "leaf-r0"}}));
  const auto points = log_.Of("fabric_switch_interface_receive_bytes_total");
  ASSERT_EQ(points.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(points[i].counter, 1000u + 7 * i);
    EXPECT_EQ(points[i].time_unix_nano, kT0 + i * 1'000'000'000LL);
  }
}

TEST_F(SwitchCollectorTest, ReportsTargetHealth) {
  ASSERT_EQ(target_.Broadcast(UintUpdate(kInOctets, 1, kT0)), 1);
  ASSERT_EQ(target_.Broadcast(UintUpdate("/interfaces/interface[name=Ethernet1]/state/no-such-leaf", 1, kT0)), 1);
  ASSERT_TRUE(CollectUntil(*collector_, log_, [&] {
    const auto s = collector_->target_stats(0);
    return s.updates >= 1 && s.unmapped >= 1;
  }));
  ASSERT_TRUE(collector_->Collect(log_).ok());
  const Labels who = {{"agent", "switch-agent-1"}, {"target", "leaf-r0"}};
  const auto connected = log_.Of("railwatch_gnmi_target_connected", who);
  ASSERT_FALSE(connected.empty());
  EXPECT_EQ(connected.back().gauge, 1);
  const auto updates = log_.Of("railwatch_gnmi_target_updates_total", who);
  ASSERT_FALSE(updates.empty());
  EXPECT_EQ(updates.back().counter, 1u);
  const auto unmapped = log_.Of("railwatch_gnmi_unmapped_leaves_total", who);
  ASSERT_FALSE(unmapped.empty());
  EXPECT_EQ(unmapped.back().counter, 1u);
  const auto last = log_.Of("railwatch_gnmi_target_last_update_timestamp_seconds", who);
  ASSERT_FALSE(last.empty());
  EXPECT_NEAR(last.back().gauge, absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()), 60);
}

// The fake target refuses the profile's optional paths (its default), as a switch that does
// not serve them: the counters' stream goes on, the target counts as connected, and the
// refusals are reported apart. Five optional streams: the port's MAC, its speed, the
// transceiver group (one stream for its six paths), the thresholds, the pre-FEC BER.
TEST_F(SwitchCollectorTest, ARefusedOptionalPathCostsNothingElse) {
  ASSERT_TRUE(CollectUntil(*collector_, log_, [&] {
    return collector_->target_stats(0).refused_subscriptions == 5;
  }));
  EXPECT_GE(target_.refusals(), 5);
  EXPECT_EQ(target_.stream_count(), 1);
  ASSERT_EQ(target_.Broadcast(UintUpdate(kInOctets, 5, kT0)), 1);
  CollectUpdates(1);
  const Labels who = {{"agent", "switch-agent-1"}, {"target", "leaf-r0"}};
  const auto connected = log_.Of("railwatch_gnmi_target_connected", who);
  ASSERT_FALSE(connected.empty());
  EXPECT_EQ(connected.back().gauge, 1);
  const auto refused = log_.Of("railwatch_gnmi_target_refused_subscriptions", who);
  ASSERT_FALSE(refused.empty());
  EXPECT_EQ(refused.back().gauge, 5);
  EXPECT_EQ(log_.Of("fabric_switch_interface_receive_bytes_total").size(), 1u);
}

// A target that serves them: the port's MAC becomes an info series' label and its speed, an
// identityref with its module as JSON_IETF writes it, a gauge in bytes per second.
TEST(SwitchCollectorIdentityTest, PortMacAndSpeedFromTheirOwnStreams) {
  FakeGnmiTarget::Options target_options;
  target_options.refused_paths.clear();
  FakeGnmiTarget target(target_options);
  ASSERT_TRUE(target.Start().ok());
  GnmiSwitchCollector::Options options;
  options.targets.push_back(TestTarget("leaf-r0", target.address()));
  options.channel = FastChannel();
  auto c = GnmiSwitchCollector::Create(std::move(options), ShippedProfiles());
  ASSERT_TRUE(c.ok()) << c.status();
  (*c)->Start();
  // Counters, MAC, speed (and the transceivers', thresholds' and pre-FEC BER's streams).
  ASSERT_TRUE(target.WaitForStreams(3, absl::Seconds(20)));
  EXPECT_EQ(target.refusals(), 0);
  target.Broadcast(StringUpdate("/interfaces/interface[name=Ethernet4]/ethernet/state/mac-address",
                                "0C:42:A1:00:00:04", kT0));
  target.Broadcast(StringUpdate("/interfaces/interface[name=Ethernet4]/ethernet/state/port-speed",
                                "openconfig-if-ethernet:SPEED_400GB", kT0));
  PointLog log;
  ASSERT_TRUE(CollectUntil(**c, log, [&] {
    return !log.Of("fabric_switch_interface_info").empty() &&
           !log.Of("fabric_switch_interface_speed_bytes_per_second").empty();
  }));
  const auto info = log.SeriesOf("fabric_switch_interface_info");
  ASSERT_EQ(info.size(), 1u);
  EXPECT_EQ(log.definitions[info[0]].labels,
            (Labels{{"interface", "Ethernet4"}, {"mac", "0C:42:A1:00:00:04"}, {"switch", "leaf-r0"}}));
  EXPECT_EQ(log.Of("fabric_switch_interface_speed_bytes_per_second").back().gauge, 5e10);
  EXPECT_EQ((*c)->target_stats(0).refused_subscriptions, 0);
  (*c)->Stop();
}

TEST_F(SwitchCollectorTest, OperStatusChangesAreGaugesAndEvents) {
  ASSERT_EQ(target_.Broadcast(StringUpdate(kOperStatus, "UP", kT0)), 1);
  ASSERT_EQ(target_.Broadcast(StringUpdate(kOperStatus, "DOWN", kT0 + 10)), 1);
  ASSERT_EQ(target_.Broadcast(StringUpdate(kOperStatus, "DOWN", kT0 + 20)), 1);
  ASSERT_EQ(target_.Broadcast(StringUpdate(kOperStatus, "UP", kT0 + 30)), 1);
  CollectUpdates(4);
  // The updates as sent; later cycles also restate the last value, timed now.
  auto points = log_.Of("fabric_switch_interface_oper_up", {{"interface", "Ethernet7"}});
  std::erase_if(points, [](const PointLog::Point& p) { return p.time_unix_nano > kT0 + 30; });
  ASSERT_EQ(points.size(), 4u);
  EXPECT_EQ(points[0].gauge, 1);
  EXPECT_EQ(points[1].gauge, 0);
  EXPECT_EQ(points[2].gauge, 0);
  EXPECT_EQ(points[3].gauge, 1);
  // One event per change (not for the first sight, not for a repeated DOWN).
  ASSERT_EQ(log_.events.size(), 2u);
  EXPECT_EQ(log_.events[0].kind, "switch.oper_status");
  EXPECT_EQ(log_.events[0].time_unix_nano, kT0 + 10);
  EXPECT_EQ(log_.events[1].time_unix_nano, kT0 + 30);
  EXPECT_EQ(log_.events[0].labels,
            (Labels{{"interface", "Ethernet7"}, {"switch", "leaf-r0"}}));
  bool saw_down = false;
  for (const auto& [k, v] : log_.events[0].attributes) saw_down |= (k == "value" && v == "DOWN");
  EXPECT_TRUE(saw_down);
}

TEST_F(SwitchCollectorTest, ADeleteDropsPendingPointsAndSendsNoZero) {
  ASSERT_EQ(target_.Broadcast(UintUpdate(kInOctets, 42, kT0)), 1);
  ::gnmi::SubscribeResponse del;
  del.mutable_update()->set_timestamp(kT0 + 1);
  *del.mutable_update()->add_delete_() = *ParseGnmiPath(kInOctets);
  ASSERT_EQ(target_.Broadcast(del), 1);
  ASSERT_TRUE(CollectUntil(*collector_, log_, [&] {
    return collector_->target_stats(0).deletes >= 1;
  }));
  ASSERT_TRUE(collector_->Collect(log_).ok());
  for (const auto& p : log_.Of("fabric_switch_interface_receive_bytes_total")) {
    EXPECT_NE(p.counter, 0u);
    EXPECT_NE(p.time_unix_nano, kT0 + 1);
  }
  // The leaf comes back later as an ordinary point.
  ASSERT_EQ(target_.Broadcast(UintUpdate(kInOctets, 43, kT0 + 2)), 1);
  // (42 itself may have been drained before the delete arrived: wait for 43, not any point.)
  ASSERT_TRUE(CollectUntil(*collector_, log_, [&] {
    const auto points = log_.Of("fabric_switch_interface_receive_bytes_total");
    return !points.empty() && points.back().counter == 43u;
  }));
  EXPECT_EQ(log_.Of("fabric_switch_interface_receive_bytes_total").back().time_unix_nano, kT0 + 2);
}

TEST_F(SwitchCollectorTest, OnChangeGaugesAreRestatedEveryCycle) {
  ASSERT_EQ(target_.Broadcast(StringUpdate(kOperStatus, "UP", kT0)), 1);
  CollectUpdates(1);
  const size_t first = log_.Of("fabric_switch_interface_oper_up").size();
  ASSERT_GE(first, 1u);
  ASSERT_TRUE(collector_->Collect(log_).ok());
  ASSERT_TRUE(collector_->Collect(log_).ok());
  const auto points = log_.Of("fabric_switch_interface_oper_up");
  ASSERT_EQ(points.size(), first + 2);
  EXPECT_EQ(points.back().gauge, 1);
  EXPECT_GT(points.back().time_unix_nano, kT0);  // restated now, not at the update's time
}

TEST_F(SwitchCollectorTest, LldpAttributesBecomeLabelsOfOneInfoSeries) {
  const std::string neighbor = "/lldp/interfaces/interface[name=Ethernet1]/neighbors/neighbor[id=1]/state/";
  ASSERT_EQ(target_.Broadcast(StringUpdate(neighbor + "system-name", "spine-1", kT0)), 1);
  ASSERT_EQ(target_.Broadcast(StringUpdate(neighbor + "port-id", "Ethernet49", kT0)), 1);
  CollectUpdates(2);
  const Labels full = {{"interface", "Ethernet1"},
                       {"neighbor_port", "Ethernet49"},
                       {"neighbor_system", "spine-1"},
                       {"switch", "leaf-r0"}};
  const auto points = log_.Of("fabric_lldp_neighbor_info", full);
  ASSERT_FALSE(points.empty());
  EXPECT_EQ(points.back().gauge, 1);
  EXPECT_EQ(log_.definitions[points.back().id].labels, full);
  // The neighbour changes: a new series, the old one is no longer emitted.
  ASSERT_EQ(target_.Broadcast(StringUpdate(neighbor + "system-name", "spine-2", kT0 + 5)), 1);
  CollectUpdates(3);
  const size_t before = log_.Of("fabric_lldp_neighbor_info", full).size();
  const auto moved = log_.Of("fabric_lldp_neighbor_info", {{"neighbor_system", "spine-2"}});
  ASSERT_FALSE(moved.empty());
  EXPECT_EQ(moved[0].time_unix_nano, kT0 + 5);
  // Later cycles restate it (an ON_CHANGE leaf is sent once), always as 1.
  for (const auto& p : moved) EXPECT_EQ(p.gauge, 1);
  EXPECT_EQ(log_.Of("fabric_lldp_neighbor_info", full).size(), before);
}

// openconfig-platform-transceiver: a module's leaves are under its component, and the
// interface's state/transceiver leaf names that component. A reading that comes first is held
// until the join is known, then sent with the interface (and its own time); a second
// interface naming the same module (a breakout) takes it only when the first lets it go.
TEST_F(SwitchCollectorTest, TransceiverLeavesTakeTheInterfaceThatNamesTheirComponent) {
  const std::string temperature =
      "/components/component[name=Ethernet1 transceiver]/state/temperature/instant";
  ASSERT_EQ(target_.Broadcast(DoubleUpdate(temperature, 47.5, kT0)), 1);
  CollectUpdates(1);
  EXPECT_TRUE(log_.SeriesOf("fabric_optics_temperature_celsius").empty());

  const std::string of1 = "/interfaces/interface[name=Ethernet1]/state/transceiver";
  ASSERT_EQ(target_.Broadcast(StringUpdate(of1, "Ethernet1 transceiver", kT0 + 1)), 1);
  CollectUpdates(2);
  const Labels on1 = {{"interface", "Ethernet1"}, {"switch", "leaf-r0"}};
  const auto ids = log_.SeriesOf("fabric_optics_temperature_celsius");
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(log_.definitions[ids[0]].labels, on1);
  auto points = log_.Of("fabric_optics_temperature_celsius", on1);
  ASSERT_FALSE(points.empty());
  EXPECT_EQ(points[0].gauge, 47.5);
  EXPECT_EQ(points[0].time_unix_nano, kT0);

  // Ethernet2 names the same module (a breakout): Ethernet1 keeps it ...
  ASSERT_EQ(target_.Broadcast(StringUpdate("/interfaces/interface[name=Ethernet2]/state/transceiver",
                                           "Ethernet1 transceiver", kT0 + 2)),
            1);
  ASSERT_EQ(target_.Broadcast(DoubleUpdate(temperature, 48.0, kT0 + 3)), 1);
  CollectUpdates(4);
  points = log_.Of("fabric_optics_temperature_celsius", on1);
  EXPECT_EQ(points.back().gauge, 48.0);
  // ... until Ethernet1's leaf is deleted: the module's series is Ethernet2's from then on.
  ::gnmi::SubscribeResponse del;
  del.mutable_update()->set_timestamp(kT0 + 4);
  *del.mutable_update()->add_delete_() = *ParseGnmiPath(of1);
  ASSERT_EQ(target_.Broadcast(del), 1);
  ASSERT_EQ(target_.Broadcast(DoubleUpdate(temperature, 49.0, kT0 + 5)), 1);
  CollectUpdates(5);
  const Labels on2 = {{"interface", "Ethernet2"}, {"switch", "leaf-r0"}};
  ASSERT_TRUE(CollectUntil(*collector_, log_, [&] {
    return !log_.Of("fabric_optics_temperature_celsius", on2).empty();
  }));
  const auto moved = log_.Of("fabric_optics_temperature_celsius", on2);
  EXPECT_EQ(moved[0].gauge, 49.0);
  EXPECT_EQ(moved[0].time_unix_nano, kT0 + 5);
  // The old series goes stale: not restated.
  const size_t before = log_.Of("fabric_optics_temperature_celsius", on1).size();
  ASSERT_TRUE(collector_->Collect(log_).ok());
  EXPECT_EQ(log_.Of("fabric_optics_temperature_celsius", on1).size(), before);
  EXPECT_EQ(collector_->target_stats(0).errors, 0u);
}

// SONiC's "N/A" (a lane the module does not have, a reading it cannot make): no point and no
// error; a value the series had is not restated any more.
TEST(SwitchCollectorSonicOpticsTest, AbsentReadingsAreNeitherPointsNorErrors) {
  FakeGnmiTarget target({});
  ASSERT_TRUE(target.Start().ok());
  GnmiSwitchCollector::Options options;
  GnmiTargetConfig sonic = TestTarget("leaf-r0", target.address());
  sonic.profile = "sonic";
  options.targets.push_back(sonic);
  options.channel = FastChannel();
  auto c = GnmiSwitchCollector::Create(std::move(options), ShippedProfiles());
  ASSERT_TRUE(c.ok()) << c.status();
  (*c)->Start();
  ASSERT_TRUE(target.WaitForStreams(1, absl::Seconds(20)));
  const std::string rx1 = "/TRANSCEIVER_DOM_SENSOR/Ethernet0/rx1power";
  ASSERT_GE(target.Broadcast(StringUpdate(rx1, "-2.5", kT0)), 1);
  ASSERT_GE(target.Broadcast(StringUpdate("/TRANSCEIVER_DOM_SENSOR/Ethernet0/rx5power", "N/A", kT0)), 1);
  PointLog log;
  ASSERT_TRUE(CollectUntil(**c, log, [&] {
    return !log.Of("fabric_optics_rx_power_dbm").empty();
  }));
  const Labels lane1 = {{"interface", "Ethernet0"}, {"lane", "1"}, {"switch", "leaf-r0"}};
  EXPECT_EQ(log.SeriesOf("fabric_optics_rx_power_dbm").size(), 1u);
  EXPECT_EQ(log.Of("fabric_optics_rx_power_dbm", lane1).front().gauge, -2.5);
  ASSERT_GE(target.Broadcast(StringUpdate(rx1, "N/A", kT0 + 1)), 1);
  ASSERT_TRUE(CollectUntil(**c, log, [&] {
    const size_t before = log.Of("fabric_optics_rx_power_dbm", lane1).size();
    return (*c)->Collect(log).ok() && log.Of("fabric_optics_rx_power_dbm", lane1).size() == before;
  }));
  EXPECT_EQ((*c)->target_stats(0).errors, 0u);
  (*c)->Stop();
}

// A switch agent run with --topology (gpu-node-001 on leaf-r0 Ethernet1, gpu-node-002 on
// Ethernet2) against a fake leaf-r0 that sends LLDP neighbour leaves.
class SwitchCollectorLldpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(target_.Start().ok());
    absl::StatusOr<Topology> topology = Topology::LoadString(R"(
switches: [{name: leaf-r0}]
hosts:
  - name: gpu-node-001
    nics: [{device: mlx5_0, netdev: enp12s0np0, rail: 0, switch: leaf-r0, port: Ethernet1}]
  - name: gpu-node-002
    nics: [{device: mlx5_0, netdev: enp12s0np0, rail: 0, switch: leaf-r0, port: Ethernet2}]
)",
                                                             "topology.yaml");
    ASSERT_TRUE(topology.ok()) << topology.status();
    GnmiSwitchCollector::Options options;
    options.targets.push_back(TestTarget("leaf-r0", target_.address()));
    options.channel = FastChannel();
    options.topology = std::make_shared<const Topology>(*std::move(topology));
    auto c = GnmiSwitchCollector::Create(std::move(options), ShippedProfiles());
    ASSERT_TRUE(c.ok()) << c.status();
    collector_ = *std::move(c);
    collector_->Start();
    ASSERT_TRUE(target_.WaitForStreams(1, absl::Seconds(20)));
  }
  void TearDown() override {
    if (collector_) collector_->Stop();
  }

  // The path of one leaf of port EthernetN's neighbour.
  static std::string Neighbor(int port, const char* leaf) {
    return absl::StrCat("/lldp/interfaces/interface[name=Ethernet", port,
                        "]/neighbors/neighbor[id=1]/state/", leaf);
  }

  FakeGnmiTarget target_{{}};
  std::unique_ptr<GnmiSwitchCollector> collector_;
};

// With a topology, each port's LLDP neighbour is checked against it.
TEST_F(SwitchCollectorLldpTest, NeighboursAreCheckedAgainstTheTopology) {
  FakeGnmiTarget& target = target_;
  GnmiSwitchCollector& collector = *collector_;
  auto neighbor = &SwitchCollectorLldpTest::Neighbor;
  // Ethernet1 is cabled as the file says; Ethernet2 reports gpu-node-001's NIC (miswired);
  // Ethernet3 is not in the file.
  ASSERT_EQ(target.Broadcast(StringUpdate(neighbor(1, "system-name"), "gpu-node-001", kT0)), 1);
  ASSERT_EQ(target.Broadcast(StringUpdate(neighbor(1, "port-id"), "enp12s0np0", kT0)), 1);
  ASSERT_EQ(target.Broadcast(StringUpdate(neighbor(2, "system-name"), "gpu-node-001", kT0)), 1);
  ASSERT_EQ(target.Broadcast(StringUpdate(neighbor(2, "port-id"), "enp12s0np0", kT0)), 1);
  ASSERT_EQ(target.Broadcast(StringUpdate(neighbor(3, "system-name"), "gpu-node-009", kT0)), 1);
  PointLog log;
  ASSERT_TRUE(CollectUntil(collector, log, [&] { return collector.target_stats(0).updates >= 5; }));
  ASSERT_TRUE(collector.Collect(log).ok());

  const auto ok = log.Of("fabric_lldp_neighbor_mismatch", {{"interface", "Ethernet1"}});
  ASSERT_FALSE(ok.empty());
  EXPECT_EQ(ok.back().gauge, 0);
  const auto bad = log.Of("fabric_lldp_neighbor_mismatch", {{"interface", "Ethernet2"}});
  ASSERT_FALSE(bad.empty());
  EXPECT_EQ(bad.back().gauge, 1);
  EXPECT_TRUE(log.Of("fabric_lldp_neighbor_mismatch", {{"interface", "Ethernet3"}}).empty());
  int events = 0;
  for (const EventRecord& e : log.events) {
    if (e.kind != "lldp.mismatch") continue;
    ++events;
    EXPECT_EQ(*FindLabel(e.labels, "interface"), "Ethernet2");
    EXPECT_EQ(*FindLabel(e.labels, "switch"), "leaf-r0");
    EXPECT_THAT(e.attributes, ::testing::Contains(std::pair<std::string, std::string>(
                                  "expected", "gpu-node-002/enp12s0np0")));
    EXPECT_THAT(e.attributes, ::testing::Contains(std::pair<std::string, std::string>(
                                  "announced", "gpu-node-001/enp12s0np0")));
  }
  EXPECT_EQ(events, 1);

  // The cable is fixed: the gauge clears, no new event.
  ASSERT_EQ(target.Broadcast(StringUpdate(neighbor(2, "system-name"), "gpu-node-002", kT0 + 9)), 1);
  ASSERT_TRUE(CollectUntil(collector, log, [&] { return collector.target_stats(0).updates >= 6; }));
  ASSERT_TRUE(collector.Collect(log).ok());
  EXPECT_EQ(log.Of("fabric_lldp_neighbor_mismatch", {{"interface", "Ethernet2"}}).back().gauge, 0);
}

// A port-id that comes cycles after its system name (two leaves, two notifications) does not
// make a mismatch with an empty port-id in between; a neighbour that never announces one is
// judged on its name alone, 2 s after the name.
TEST_F(SwitchCollectorLldpTest, APortIdLaggingItsNameIsWaitedFor) {
  FakeGnmiTarget& target = target_;
  GnmiSwitchCollector& collector = *collector_;
  auto neighbor = &SwitchCollectorLldpTest::Neighbor;
  auto mismatches = [](const PointLog& log) {
    std::vector<std::string> announced;
    for (const EventRecord& e : log.events) {
      if (e.kind != "lldp.mismatch") continue;
      for (const auto& [name, value] : e.attributes) {
        if (name == "announced") announced.push_back(value);
      }
    }
    return announced;
  };
  PointLog log;
  ASSERT_EQ(target.Broadcast(StringUpdate(neighbor(2, "system-name"), "gpu-node-001", kT0)), 1);
  ASSERT_TRUE(CollectUntil(collector, log, [&] { return collector.target_stats(0).updates >= 1; }));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(collector.Collect(log).ok());
  EXPECT_THAT(mismatches(log), ::testing::IsEmpty());  // the port-id may still come
  ASSERT_EQ(target.Broadcast(StringUpdate(neighbor(2, "port-id"), "enp12s0np0", kT0 + 1)), 1);
  ASSERT_TRUE(CollectUntil(collector, log, [&] { return collector.target_stats(0).updates >= 2; }));
  ASSERT_TRUE(collector.Collect(log).ok());
  EXPECT_THAT(mismatches(log), ::testing::ElementsAre("gpu-node-001/enp12s0np0"));

  // Ethernet1 announces a wrong name and never a port-id: judged on the name, after 2 s.
  ASSERT_EQ(target.Broadcast(StringUpdate(neighbor(1, "system-name"), "gpu-node-003", kT0 + 2)), 1);
  const absl::Time named = absl::Now();
  ASSERT_TRUE(CollectUntil(collector, log, [&] { return mismatches(log).size() == 2; }));
  EXPECT_GE(absl::Now() - named, absl::Milliseconds(1900));
  EXPECT_EQ(mismatches(log).back(), "gpu-node-003/");
}

}  // namespace
}  // namespace railwatch::testing

namespace railwatch::testing {
namespace switch_collector_test {

// gNMI reads a subscription's target from the prefix only: SONiC's COUNTERS_DB counters and
// its OC-YANG oper-status must go out as two requests (two streams), each with its target. An
// optional subscription goes alone, so that a target refusing it refuses nothing else.
TEST(SubscribeRequestsTest, OneRequestPerGnmiTargetWithTheTargetInThePrefix) {
  std::vector<GnmiProfile> profiles = ShippedProfiles();
  for (const GnmiProfile& p : profiles) {
    std::vector<bool> optional;
    const std::vector<::gnmi::SubscribeRequest> requests = MakeSubscribeRequests(
        p, TestTarget("leaf", "127.0.0.1:1"), ::gnmi::SubscriptionList::STREAM, &optional);
    ASSERT_FALSE(requests.empty()) << p.name();
    ASSERT_EQ(optional.size(), requests.size()) << p.name();
    size_t subscriptions = 0, optional_subscriptions = 0;
    std::set<std::string> targets;
    // Which optional group each subscription is in, by path.
    std::map<std::string, std::string> group_of;
    for (const GnmiSubscriptionSpec& spec : p.subscriptions()) {
      group_of[GnmiPathString(spec.path)] = spec.optional_group;
    }
    for (size_t i = 0; i < requests.size(); ++i) {
      const ::gnmi::SubscribeRequest& r = requests[i];
      if (optional[i]) {
        // Alone, or with the rest of its group (and no other).
        const std::string group = group_of[GnmiPathString(r.subscribe().subscription(0).path())];
        if (group.empty()) {
          EXPECT_EQ(r.subscribe().subscription_size(), 1) << p.name();
        }
        for (const ::gnmi::Subscription& s : r.subscribe().subscription()) {
          EXPECT_EQ(group_of[GnmiPathString(s.path())], group) << p.name();
        }
      } else {
        EXPECT_TRUE(targets.insert(r.subscribe().prefix().target()).second)
            << p.name() << ": two requests for target " << r.subscribe().prefix().target();
      }
      for (const ::gnmi::Subscription& s : r.subscribe().subscription()) {
        EXPECT_EQ(s.path().target(), "") << p.name() << ": target outside the prefix";
        ++subscriptions;
        if (optional[i]) ++optional_subscriptions;
      }
    }
    size_t declared_optional = 0;
    for (const GnmiSubscriptionSpec& spec : p.subscriptions()) declared_optional += spec.optional;
    EXPECT_EQ(subscriptions, p.subscriptions().size()) << p.name();
    EXPECT_EQ(optional_subscriptions, declared_optional) << p.name();
    const size_t optional_requests = std::count(optional.begin(), optional.end(), true);
    if (p.name() == "sonic") {
      EXPECT_EQ(targets, (std::set<std::string>{"APPL_DB", "COUNTERS_DB", "OC-YANG"}));
      // PORT_TABLE (the ports' speed), and the STATE_DB transceiver tables as one group.
      EXPECT_EQ(declared_optional, 4u);
      EXPECT_EQ(optional_requests, 2u);
    } else {
      EXPECT_EQ(targets.size(), 1u) << p.name();
      // ethernet/state mac-address and port-speed, the six transceiver paths as one group,
      // the thresholds and the pre-FEC BER.
      EXPECT_EQ(declared_optional, 10u) << p.name();
      EXPECT_EQ(optional_requests, 5u) << p.name();
    }
  }
}

}  // namespace
}  // namespace railwatch::testing
