// The registry of fault kinds (sim/fault_kinds.h): every kind registered once with its flag,
// and a fault reaches the simulated hosts and switches the same way from a scenario file and
// from its railwatch-sim flag.
#include "sim/fault_kinds.h"

#include <set>

#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/scenario.h"

namespace railwatch::sim {
namespace fault_kinds_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string At(absl::Duration d) { return absl::FormatDuration(d); }

// What the models were handed, one line per fault, in a fixed order per model input.
std::vector<std::string> Describe(const SysfsFabric::Options& h, const SwitchFabric::Options& sw) {
  std::vector<std::string> out;
  for (const LinkFlap& f : h.flaps) {
    out.push_back(absl::StrCat("flap ", f.host, "/", f.device, "/", f.port, "@", At(f.at), " down ",
                               At(f.down_for), " ", f.repeat, "/", f.of));
  }
  for (const StormingNic& s : h.storms) {
    out.push_back(absl::StrCat("host storm ", s.host, "/", s.device, "@", At(s.at), " for ", At(s.duration)));
  }
  for (const PfcStorm& s : sw.storms) {
    out.push_back(absl::StrCat("switch storm ", s.host, "/", s.device, "@", At(s.at), " for ", At(s.duration)));
  }
  for (const PfcDeadlock& d : h.deadlocks) {
    out.push_back(absl::StrCat("host deadlock ", d.host, "/", d.device, "@", At(d.at), " for ", At(d.duration)));
  }
  for (const PfcDeadlock& d : sw.deadlocks) {
    out.push_back(absl::StrCat("switch deadlock ", d.host, "/", d.device, "@", At(d.at), " for ", At(d.duration)));
  }
  for (const BitErrors& b : h.bit_errors) {
    out.push_back(absl::StrCat("ber ", b.host, "/", b.device, "@", At(b.at), " ", b.per_minute));
  }
  for (const NicDegrade& d : h.degrades) {
    out.push_back(absl::StrCat("degrade ", d.host, "/", d.device, "@", At(d.at), " ", d.factor));
  }
  for (const Straggler& x : h.stragglers) {
    out.push_back(absl::StrCat("straggler ", x.host, "/", x.device, "@", At(x.at), " ", x.factor));
  }
  for (const SlowRank& x : h.slow_ranks) {
    out.push_back(absl::StrCat("slow_rank ", x.host, "/", x.device, "@", At(x.at), " ", x.factor));
  }
  for (const RankHang& x : h.rank_hangs) {
    out.push_back(absl::StrCat("rank_hang ", x.host, "/", x.device, "@", At(x.at)));
  }
  for (const LinkAtRisk& x : h.links_at_risk) {
    out.push_back(absl::StrCat("at_risk ", static_cast<int>(x.what), " ", x.host, "/", x.device,
                               "@", At(x.at), " ", x.to, " over ", At(x.ramp), " fails ",
                               At(x.fails_after)));
  }
  for (const NicHealth& x : h.nic_health) {
    out.push_back(absl::StrCat("nic_health ", x.host, "/", x.device, "@", At(x.at), " x", x.count,
                               " every ", At(x.period)));
  }
  for (const PcieAer& x : h.pcie_aer) {
    out.push_back(absl::StrCat("pcie_aer ", x.host, "/", x.device, "@", At(x.at), " ", x.per_minute));
  }
  for (const EcnMisconfig& m : h.ecn_misconfigs) {
    out.push_back(absl::StrCat("host ecn ", m.switch_name, " g", m.group, " r", m.rail, "@", At(m.at),
                               " ", m.threshold_offset_kb));
  }
  for (const EcnMisconfig& m : sw.ecn_misconfigs) {
    out.push_back(absl::StrCat("switch ecn ", m.switch_name, " g", m.group, " r", m.rail, "@",
                               At(m.at), " ", m.threshold_offset_kb));
  }
  for (const WrongPriority& w : h.wrong_priorities) {
    out.push_back(absl::StrCat("wrong_priority ", w.host, "@", At(w.at)));
  }
  for (const NicGone& g : h.nics_gone) out.push_back(absl::StrCat("gone ", g.host, "/", g.device, "@", At(g.at)));
  for (const PacketLoss& l : h.packet_losses) {
    out.push_back(absl::StrCat("loss ", l.host, "/", l.device, "@", At(l.at), " ", l.per_second));
  }
  for (const NcclError& e : h.nccl_errors) out.push_back(absl::StrCat("nccl ", e.host, "@", At(e.at), " ", e.kind));
  for (const DriverReload& r : h.driver_reloads) {
    out.push_back(absl::StrCat("reload ", r.host, "/", r.device, "@", At(r.at)));
  }
  return out;
}

// What the models get from a scenario's faults.
struct Models {
  SysfsFabric::Options hosts;
  SwitchFabric::Options switches;
  IbSwitchModel::Options ib;
};
Models FromScenario(const std::string& yaml) {
  Models m;
  const absl::StatusOr<Scenario> s = ParseScenario(yaml, "s.yaml");
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return m;
  SimFaultTargets targets{m.hosts, m.switches, m.ib, s->topology.infiniband};
  EXPECT_TRUE(ApplyScenarioFaults(*s, targets).ok());
  return m;
}

TEST(FaultKinds, EachRegisteredOnceWithItsFlag) {
  std::set<std::string> names, flags;
  for (const FaultKind* k : FaultKinds()) {
    EXPECT_TRUE(names.insert(std::string(k->kind)).second) << k->kind;
    EXPECT_TRUE(flags.insert(std::string(k->flag)).second) << k->flag;
    EXPECT_EQ(FindFaultKind(k->kind), k);
    EXPECT_NE(FindFaultKindByTruth(k->truth_kind), nullptr) << k->truth_kind;
    EXPECT_FALSE(k->playbook.empty()) << k->kind;
    EXPECT_FALSE(k->culprit.empty()) << k->kind;
    // Its flag (and each companion) is defined by the kind's file, so railwatch-sim has it.
    EXPECT_NE(absl::FindCommandLineFlag(k->flag), nullptr) << k->flag;
    for (absl::string_view c : k->companion_flags) EXPECT_NE(absl::FindCommandLineFlag(c), nullptr) << c;
  }
  EXPECT_EQ(names.size(), 24u);
  EXPECT_EQ(FindFaultKind("pfc_strom"), nullptr);
  EXPECT_EQ(FindFaultKindByTruth("nic_degrade")->kind, "link_degrade");
  EXPECT_EQ(FindFaultKind("pfc_deadlock")->culprit,
            (std::vector<absl::string_view>{"switch", "interface"}));
}

// Every kind once, in a scenario file and as its flag, with the same values: the models get
// the same faults either way.
TEST(FaultKinds, ScenarioAndFlagReachTheModelsAlike) {
  const Models from_file = FromScenario(R"(duration: 5m
topology: {hosts: 4, nics: 4, hosts_per_leaf: 2}
jobs: [{name: train, hosts: 1-4}]
noise:
  driver_reloads: [{host: gpu-node-004, device: mlx5_3, at: 90s}]
faults:
  - {kind: pfc_storm, at: 10s, host: gpu-node-001, device: mlx5_0, for: 30s}
  - {kind: pfc_deadlock, at: 20s, host: gpu-node-002, device: mlx5_1, for: 40s}
  - {kind: link_flap, at: 30s, host: gpu-node-003, device: mlx5_2, port: 2, down_for: 300ms}
  - {kind: link_flap_repeated, at: 40s, host: gpu-node-004, device: mlx5_3, count: 3, period: 2s, down_for: 300ms}
  - {kind: bit_errors, at: 50s, host: gpu-node-001, device: mlx5_1, per_minute: 240}
  - {kind: link_degrade, at: 1m, host: gpu-node-002, device: mlx5_2, factor: 0.25}
  - {kind: straggler, at: 70s, host: gpu-node-003, device: mlx5_3, factor: 0.4}
  - {kind: ecn_misconfig, at: 80s, switch: leaf-g1-r2, offset_kb: 2}
  - {kind: wrong_priority, at: 90s, host: gpu-node-004}
  - {kind: nic_gone, at: 100s, host: gpu-node-001, device: mlx5_2}
  - {kind: packet_loss, at: 110s, host: gpu-node-002, device: mlx5_3, per_second: 800}
  - {kind: nccl_error, at: 2m, host: gpu-node-003, error: ib_completion}
  - {kind: slow_rank, at: 130s, host: gpu-node-004, device: mlx5_1}
  - {kind: rank_hang, at: 140s, host: gpu-node-001, device: mlx5_3}
  - {kind: ber_rising, at: 150s, host: gpu-node-002, device: mlx5_0, to: 2e-4}
  - {kind: optics_drift, at: 160s, host: gpu-node-003, device: mlx5_1}
  - {kind: optics_hot, at: 170s, host: gpu-node-004, device: mlx5_2, to: 5}
  - {kind: nic_health, at: 180s, host: gpu-node-001, device: mlx5_0, count: 2}
  - {kind: pcie_aer, at: 190s, host: gpu-node-002, device: mlx5_1, per_minute: 12}
)");

  const std::vector<std::pair<const char*, const char*>> flags = {
      {"pfc_storm", "gpu-node-001/mlx5_0@10s"},
      {"pfc_deadlock", "gpu-node-002/mlx5_1@20s:40s"},
      {"link_flap", "gpu-node-003/mlx5_2/2@30s"},
      {"link_flap_repeated", "gpu-node-004/mlx5_3/1@40s:3:2s"},
      {"bit_errors", "gpu-node-001/mlx5_1@50s:240"},
      {"link_degrade", "gpu-node-002/mlx5_2@60s:0.25"},
      {"straggler", "gpu-node-003/mlx5_3@70s:0.4"},
      {"ecn_misconfig", "leaf-g1-r2@80s:2"},
      {"wrong_priority", "gpu-node-004@90s"},
      {"nic_gone", "gpu-node-001/mlx5_2@100s"},
      {"packet_loss", "gpu-node-002/mlx5_3@110s:800"},
      {"nccl_error", "gpu-node-003@120s:ib_completion"},
      {"slow_rank", "gpu-node-004/mlx5_1@130s"},
      {"rank_hang", "gpu-node-001/mlx5_3@140s"},
      {"ber_rising", "gpu-node-002/mlx5_0@150s:2e-4"},
      {"optics_drift", "gpu-node-003/mlx5_1@160s"},
      {"optics_hot", "gpu-node-004/mlx5_2@170s:5"},
      {"nic_health", "gpu-node-001/mlx5_0@180s:2"},
      {"pcie_aer", "gpu-node-002/mlx5_1@190s:12"},
  };
  SysfsFabric::Options from_flags_hosts;
  SwitchFabric::Options from_flags_switches;
  IbSwitchModel::Options from_flags_ib;
  SimFaultTargets from_flags{from_flags_hosts, from_flags_switches, from_flags_ib};
  for (const auto& [kind, spec] : flags) {
    const FaultKind* k = FindFaultKind(kind);
    ASSERT_NE(k, nullptr) << kind;
    absl::StatusOr<ScenarioFault> f = k->ParseFlag(spec);
    ASSERT_TRUE(f.ok()) << f.status();
    EXPECT_EQ(f->info, k);
    EXPECT_EQ(f->kind, kind);
    ASSERT_TRUE(k->Apply(*f, from_flags).ok());
  }
  from_flags_hosts.driver_reloads.push_back({"gpu-node-004", "mlx5_3", absl::Seconds(90)});

  const std::vector<std::string> want = Describe(from_file.hosts, from_file.switches);
  EXPECT_EQ(want, Describe(from_flags_hosts, from_flags_switches));
  EXPECT_THAT(want, ElementsAre("flap gpu-node-003/mlx5_2/2@30s down 300ms 0/0",
                                "flap gpu-node-004/mlx5_3/1@40s down 300ms 1/3",
                                "flap gpu-node-004/mlx5_3/1@42s down 300ms 2/3",
                                "flap gpu-node-004/mlx5_3/1@44s down 300ms 3/3",
                                "host storm gpu-node-001/mlx5_0@10s for 30s",
                                "switch storm gpu-node-001/mlx5_0@10s for 30s",
                                "host deadlock gpu-node-002/mlx5_1@20s for 40s",
                                "switch deadlock gpu-node-002/mlx5_1@20s for 40s",
                                "ber gpu-node-001/mlx5_1@50s 240",
                                "degrade gpu-node-002/mlx5_2@1m 0.25",
                                "straggler gpu-node-003/mlx5_3@1m10s 0.4",
                                "slow_rank gpu-node-004/mlx5_1@2m10s 0.75",
                                "rank_hang gpu-node-001/mlx5_3@2m20s",
                                "at_risk 0 gpu-node-002/mlx5_0@2m30s 0.0002 over 3m fails 4m",
                                "at_risk 1 gpu-node-003/mlx5_1@2m40s 12 over 3m fails 4m",
                                "at_risk 2 gpu-node-004/mlx5_2@2m50s 5 over 3m fails 4m",
                                "nic_health gpu-node-001/mlx5_0@3m x2 every 20s",
                                "pcie_aer gpu-node-002/mlx5_1@3m10s 12",
                                "host ecn leaf-g1-r2 g1 r2@1m20s 2",
                                "switch ecn leaf-g1-r2 g1 r2@1m20s 2",
                                "wrong_priority gpu-node-004@1m30s",
                                "gone gpu-node-001/mlx5_2@1m40s",
                                "loss gpu-node-002/mlx5_3@1m50s 800",
                                "nccl gpu-node-003@2m ib_completion",
                                "reload gpu-node-004/mlx5_3@1m30s"));
}

// What the IB switches were handed, one line per fault.
std::vector<std::string> DescribeIb(const IbSwitchModel::Options& ib) {
  std::vector<std::string> out;
  for (const IbSlowReceiver& r : ib.slow_receivers) {
    out.push_back(absl::StrCat("slow ", r.host, "/", r.device, "@", At(r.at), " for ", At(r.duration)));
  }
  for (const IbPortFault& f : ib.port_faults) {
    out.push_back(absl::StrCat("port ", static_cast<int>(f.type), " ", f.switch_name, "/", f.port,
                               "@", At(f.at), " ", f.per_minute, " ", f.width, "x ",
                               At(f.down_for)));
  }
  return out;
}

// The InfiniBand kinds, in a `fabric: ib` scenario and as their flags, reach the IB switches
// alike; the fabric-neutral kinds (a host's link flap) still reach the hosts.
TEST(FaultKinds, InfinibandKindsFromScenarioAndFlags) {
  const Models from_file = FromScenario(R"(duration: 5m
topology: {hosts: 8, nics: 4, spines: 2, fabric: ib}
faults:
  - {kind: ib_slow_receiver, at: 10s, host: gpu-node-004, device: mlx5_0}
  - {kind: ib_bad_cable, at: 20s, switch: leaf-r2, port: 9, per_minute: 90}
  - {kind: ib_width_degrade, at: 30s, switch: leaf-r1, port: 10, width: 2}
  - {kind: ib_link_flap, at: 40s, switch: spine-0, port: 3}
  - {kind: ib_xmit_discards, at: 50s, switch: leaf-r0, port: 3, per_minute: 120}
  - {kind: link_flap, at: 60s, host: gpu-node-005, device: mlx5_1}
)");
  const std::vector<std::pair<const char*, const char*>> flags = {
      {"ib_slow_receiver", "gpu-node-004/mlx5_0@10s"},
      {"ib_bad_cable", "leaf-r2/9@20s:90"},
      {"ib_width_degrade", "leaf-r1/10@30s:2"},
      {"ib_link_flap", "spine-0/3@40s"},
      {"ib_xmit_discards", "leaf-r0/3@50s:120"},
  };
  SysfsFabric::Options hosts;
  SwitchFabric::Options switches;
  IbSwitchModel::Options ib;
  SimFaultTargets from_flags{hosts, switches, ib, true};
  for (const auto& [kind, spec] : flags) {
    const FaultKind* k = FindFaultKind(kind);
    ASSERT_NE(k, nullptr) << kind;
    EXPECT_EQ(k->fabric, FaultFabric::kInfiniband) << kind;
    absl::StatusOr<ScenarioFault> f = k->ParseFlag(spec);
    ASSERT_TRUE(f.ok()) << f.status();
    ASSERT_TRUE(k->Apply(*f, from_flags).ok());
  }
  EXPECT_EQ(DescribeIb(from_file.ib), DescribeIb(ib));
  EXPECT_THAT(DescribeIb(ib), ElementsAre("slow gpu-node-004/mlx5_0@10s for 0",
                                          "port 0 leaf-r2/9@20s 90 1x 300ms",
                                          "port 1 leaf-r1/10@30s 120 2x 300ms",
                                          "port 2 spine-0/3@40s 120 1x 300ms",
                                          "port 3 leaf-r0/3@50s 120 1x 300ms"));
  ASSERT_EQ(from_file.hosts.flaps.size(), 1u);
  EXPECT_EQ(from_file.hosts.flaps[0].host, "gpu-node-005");
}

// A kind of the other fabric is an error: in a scenario at its `kind`, and as a flag.
TEST(FaultKinds, AKindOfTheOtherFabricIsRefused) {
  absl::StatusOr<Scenario> s = ParseScenario(R"(duration: 1m
topology: {hosts: 4, nics: 2, spines: 2}
faults:
  - {kind: ib_bad_cable, at: 10s, switch: leaf-r0, port: 5}
)", "roce.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()),
              HasSubstr("roce.yaml:4:12: error[conflict]: ib_bad_cable is a fault of InfiniBand "
                        "fabrics; this scenario's is RoCE (set `fabric: ib` in `topology`)"));
  s = ParseScenario(R"(duration: 1m
topology: {hosts: 4, nics: 2, spines: 2, fabric: ib}
faults:
  - {kind: pfc_storm, at: 10s, host: gpu-node-001, device: mlx5_0}
  - {kind: ib_link_flap, at: 10s, switch: leaf-r0, port: 2}
  - {kind: ib_xmit_discards, at: 10s, switch: spine-1, port: 3}
)", "ib.yaml");
  ASSERT_FALSE(s.ok());
  const std::string e(s.status().message());
  EXPECT_THAT(e, HasSubstr("ib.yaml:4:12: error[conflict]: pfc_storm is a fault of RoCE fabrics; "
                           "this scenario's is InfiniBand"));
  // leaf-r0's ports 1-4 face the hosts, 5-6 the spines; a spine has one port per leaf.
  EXPECT_THAT(e, HasSubstr("error[bad-value]: leaf-r0 port 2 faces a host; a ib_link_flap is of a "
                           "switch-to-switch link (ports 5-6)"));
  EXPECT_THAT(e, HasSubstr("error[not-in-topology]: spine-1 has ports 1-2, not 3"));

  s = ParseScenario("duration: 1m\ntopology: {hosts: 4, ib_source: mad}\n", "src.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.status().message()),
              HasSubstr("src.yaml:2:33: error[conflict]: `ib_source` is the InfiniBand scanner's"));
  s = ParseScenario("duration: 1m\ntopology: {fabric: ib, ib_source: mad}\n", "src.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->topology.ib_mad);

  SysfsFabric::Options hosts;
  SwitchFabric::Options switches;
  IbSwitchModel::Options ib;
  SimFaultTargets roce{hosts, switches, ib, false};
  absl::FlagSaver saver;
  std::string error;
  ASSERT_TRUE(absl::FindCommandLineFlag("ib_flap")->ParseFrom("leaf-r0/5@10s", &error)) << error;
  const absl::Status st = ApplyFaultFlags(roce);
  EXPECT_THAT(std::string(st.message()),
              HasSubstr("--ib_flap=leaf-r0/5@10s: ib_link_flap is a fault of InfiniBand fabrics, "
                        "and this one is RoCE"));
}

// Each storm and each flap keeps its own `for` and `down_for` (the flags' --pfc_storm_for and
// --flap_down_for are one for all, but a scenario is not serialised into them).
TEST(FaultKinds, EachFaultKeepsItsOwnDurations) {
  const Models m = FromScenario(R"(duration: 60s
faults:
  - {kind: pfc_storm, at: 5s, host: gpu-node-001, device: mlx5_0, for: 5s}
  - {kind: pfc_storm, at: 9s, host: gpu-node-002, device: mlx5_0}
  - {kind: link_flap, at: 5s, host: gpu-node-003, device: mlx5_0}
  - {kind: link_flap, at: 9s, host: gpu-node-004, device: mlx5_0, down_for: 2s}
)");
  ASSERT_EQ(m.switches.storms.size(), 2u);
  EXPECT_EQ(m.switches.storms[0].duration, absl::Seconds(5));
  EXPECT_EQ(m.switches.storms[1].duration, absl::ZeroDuration());  // to the end
  ASSERT_EQ(m.hosts.storms.size(), 2u);
  EXPECT_EQ(m.hosts.storms[0].duration, absl::Seconds(5));
  ASSERT_EQ(m.hosts.flaps.size(), 2u);
  EXPECT_EQ(m.hosts.flaps[0].down_for, absl::Milliseconds(300));
  EXPECT_EQ(m.hosts.flaps[1].down_for, absl::Seconds(2));
}

TEST(FaultKinds, BadFlagValuesNameTheFlagAndTheForm) {
  absl::StatusOr<ScenarioFault> f = FindFaultKind("pfc_deadlock")->ParseFlag("gpu-node-001@5s");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(std::string(f.status().message()),
              HasSubstr("bad --pfc_deadlock value \"gpu-node-001@5s\": \"gpu-node-001\" is not "
                        "HOST/DEVICE; expected HOST/DEVICE@OFFSET[:DURATION]"));
  f = FindFaultKind("nccl_error")->ParseFlag("gpu-node-001@5s:segfault");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(std::string(f.status().message()), HasSubstr("--nccl_error"));
  f = FindFaultKind("ecn_misconfig")->ParseFlag("spine-0@5s");
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(std::string(f.status().message()), HasSubstr("SWITCH must be a leaf"));
}

// A kind's own checks of a scenario's fault, with file:line:column and a code.
TEST(FaultKinds, KindChecksInAScenario) {
  auto problems = [](const std::string& faults) {
    absl::StatusOr<Scenario> s = ParseScenario(
        "duration: 30s\njobs: [{name: t, hosts: 1-2}]\nfaults:\n" + faults, "k.yaml");
    EXPECT_FALSE(s.ok());
    return s.ok() ? "" : std::string(s.status().message());
  };
  EXPECT_THAT(problems("  - {kind: link_degrade, at: 5s, host: gpu-node-001, device: mlx5_0, "
                       "factor: 1}\n"),
              HasSubstr("k.yaml:4:78: error[bad-value]: `factor` of a link_degrade must be below 1"));
  EXPECT_THAT(problems("  - {kind: link_flap_repeated, at: 5s, host: gpu-node-001, device: mlx5_0, "
                       "count: 2, period: 200ms}\n"),
              HasSubstr("error[bad-value]: `period` must be longer than the link stays down (300ms)"));
  EXPECT_THAT(problems("  - {kind: link_flap_repeated, at: 5s, host: gpu-node-001, device: mlx5_0}\n"),
              HasSubstr("k.yaml:4:5: error[missing-key]: a link_flap_repeated fault: `count` is "
                        "required"));
  EXPECT_THAT(problems("  - {kind: nccl_error, at: 5s, host: gpu-node-003}\n"),
              HasSubstr("error[bad-value]: no job runs on gpu-node-003"));
  EXPECT_THAT(problems("  - {kind: ecn_misconfig, at: 5s, switch: leaf-r1, offset_kb: -1}\n"),
              HasSubstr("error[bad-value]: `offset_kb` must be a number in (0, 1e+06], not \"-1\""));
  EXPECT_THAT(problems("  - {kind: wrong_priority, at: 5s, host: gpu-node-001, device: mlx5_0}\n"),
              HasSubstr("error[unknown-key]: unknown key `device` in a wrong_priority fault"));
}

}  // namespace fault_kinds_test
}  // namespace railwatch::sim
