// The simulator's jobs and traffic faults (--job, --degrade, --ecn_misconfig, repeated --flap,
// --pfc_storm reaching the uplinks): the NIC side (sysfs) and the leaf side (switch counters)
// ticked together as railwatch-sim's main loop does, on a fake clock.
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "collectors/pread_file.h"
#include "common/text.h"
#include "gtest/gtest.h"
#include "sim/repeated_flags.h"
#include "sim/switch_model.h"
#include "sim/sysfs_fabric.h"
#include "sim/topology_writer.h"
#include "sim/traffic_model.h"
#include "support/ttar.h"
#include "topology/topology.h"
#include "unit/sim_kinds_truth.h"
#include "yaml-cpp/yaml.h"

namespace railwatch::sim {
namespace sim_faults_test {

const absl::Time kStart = absl::FromUnixSeconds(1'800'000'000);
constexpr absl::Duration kTick = absl::Milliseconds(100);
constexpr double kLineBytesPerSecond = 400e9 / 8;

TEST(TrafficFlags, ParseJobs) {
  absl::StatusOr<SimJob> j = ParseJob("llama:1-32");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ(j->name, "llama");
  EXPECT_EQ(j->first_host, 1);
  EXPECT_EQ(j->last_host, 32);
  EXPECT_DOUBLE_EQ(j->util, 0.8);
  j = ParseJob("small:3-4:0.5");
  ASSERT_TRUE(j.ok());
  EXPECT_DOUBLE_EQ(j->util, 0.5);
  for (const char* bad : {"llama", "llama:1", "llama:0-3", "llama:4-3", "llama:1-2:1.5",
                          "llama:1-2:x", ":1-2", "llama:1-2:0.5:9"}) {
    EXPECT_FALSE(ParseJob(bad).ok()) << bad;
  }
}

TEST(TrafficFlags, ValidationNamesTheProblem) {
  auto message = [](const absl::Status& s) { return std::string(s.message()); };
  EXPECT_TRUE(ValidateTrafficFaults(4, 8, {{"a", 1, 2}, {"b", 3, 4}}, {}, {}).ok());
  EXPECT_NE(message(ValidateTrafficFaults(4, 8, {{"a", 1, 5}}, {}, {})).find("only 4"),
            std::string::npos);
  EXPECT_NE(message(ValidateTrafficFaults(4, 8, {{"a", 1, 2}, {"b", 2, 3}}, {}, {}))
                .find("gpu-node-002 is in job \"a\" and in job \"b\""),
            std::string::npos);
  EXPECT_NE(message(ValidateTrafficFaults(4, 8, {{"a", 1, 1}, {"a", 2, 2}}, {}, {})).find("twice"),
            std::string::npos);
  EXPECT_FALSE(
      ValidateTrafficFaults(4, 8, {}, {{"gpu-node-005", "mlx5_0", absl::Seconds(1)}}, {}).ok());
  EXPECT_FALSE(
      ValidateTrafficFaults(4, 8, {}, {{"gpu-node-001", "mlx5_8", absl::Seconds(1)}}, {}).ok());
  EXPECT_FALSE(
      ValidateTrafficFaults(4, 8, {}, {{"gpu-node-1", "mlx5_0", absl::Seconds(1)}}, {}).ok());
  EXPECT_FALSE(ValidateTrafficFaults(4, 8, {}, {}, {{"leaf-r8", 8, absl::Seconds(1)}}).ok());
}

TEST(TrafficModel, MarkingThroughputAndPauseFigures) {
  EXPECT_NEAR(EcnMarkingShare(3), 0.0025, 0.0001);
  EXPECT_NEAR(ThroughputUnderMarking(1), 1.0, 1e-12);
  EXPECT_NEAR(ThroughputUnderMarking(EcnMarkingShare(3)), 0.6, 0.002);
  EXPECT_EQ(CongestionPauseRate(1, 0.8), 0);
  EXPECT_NEAR(CongestionPauseRate(0, 0.8), kCongestionPauseRate, 1e-9);
  EXPECT_NEAR(CongestionPauseRate(0, 0.25), kCongestionPauseRate / 2, 1e-9);
  EXPECT_EQ(RateText(400), "400 Gb/sec (4X NDR)\n");
  EXPECT_EQ(RateText(200), "200 Gb/sec (4X HDR)\n");
  EXPECT_EQ(RateText(300), "300 Gb/sec (4X)\n");
}

TEST(RepeatedFlags, OccurrencesAreJoinedInPlace) {
  const char* argv[] = {"railwatch-sim", "--root=/tmp/x", "--flap=a@1s", "--hosts=4",
                        "-flap=a@2s",    "--job",         "j:1-2",       "--flap",
                        "a@3s",          "--job=k:3-4",   "--",          "--flap=literal"};
  std::vector<std::string> out =
      JoinRepeatedFlags(std::size(argv), const_cast<char**>(argv), {"flap", "job"});
  EXPECT_EQ(out,
            (std::vector<std::string>{"railwatch-sim", "--root=/tmp/x", "--flap=a@1s,a@2s,a@3s",
                                      "--hosts=4", "--job=j:1-2,k:3-4", "--", "--flap=literal"}));
}

uint64_t ReadCounter(const std::string& path) {
  absl::StatusOr<PreadFile> f = PreadFile::Open(path);
  EXPECT_TRUE(f.ok()) << f.status();
  if (!f.ok()) return 0;
  absl::StatusOr<std::optional<uint64_t>> v = f->ReadCounter();
  EXPECT_TRUE(v.ok() && v->has_value()) << path;
  return v.ok() && v->has_value() ? **v : 0;
}

std::vector<YAML::Node> GroundTruth(const std::string& file) {
  std::vector<YAML::Node> lines;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    lines.push_back(YAML::Load(line));  // JSON is YAML
  return lines;
}

// One ground-truth line: these fields (compared as text) and the injection time.
void ExpectTruth(const YAML::Node& line, const std::map<std::string, std::string>& fields,
                 absl::Time injected) {
  for (const auto& [key, value] : fields) {
    ASSERT_TRUE(line[key]) << key;
    EXPECT_EQ(line[key].as<std::string>(), value) << key;
  }
  EXPECT_EQ(line["injected_at_unix_nano"].as<int64_t>(), absl::ToUnixNanos(injected));
}

SysfsFabric::Options Fabric(int hosts, int nics, std::vector<SimJob> jobs = {}) {
  SysfsFabric::Options o;
  o.hosts = hosts;
  o.nics_per_host = nics;
  o.jobs = std::move(jobs);
  return o;
}

// SysfsFabric and SwitchFabric moved together every 100 ms, as railwatch-sim's loop does.
class SimFabric {
 public:
  SimFabric(const std::string& dir, SysfsFabric::Options o, SwitchFabric::Options so = {})
      : dir_(dir) {
    o.root = dir + "/sys";
    o.ground_truth_file = dir + "/truth.jsonl";
    nics_ = o.nics_per_host;
    railwatch::sim::testing::GiveKindsTruth(o, &so);
    nic_ = std::make_unique<SysfsFabric>(o);
    status_ = nic_->Create(kStart);
    if (!status_.ok()) return;
    so.hosts = o.hosts;
    so.nics_per_host = o.nics_per_host;
    so.ecn_misconfigs = o.ecn_misconfigs;
    so.ground_truth_file = o.ground_truth_file;
    absl::StatusOr<std::unique_ptr<SwitchFabric>> sw = SwitchFabric::Create(so, kStart);
    status_ = sw.status();
    if (sw.ok()) switches_ = std::move(*sw);
  }
  const absl::Status& status() const { return status_; }

  // Ticks until `t` after the start.
  void RunUntil(absl::Duration t) {
    for (; now_ + kTick <= t; now_ += kTick) {
      ASSERT_TRUE(nic_->Tick(kStart + now_ + kTick).ok());
      nic_->ReadTraffic(traffic_);
      ASSERT_TRUE(switches_->Update(kStart + now_ + kTick, traffic_).ok());
    }
  }

  std::string PortDir(int host, int nic) const {
    return absl::StrCat(dir_, "/sys/", SysfsFabric::HostName(host), "/class/infiniband/mlx5_", nic,
                        "/ports/1");
  }
  uint64_t Counter(int host, int nic, const std::string& name) const {
    return ReadCounter(absl::StrCat(PortDir(host, nic), "/", name));
  }
  PortCounters Port(int sw, int port) const {
    PortCounters c;
    switches_->WithSwitch(sw, [&](const SimSwitch& s) { c = s.ports[port].c; });
    return c;
  }
  // Bytes/s each NIC sent over [from, to) after the start (ticks the fabric to `to`).
  std::vector<double> TxRates(absl::Duration from, absl::Duration to, int hosts) {
    RunUntil(from);
    std::vector<uint64_t> before;
    for (int h = 1; h <= hosts; ++h) {
      for (int k = 0; k < nics_; ++k) before.push_back(Counter(h, k, "counters/port_xmit_data"));
    }
    RunUntil(to);
    std::vector<double> rates;
    for (int h = 1; h <= hosts; ++h) {
      for (int k = 0; k < nics_; ++k) {
        rates.push_back(
            static_cast<double>(Counter(h, k, "counters/port_xmit_data") - before[rates.size()]) *
            4 / absl::ToDoubleSeconds(to - from));
      }
    }
    return rates;
  }
  std::vector<YAML::Node> Truth() const { return GroundTruth(dir_ + "/truth.jsonl"); }

  std::unique_ptr<SysfsFabric> nic_;
  std::unique_ptr<SwitchFabric> switches_;

 private:
  std::string dir_;
  int nics_ = 0;
  absl::Status status_;
  absl::Duration now_;
  std::vector<NicTraffic> traffic_;
};

TEST(SimJobs, JobHostsRunAtTheirUtilisationInLockstep) {
  railwatch::testing::TempDir dir;
  SysfsFabric::Options o = Fabric(4, 4, {{"train", 1, 3, 0.8}});
  SimFabric f(dir.path(), o);
  ASSERT_TRUE(f.status().ok()) << f.status();
  const std::vector<double> rates = f.TxRates(absl::Seconds(1), absl::Seconds(6), 4);
  double lo = 1e18, hi = 0;
  for (int i = 0; i < 12; ++i) {  // hosts 1-3: the job
    EXPECT_NEAR(rates[i] / kLineBytesPerSecond, 0.8, 0.02) << "NIC " << i;
    lo = std::min(lo, rates[i]);
    hi = std::max(hi, rates[i]);
  }
  EXPECT_LT(hi / lo, 1.02) << "the job's NICs move together";
  // Host 4 keeps the background step rhythm: 0.85 x 60% + 0.02 x 40% of line rate on average.
  for (int i = 12; i < 16; ++i) EXPECT_NEAR(rates[i] / kLineBytesPerSecond, 0.518, 0.05) << i;
}

TEST(SimJobs, TopologyFileListsTheJobsAndLoads) {
  railwatch::testing::TempDir dir;
  SwitchFabric::Options so;
  so.hosts = 4;
  so.nics_per_host = 2;
  so.spines = 1;
  absl::StatusOr<std::unique_ptr<SwitchFabric>> f = SwitchFabric::Create(so, kStart);
  ASSERT_TRUE(f.ok());
  const std::string path = dir.path() + "/topology.yaml";
  ASSERT_TRUE(
      WriteTopologyFile(path, (*f)->switches(), 4, 2, {{"train", 1, 3}, {"eval", 4, 4}}).ok());
  absl::StatusOr<Topology> t = Topology::LoadFile(path);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->jobs().size(), 2u);
  EXPECT_EQ(t->jobs()[0].name, "train");
  EXPECT_EQ(t->jobs()[0].hosts,
            (std::vector<std::string>{"gpu-node-001", "gpu-node-002", "gpu-node-003"}));
  EXPECT_EQ(t->jobs()[0].gpus_per_host, 2);
  EXPECT_EQ(t->jobs()[1].hosts, (std::vector<std::string>{"gpu-node-004"}));
  // No jobs: no `jobs:` key at all (older readers reject unknown keys).
  ASSERT_TRUE(WriteTopologyFile(path, (*f)->switches(), 4, 2).ok());
  EXPECT_FALSE(YAML::LoadFile(path)["jobs"]);
}

TEST(SimDegrade, RateFileAndTrafficDropToTheFactorWhilePeersKeepTheirs) {
  railwatch::testing::TempDir dir;
  SysfsFabric::Options o = Fabric(4, 2, {{"train", 1, 4, 0.8}});
  o.degrades = {{"gpu-node-003", "mlx5_1", absl::Seconds(2), 0.5}};
  SimFabric f(dir.path(), o);
  ASSERT_TRUE(f.status().ok()) << f.status();
  const std::string rate = f.PortDir(3, 1) + "/rate";
  const std::vector<double> before = f.TxRates(absl::Seconds(0), absl::Milliseconds(1900), 4);
  EXPECT_EQ(FirstLine(*ReadFile(rate)), "400 Gb/sec (4X NDR)");
  EXPECT_TRUE(f.Truth().empty());
  const std::vector<double> after = f.TxRates(absl::Seconds(2), absl::Seconds(7), 4);
  EXPECT_EQ(FirstLine(*ReadFile(rate)), "200 Gb/sec (4X HDR)");
  // NIC index host-major: gpu-node-003/mlx5_1 is 5; its rail peers are 1, 3, 7.
  EXPECT_NEAR(before[5] / before[1], 1.0, 0.05);
  for (int peer : {1, 3, 7}) EXPECT_NEAR(after[5] / after[peer], 0.5, 0.03) << peer;
  for (int other : {0, 1, 2, 3, 4, 6, 7}) {
    EXPECT_NEAR(after[other] / kLineBytesPerSecond, 0.8, 0.02)
        << "NIC " << other << " keeps its rate";
  }
  // The leaf port mirrors the NIC: leaf-r1, host 3 on panel position 2.
  const PortCounters port = f.Port(1, 2);
  EXPECT_EQ(port.in_octets, f.Counter(3, 1, "counters/port_xmit_data") * 4);
  const std::vector<YAML::Node> truth = f.Truth();
  ASSERT_EQ(truth.size(), 1u);
  ExpectTruth(truth[0],
              {{"fault", "nic_degrade"},
               {"host", "gpu-node-003"},
               {"device", "mlx5_1"},
               {"factor", "0.5"},
               {"rate_gbps", "200"}},
              kStart + absl::Seconds(2));
}

TEST(SimEcn, EveryLeafMarksAndTheNicsAnswerWithCnps) {
  railwatch::testing::TempDir dir;
  SysfsFabric::Options o = Fabric(3, 2, {{"train", 1, 3, 0.8}});
  SimFabric f(dir.path(), o);
  ASSERT_TRUE(f.status().ok()) << f.status();
  f.RunUntil(absl::Seconds(5));
  for (int h = 1; h <= 3; ++h) {
    for (int k = 0; k < 2; ++k) {
      // 0.8 x 50 GB/s x 5 s x 20 marks per GB: about 4000 marks.
      const uint64_t marks = f.Counter(h, k, "hw_counters/np_ecn_marked_roce_packets");
      EXPECT_NEAR(static_cast<double>(marks), 4000, 400) << h << "/" << k;
      EXPECT_NEAR(static_cast<double>(f.Counter(h, k, "hw_counters/np_cnp_sent")),
                  marks * kCnpsPerMark, 250);
      EXPECT_GT(f.Counter(h, k, "hw_counters/rp_cnp_handled"), 2500u);
      // The leaf's egress queue toward the NIC made those marks.
      EXPECT_EQ(f.Port(k, h - 1).queue_ecn_marked[kRocePriority], marks);
    }
  }
}

TEST(SimEcn, MisconfiguredLeafStopsMarkingPausesItsNicsAndSlowsTheJob) {
  railwatch::testing::TempDir dir;
  SysfsFabric::Options o = Fabric(4, 2, {{"train", 1, 4, 0.8}});
  o.ecn_misconfigs = {{"leaf-r1", 1, absl::Seconds(5), 3}};
  SwitchFabric::Options so;
  so.spines = 1;
  SimFabric f(dir.path(), o, so);
  ASSERT_TRUE(f.status().ok()) << f.status();
  const std::vector<double> healthy = f.TxRates(absl::Seconds(1), absl::Milliseconds(4900), 4);
  EXPECT_TRUE(f.Truth().empty());
  f.RunUntil(absl::Seconds(5));
  struct Snapshot {
    std::vector<uint64_t> marks, cnps, out_pfc, in_pfc;
  };
  auto snap = [&] {
    Snapshot s;
    for (int h = 1; h <= 4; ++h) {
      for (int k = 0; k < 2; ++k) {
        s.marks.push_back(f.Counter(h, k, "hw_counters/np_ecn_marked_roce_packets"));
        s.cnps.push_back(f.Counter(h, k, "hw_counters/np_cnp_sent"));
      }
    }
    for (int k = 0; k < 2; ++k) {
      for (int p = 0; p < 5; ++p) {  // 4 host ports, then the uplink
        s.out_pfc.push_back(f.Port(k, p).out_pfc[kRocePriority]);
        s.in_pfc.push_back(f.Port(k, p).in_pfc[kRocePriority]);
      }
    }
    return s;
  };
  const Snapshot a = snap();
  const std::vector<double> slow = f.TxRates(absl::Seconds(5), absl::Seconds(15), 4);
  const Snapshot b = snap();
  for (int i = 0; i < 8; ++i) {
    const bool behind_r1 = i % 2 == 1;
    const uint64_t marks = b.marks[i] - a.marks[i], cnps = b.cnps[i] - a.cnps[i];
    if (behind_r1) {
      EXPECT_LT(marks, 60u) << "NIC " << i << ": leaf-r1 marks (almost) nothing";
      EXPECT_LT(cnps, 50u) << i;
    } else {
      EXPECT_GT(marks, 3000u) << "NIC " << i << ": leaf-r0 still marks";
      EXPECT_GT(cnps, 2400u) << i;
    }
    // The whole job slows in lockstep, on every rail.
    EXPECT_NEAR(slow[i] / healthy[i], 0.6, 0.03) << "NIC " << i;
  }
  for (int p = 0; p < 10; ++p) {
    const double sent = static_cast<double>(b.out_pfc[p] - a.out_pfc[p]) / 10;
    const double received = static_cast<double>(b.in_pfc[p] - a.in_pfc[p]) / 10;
    if (p >= 5) {  // leaf-r1: congestion pauses, far below a storm's 20000/s, far above benign
      EXPECT_GT(sent, 300) << "leaf-r1 port " << p - 5;
      EXPECT_LT(sent, 1500) << "leaf-r1 port " << p - 5;
    } else {
      EXPECT_LT(sent, 10) << "leaf-r0 port " << p << " pauses at the benign rate";
    }
    EXPECT_LT(received, 10) << "nobody pauses the leaves: port " << p;
  }
  const std::vector<YAML::Node> truth = f.Truth();
  ASSERT_EQ(truth.size(), 1u);
  ExpectTruth(truth[0],
              {{"fault", "ecn_misconfig"},
               {"switch", "leaf-r1"},
               {"queue", "3"},
               {"threshold_offset_kb", "3"}},
              kStart + absl::Seconds(5));
}

TEST(SimFlaps, FiveFlapsOfOneLinkAreFiveFlapsOnBothEnds) {
  railwatch::testing::TempDir dir;
  SysfsFabric::Options o = Fabric(2, 2);
  for (int i = 0; i < 5; ++i) {
    o.flaps.push_back(
        {"gpu-node-002", "mlx5_1", 1, absl::Seconds(5 + 10 * i), absl::Milliseconds(300)});
  }
  SimFabric f(dir.path(), o);
  ASSERT_TRUE(f.status().ok()) << f.status();
  for (int i = 0; i < 5; ++i) {
    f.RunUntil(absl::Seconds(5 + 10 * i) + absl::Milliseconds(100));
    EXPECT_EQ(FirstLine(*ReadFile(f.PortDir(2, 1) + "/state")), "1: DOWN") << "flap " << i;
    EXPECT_EQ(f.Counter(2, 1, "counters/link_downed"), static_cast<uint64_t>(i + 1));
    // leaf-r1, host 2 on panel position 1: DOWN now, one more transition.
    bool up = true;
    f.switches_->WithSwitch(1, [&](const SimSwitch& s) { up = s.ports[1].up; });
    EXPECT_FALSE(up) << "flap " << i;
    EXPECT_EQ(f.Port(1, 1).carrier_transitions, static_cast<uint64_t>(2 * i + 1));
    f.RunUntil(absl::Seconds(5 + 10 * i) + absl::Milliseconds(500));
    EXPECT_EQ(FirstLine(*ReadFile(f.PortDir(2, 1) + "/state")), "4: ACTIVE") << "flap " << i;
    EXPECT_EQ(f.Port(1, 1).carrier_transitions, static_cast<uint64_t>(2 * i + 2));
  }
  EXPECT_EQ(f.Counter(2, 0, "counters/link_downed"), 0u);
  const std::vector<YAML::Node> truth = f.Truth();
  ASSERT_EQ(truth.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    ExpectTruth(truth[i], {{"fault", "link_flap"}, {"host", "gpu-node-002"}, {"device", "mlx5_1"}},
                kStart + absl::Seconds(5 + 10 * i));
  }
}

TEST(SimFlaps, OverlappingFlapsOfOneLinkAreRejected) {
  railwatch::testing::TempDir dir;
  SysfsFabric::Options o;
  o.root = dir.path();
  o.hosts = 1;
  o.flaps.push_back({"gpu-node-001", "mlx5_0", 1, absl::Seconds(5), absl::Milliseconds(300)});
  o.flaps.push_back(
      {"gpu-node-001", "mlx5_1", 1, absl::Milliseconds(5100), absl::Milliseconds(300)});
  o.flaps.push_back(
      {"gpu-node-001", "mlx5_0", 1, absl::Milliseconds(5200), absl::Milliseconds(300)});
  SysfsFabric fabric(o);
  const absl::Status s = fabric.Create(kStart);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(
      std::string(s.message()).find("flaps of gpu-node-001/mlx5_0/1 at 5s and 5s200ms overlap"),
      std::string::npos)
      << s.message();
}

TEST(SimPfcStorm, PausesReachEveryUplinkOfTheLeafWithinTwoSeconds) {
  railwatch::testing::TempDir dir;
  SysfsFabric::Options o = Fabric(4, 2, {{"train", 1, 4, 0.8}});
  SwitchFabric::Options so;
  so.spines = 3;
  so.storms.push_back({"gpu-node-002", "mlx5_0", absl::Seconds(3), absl::Seconds(30)});
  SimFabric f(dir.path(), o, so);
  ASSERT_TRUE(f.status().ok()) << f.status();
  f.RunUntil(absl::Seconds(3) - kTick);
  std::vector<uint64_t> before;
  for (int p = 0; p < 7; ++p) before.push_back(f.Port(0, p).out_pfc[kRocePriority]);
  const uint64_t storm_before = f.Port(0, 1).in_pfc[kRocePriority];
  f.RunUntil(absl::Seconds(5));
  // leaf-r0: the source's port receives the storm; every other port, uplinks 4-6 included,
  // sends the relayed pauses (3000/s: about 6000 in 2 s); the spines receive them.
  EXPECT_GT(f.Port(0, 1).in_pfc[kRocePriority] - storm_before, 30000u);
  for (int p = 0; p < 7; ++p) {
    if (p == 1) continue;
    EXPECT_GT(f.Port(0, p).out_pfc[kRocePriority] - before[p], 4000u) << "leaf-r0 port " << p;
  }
  for (int s = 0; s < 3; ++s) {
    EXPECT_GT(f.Port(2 + s, 0).in_pfc[kRocePriority], 4000u) << "spine-" << s << " from leaf-r0";
    EXPECT_LT(f.Port(2 + s, 1).in_pfc[kRocePriority], 100u) << "spine-" << s << " from leaf-r1";
  }
  // Nothing on the other leaf.
  for (int p = 0; p < 7; ++p) EXPECT_LT(f.Port(1, p).out_pfc[kRocePriority], 100u) << p;
}

}  // namespace sim_faults_test
}  // namespace railwatch::sim
