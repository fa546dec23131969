// The ethtool collector on recorded `ethtool -S` dumps (tests/fixtures/ethtool, copied verbatim
// from ../shared/realworld) through DumpEthtoolBackend, and the mapping table on its own.
#include "collectors/ethtool_collector.h"

#include <filesystem>
#include <fstream>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "collectors/ethtool_dump.h"
#include "collectors/ethtool_mapping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/recording_emitter.h"
#include "support/ttar.h"

namespace railwatch {
namespace ethtool_collector_test {

using ::railwatch::testing::FixturePath;
using ::railwatch::testing::RecordingEmitter;
using ::railwatch::testing::TempDir;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kBnxtShowmax[] = "ethtool_S_bnxt_en_showmax_bnxten418_sfp_10gwtf1.txt";
constexpr char kBnxtTabs[] = "ethtool_S_bnxt_en_go_ethtool_metrics_tab_indented.txt";
constexpr char kMlx5[] = "ethtool_S_mlx5_core_cx4_ethq_testfile_noindent.txt";

std::string Series(std::string_view name, Labels labels) {
  NormalizeLabels(labels);
  return FormatSeries(name, labels);
}

std::string Pfc(std::string_view name, const std::string& netdev, int priority,
                const std::string& direction) {
  return Series(
      name,
      {{"interface", netdev}, {"priority", absl::StrCat(priority)}, {"direction", direction}});
}

std::string PerNetdev(std::string_view name, const std::string& netdev,
                      const std::string& direction = "") {
  Labels labels = {{"interface", netdev}};
  if (!direction.empty()) labels.push_back({"direction", direction});
  return Series(name, labels);
}

// Series of one metric name among those defined.
size_t CountSeries(const RecordingEmitter& e, std::string_view name) {
  size_t n = 0;
  for (const std::string& s : e.names) {
    if (s.substr(0, s.find('{')) == name) ++n;
  }
  return n;
}

// A sysfs root with netdevs under class/net, and a dump backend for the collector.
class DumpRig {
 public:
  DumpRig() {
    auto backend = std::make_unique<DumpEthtoolBackend>();
    backend_ = backend.get();
    backend_owner_ = std::move(backend);
  }

  // A netdev directory; `device` makes it look like a PCI function.
  void AddNetdev(const std::string& name, bool device) {
    const std::filesystem::path dir = std::filesystem::path(root()) / "class" / "net" / name;
    std::filesystem::create_directories(dir);
    if (device) std::filesystem::create_directories(dir / "device");
  }

  void ServeFixture(const std::string& netdev, const std::string& driver,
                    const std::string& fixture) {
    ASSERT_TRUE(backend_->SetFromFile(netdev, driver, FixturePath("ethtool/" + fixture)).ok());
  }

  // Builds the collector on first use; `pattern` empty is the default netdev policy.
  absl::Status Collect(const std::string& pattern = "") {
    if (collector_ == nullptr) {
      absl::StatusOr<NetdevSelector> selector = NetdevSelector::Create({root(), pattern});
      EXPECT_TRUE(selector.ok()) << selector.status();
      collector_ = std::make_unique<EthtoolCollector>(EthtoolCollector::Options{absl::Hours(1)},
                                                      std::move(*selector),
                                                      std::move(backend_owner_), clock);
    }
    clock.Advance(absl::Seconds(1));
    return collector_->Collect(emitter);
  }

  const std::string& root() const { return dir_.path(); }
  DumpEthtoolBackend& backend() { return *backend_; }
  EthtoolCollector& collector() { return *collector_; }

  FakeClock clock;
  RecordingEmitter emitter;

 private:
  TempDir dir_;
  DumpEthtoolBackend* backend_;
  std::unique_ptr<DumpEthtoolBackend> backend_owner_;
  std::unique_ptr<EthtoolCollector> collector_;
};

TEST(EthtoolCollector, BnxtPfcPerPriorityAndPauseStormEvents) {
  DumpRig rig;
  rig.AddNetdev("ens1f1", true);
  rig.ServeFixture("ens1f1", "bnxt_en", kBnxtShowmax);
  ASSERT_TRUE(rig.Collect().ok());
  const RecordingEmitter& e = rig.emitter;

  // The sample's PFC counters are all zero but present: zero series, not absent ones.
  for (int p = 0; p < 8; ++p) {
    for (const char* dir : {"rx", "tx"}) {
      EXPECT_EQ(e.Get(Pfc("fabric_pfc_pause_frames_total", "ens1f1", p, dir)), 0u) << p << dir;
      EXPECT_EQ(e.Get(Pfc("fabric_pfc_pause_duration_microseconds_total", "ens1f1", p, dir)), 0u);
      EXPECT_EQ(e.Get(Pfc("fabric_pfc_pause_transitions_total", "ens1f1", p, dir)), 0u);
    }
    EXPECT_EQ(
        e.Get(Series("fabric_netdev_queue_discards_total",
                     {{"interface", "ens1f1"}, {"queue", absl::StrCat(p)}, {"direction", "rx"}})),
        0u);
    EXPECT_EQ(e.Get(Series("fabric_netdev_priority_receive_bytes_total",
                           {{"interface", "ens1f1"}, {"priority", absl::StrCat(p)}})),
              0u);
  }
  EXPECT_EQ(CountSeries(e, "fabric_pfc_pause_frames_total"), 16u);
  EXPECT_EQ(e.Get(PerNetdev("fabric_roce_continuous_pause_events_total", "ens1f1")), 0u);
  EXPECT_EQ(e.Get(PerNetdev("fabric_netdev_link_down_events_total", "ens1f1")), 4u);
  EXPECT_EQ(e.Get(PerNetdev("fabric_netdev_receive_buffer_passed_threshold_total", "ens1f1")),
            417u);
  EXPECT_EQ(e.Get(PerNetdev("fabric_link_pause_frames_total", "ens1f1", "rx")), 0u);
  EXPECT_EQ(e.Get(PerNetdev("fabric_netdev_discards_total", "ens1f1", "tx")), 0u);
  // mlx5-only counters stay absent on bnxt.
  EXPECT_EQ(CountSeries(e, "fabric_pfc_pause_storm_warning_events_total"), 0u);
  EXPECT_EQ(CountSeries(e, "fabric_netdev_priority_ecn_marked_packets_total"), 0u);

  // The include list: nothing but mapped canonical series, with bounded labels. The ~200
  // per-ring statistics ("[3]: rx_ucast_packets") are not collected.
  const std::set<std::string> allowed_labels = {"interface", "priority", "queue", "direction"};
  for (const std::string& s : e.names) {
    const std::string name = s.substr(0, s.find('{'));
    const MetricSpec* spec = FindMetric(name);
    ASSERT_NE(spec, nullptr) << s;
    EXPECT_FALSE(spec->ethtool.empty()) << s;
    EXPECT_THAT(s, HasSubstr("interface=\"ens1f1\""));
    const std::string labels = s.substr(s.find('{') + 1);
    for (absl::string_view label : absl::StrSplit(labels, ',')) {
      EXPECT_TRUE(allowed_labels.contains(std::string(label.substr(0, label.find('='))))) << s;
    }
  }
  EXPECT_EQ(e.points, e.names.size()) << "one point per series per cycle";
  EXPECT_EQ(rig.collector().mapped_stats(), e.names.size());
  EXPECT_LT(e.names.size(), 200u);
}

TEST(EthtoolCollector, BnxtTabIndentedCountsErrorsAndDiscards) {
  DumpRig rig;
  rig.AddNetdev("ens1f0", true);
  rig.ServeFixture("ens1f0", "bnxt_en", kBnxtTabs);
  ASSERT_TRUE(rig.Collect().ok());
  const RecordingEmitter& e = rig.emitter;
  EXPECT_EQ(e.Get(PerNetdev("fabric_netdev_transmit_errors_total", "ens1f0")), 12u);
  EXPECT_EQ(e.Get(PerNetdev("fabric_netdev_discards_total", "ens1f0", "rx")), 13u);
  EXPECT_EQ(e.Get(PerNetdev("fabric_netdev_discards_total", "ens1f0", "tx")), 14u);
  EXPECT_EQ(e.Get(PerNetdev("fabric_netdev_link_down_events_total", "ens1f0")), 2u);
  EXPECT_EQ(e.Get(PerNetdev("fabric_netdev_receive_buffer_passed_threshold_total", "ens1f0")),
            417u);
}

TEST(EthtoolCollector, Mlx5PriorityTrafficGlobalPauseAndAbsentPfc) {
  DumpRig rig;
  rig.AddNetdev("enp1s0f0", true);
  rig.ServeFixture("enp1s0f0", "mlx5_core", kMlx5);
  ASSERT_TRUE(rig.Collect().ok());
  const RecordingEmitter& e = rig.emitter;
  auto prio = [](std::string_view name, int p) {
    return Series(name, {{"interface", "enp1s0f0"}, {"priority", absl::StrCat(p)}});
  };
  EXPECT_EQ(e.Get(prio("fabric_netdev_priority_receive_bytes_total", 0)), 2202570777997u);
  EXPECT_EQ(e.Get(prio("fabric_netdev_priority_receive_packets_total", 0)), 845715962u);
  EXPECT_EQ(e.Get(prio("fabric_netdev_priority_transmit_bytes_total", 0)), 2662454044895u);
  EXPECT_EQ(e.Get(prio("fabric_netdev_priority_transmit_packets_total", 0)), 896117891u);
  EXPECT_EQ(e.Get(prio("fabric_netdev_priority_transmit_packets_total", 7)), 0u);
  // 802.3x pause is on (mlx5 prints rx/tx_global_pause only then); PFC is off.
  EXPECT_EQ(e.Get(PerNetdev("fabric_link_pause_frames_total", "enp1s0f0", "rx")), 0u);
  EXPECT_EQ(e.Get(PerNetdev("fabric_link_pause_frames_total", "enp1s0f0", "tx")), 0u);
  EXPECT_EQ(e.Get(PerNetdev("fabric_link_pause_duration_microseconds_total", "enp1s0f0", "rx")),
            0u);
  EXPECT_EQ(CountSeries(e, "fabric_pfc_pause_frames_total"), 0u);
  EXPECT_EQ(CountSeries(e, "fabric_pfc_pause_duration_microseconds_total"), 0u);
  EXPECT_EQ(CountSeries(e, "fabric_pfc_pause_storm_error_events_total"), 0u);
  // This kernel (4.15) predates rx_prio*_discards: absent, not zero.
  EXPECT_EQ(CountSeries(e, "fabric_netdev_priority_discards_total"), 0u);
  EXPECT_EQ(e.Get(PerNetdev("fabric_netdev_discards_total", "enp1s0f0", "rx")), 0u);
  EXPECT_EQ(e.Get(PerNetdev("fabric_netdev_pause_control_frames_total", "enp1s0f0", "tx")), 0u);
  EXPECT_EQ(e.Get(PerNetdev("fabric_netdev_link_down_events_total", "enp1s0f0")), 0u);
  EXPECT_EQ(e.Get(PerNetdev("fabric_netdev_receive_out_of_buffer_total", "enp1s0f0")), 0u);
}

TEST(EthtoolCollector, Mlx5PfcEnabledLaterIsMappedInTheSameCycle) {
  DumpRig rig;
  rig.AddNetdev("eth2", true);
  const std::string before = "rx_discards_phy: 5\ntx_prio3_packets: 10\n";
  rig.backend().Set("eth2", "mlx5_core", before);
  ASSERT_TRUE(rig.Collect().ok());
  EXPECT_EQ(rig.emitter.Get(PerNetdev("fabric_netdev_discards_total", "eth2", "rx")), 5u);

  // Counters move; the statistics keep their shape.
  rig.backend().Set("eth2", "mlx5_core", "rx_discards_phy: 6\ntx_prio3_packets: 11\n");
  ASSERT_TRUE(rig.Collect().ok());
  EXPECT_EQ(rig.emitter.Get(PerNetdev("fabric_netdev_discards_total", "eth2", "rx")), 6u);

  // PFC turned on for priority 3: mlx5 now prints its pause counters, and a storm happens.
  rig.backend().Set("eth2", "mlx5_core",
                    "rx_discards_phy: 7\ntx_prio3_packets: 12\n"
                    "rx_prio3_pause: 100\nrx_prio3_pause_duration: 2500\n"
                    "tx_prio3_pause: 40000\ntx_prio3_pause_duration: 900000\n"
                    "rx_prio3_pause_transition: 50\n"
                    "tx_pause_storm_warning_events: 2\ntx_pause_storm_error_events: 1\n");
  ASSERT_TRUE(rig.Collect().ok());
  const RecordingEmitter& e = rig.emitter;
  EXPECT_EQ(e.Get(Pfc("fabric_pfc_pause_frames_total", "eth2", 3, "rx")), 100u);
  EXPECT_EQ(e.Get(Pfc("fabric_pfc_pause_frames_total", "eth2", 3, "tx")), 40000u);
  EXPECT_EQ(e.Get(Pfc("fabric_pfc_pause_duration_microseconds_total", "eth2", 3, "tx")), 900000u);
  EXPECT_EQ(e.Get(Pfc("fabric_pfc_pause_transitions_total", "eth2", 3, "rx")), 50u);
  EXPECT_EQ(e.Get(PerNetdev("fabric_pfc_pause_storm_warning_events_total", "eth2")), 2u);
  EXPECT_EQ(e.Get(PerNetdev("fabric_pfc_pause_storm_error_events_total", "eth2")), 1u);
  EXPECT_EQ(e.Get(PerNetdev("fabric_netdev_discards_total", "eth2", "rx")), 7u);
  EXPECT_FALSE(e.Get(Pfc("fabric_pfc_pause_frames_total", "eth2", 2, "rx")).has_value());

  // The netdev goes away: not a failure; it is no longer read.
  rig.backend().Remove("eth2");
  const size_t points = rig.emitter.points;
  EXPECT_TRUE(rig.Collect().ok());
  EXPECT_EQ(rig.emitter.points, points);
  EXPECT_TRUE(rig.Collect().ok());
  EXPECT_EQ(rig.collector().netdevs(), 0u);
}

TEST(EthtoolCollector, RescanFindsNewNetdevs) {
  DumpRig rig;
  rig.AddNetdev("eth0", true);
  rig.backend().Set("eth0", "mlx5_core", "rx_discards_phy: 1\n");
  ASSERT_TRUE(rig.Collect().ok());
  EXPECT_EQ(rig.collector().netdevs(), 1u);

  rig.AddNetdev("eth1", true);
  rig.backend().Set("eth1", "bnxt_en", "tx_err: 3\n");
  ASSERT_TRUE(rig.Collect().ok());
  EXPECT_EQ(rig.collector().netdevs(), 1u) << "not before the rescan interval";

  rig.clock.Advance(absl::Hours(2));
  rig.backend().Set("eth0", "mlx5_core", "rx_discards_phy: 2\n");
  ASSERT_TRUE(rig.Collect().ok());
  EXPECT_EQ(rig.collector().netdevs(), 2u);
  EXPECT_EQ(rig.emitter.Get(PerNetdev("fabric_netdev_transmit_errors_total", "eth1")), 3u);
  EXPECT_EQ(rig.emitter.Get(PerNetdev("fabric_netdev_discards_total", "eth0", "rx")), 2u);
}

// ice has no recorded dump here: these names are the ones ice_ethtool.c prints (Linux 5.5+).
TEST(EthtoolCollector, IceXoffIsPauseXonIsResume) {
  DumpRig rig;
  rig.AddNetdev("ens7f0", true);
  rig.backend().Set("ens7f0", "ice",
                    "NIC statistics:\n"
                    "     rx_dropped.nic: 9\n"
                    "     tx_errors.nic: 1\n"
                    "     link_xoff_rx.nic: 5\n"
                    "     link_xon_rx.nic: 6\n"
                    "     tx_priority_3_xon.nic: 2\n"
                    "     tx_priority_3_xoff.nic: 30\n"
                    "     rx_priority_3_xon.nic: 4\n"
                    "     rx_priority_3_xoff.nic: 10\n"
                    "     rx_queue_0_packets: 77\n");
  ASSERT_TRUE(rig.Collect().ok());
  const RecordingEmitter& e = rig.emitter;
  EXPECT_EQ(e.Get(Pfc("fabric_pfc_pause_frames_total", "ens7f0", 3, "rx")), 10u);
  EXPECT_EQ(e.Get(Pfc("fabric_pfc_pause_frames_total", "ens7f0", 3, "tx")), 30u);
  EXPECT_EQ(e.Get(Pfc("fabric_pfc_resume_frames_total", "ens7f0", 3, "rx")), 4u);
  EXPECT_EQ(e.Get(Pfc("fabric_pfc_resume_frames_total", "ens7f0", 3, "tx")), 2u);
  EXPECT_EQ(e.Get(PerNetdev("fabric_link_pause_frames_total", "ens7f0", "rx")), 5u);
  EXPECT_EQ(e.Get(PerNetdev("fabric_netdev_discards_total", "ens7f0", "rx")), 9u);
  EXPECT_EQ(e.Get(PerNetdev("fabric_netdev_transmit_errors_total", "ens7f0")), 1u);
  EXPECT_EQ(e.names.size(), 7u) << "link_xon_rx.nic and per-queue counters are not mapped";
}

TEST(EthtoolCollector, DefaultSelectionIsDevicesAndRdmaNetdevsNeverLo) {
  DumpRig rig;
  rig.AddNetdev("ens1f1", true);
  rig.AddNetdev("veth12ab", false);
  rig.AddNetdev("lo", false);
  rig.AddNetdev("bond0", false);
  // bonding_masters is a file beside the netdevs, not a netdev.
  std::ofstream(rig.root() + "/class/net/bonding_masters") << "bond0\n";
  // A RoCE LAG: the RDMA port's GID 0 is on bond0, which has no device of its own.
  const std::string ndevs = rig.root() + "/class/infiniband/mlx5_bond_0/ports/1/gid_attrs/ndevs";
  std::filesystem::create_directories(ndevs);
  std::ofstream(ndevs + "/0") << "bond0\n";

  absl::StatusOr<NetdevSelector> selector = NetdevSelector::Create({rig.root(), ""});
  ASSERT_TRUE(selector.ok());
  EXPECT_THAT(selector->List(), ElementsAre("bond0", "ens1f1"));
  EXPECT_TRUE(selector->Selected("bond0"));
  EXPECT_FALSE(selector->Selected("lo"));
  EXPECT_FALSE(selector->Selected("veth12ab"));

  absl::StatusOr<NetdevSelector> pattern = NetdevSelector::Create({rig.root(), "veth.*|lo"});
  ASSERT_TRUE(pattern.ok());
  EXPECT_THAT(pattern->List(), ElementsAre("lo", "veth12ab"));
  EXPECT_FALSE(pattern->Selected("xveth1")) << "the whole name must match";

  EXPECT_FALSE(NetdevSelector::Create({rig.root(), "eth[0-"}).ok());

  // Through the collector: bond0 has no statistics (Unimplemented), ens1f1 is read.
  rig.backend().Set("bond0", "bonding", "");
  rig.ServeFixture("ens1f1", "bnxt_en", kBnxtShowmax);
  rig.ServeFixture("veth12ab", "bnxt_en", kBnxtShowmax);
  ASSERT_TRUE(rig.Collect().ok());
  EXPECT_EQ(rig.collector().netdevs(), 1u);
  for (const std::string& s : rig.emitter.names) EXPECT_THAT(s, HasSubstr("\"ens1f1\""));
}

TEST(EthtoolMapping, CanonicalTableIsValid) {
  absl::Status s = EthtoolMapping::Validate(CanonicalMetrics());
  EXPECT_TRUE(s.ok()) << s;
}

TEST(EthtoolMapping, ValidateNamesEveryBadSource) {
  const std::vector<MetricSpec> specs = {
      {"a_total",
       MetricKind::kCounter,
       "",
       "h",
       {},
       {{"drv", "rx_{prio}_x"}, {"drv", "rx_{priority}_{queue}"}, {"drv", "rx_{priority"}}},
      {"b_total", MetricKind::kCounter, "", "h", {}, {{"", "x"}, {"drv", "y", "up"}}},
  };
  absl::Status s = EthtoolMapping::Validate(specs);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("unknown placeholder {prio}"));
  EXPECT_THAT(s.message(), HasSubstr("more than one placeholder"));
  EXPECT_THAT(s.message(), HasSubstr("'{' without '}'"));
  EXPECT_THAT(s.message(), HasSubstr("empty driver"));
  EXPECT_THAT(s.message(), HasSubstr("direction must be rx or tx"));
}

TEST(EthtoolMapping, FirstSourceWinsAndPlaceholdersAreBounded) {
  const std::vector<MetricSpec> specs = {
      {"pause_total",
       MetricKind::kCounter,
       "",
       "h",
       {},
       {{"drv", "new_prio{priority}_pause", "rx"},
        {"drv", "old_prio{priority}_pause", "rx"},
        {"drv", "old_prio{priority}_pause_tx", "tx"}}},
      {"other_total", MetricKind::kCounter, "", "h", {}, {{"other", "new_prio{priority}_pause"}}},
  };
  EthtoolMapping mapping(specs);
  const std::vector<std::string> names = {
      "old_prio3_pause",     // 0: loses to new_prio3_pause
      "new_prio3_pause",     // 1
      "old_prio4_pause",     // 2: no new_ name for 4: wins
      "new_prio12_pause",    // 3: two digits
      "new_prio123_pause",   // 4: three digits: not matched
      "new_prio07_pause",    // 5: leading zero: not matched
      "new_prio_pause",      // 6: no digits
      "new_prio3_pause",     // 7: a duplicate name counts once
      "old_prio5_pause_tx",  // 8
  };
  std::vector<EthtoolMapping::Target> targets = mapping.Map("drv", names);
  std::vector<std::string> got;
  for (const auto& t : targets) {
    got.push_back(absl::StrCat(t.stat_index, " ", FormatSeries(t.spec->name, t.labels)));
  }
  EXPECT_THAT(got, ElementsAre("1 pause_total{direction=\"rx\",priority=\"3\"}",
                               "2 pause_total{direction=\"rx\",priority=\"4\"}",
                               "3 pause_total{direction=\"rx\",priority=\"12\"}",
                               "8 pause_total{direction=\"tx\",priority=\"5\"}"));
  EXPECT_THAT(mapping.Map("unknown_driver", names), IsEmpty());
  EXPECT_EQ(mapping.Map("other", names).size(), 2u);  // priorities 3 and 12
}

}  // namespace
}  // namespace railwatch
