// Scenario -> command lines (sim/scenario_flags.h), and the flags of `railwatch-sim run` and
// `score` (sim/runner_flags.h).
#include "sim/scenario_flags.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/runner_flags.h"

namespace railwatch::sim {
namespace scenario_flags_test {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

Scenario Load(const std::string& yaml) {
  absl::StatusOr<Scenario> s = ParseScenario(yaml, "s.yaml");
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : Scenario{};
}

// The simulator of today plus the flags a test names.
HasFlag Flags(std::set<std::string> extra = {}) {
  std::set<std::string> known = {"root",
                                 "hosts",
                                 "nics",
                                 "seed",
                                 "link_gbps",
                                 "spines",
                                 "switch_dialects",
                                 "gnmi_targets_out",
                                 "topology_out",
                                 "ground_truth",
                                 "job",
                                 "flap",
                                 "flap_down_for",
                                 "degrade",
                                 "ecn_misconfig",
                                 "pfc_storm",
                                 "pfc_storm_for",
                                 "scenario"};
  known.insert(extra.begin(), extra.end());
  return [known](absl::string_view f) { return known.count(std::string(f)) > 0; };
}

TEST(ScenarioFlags, SimulatorCommandLine) {
  const Scenario ok = Load(R"(duration: 70s
seed: 9
topology: {hosts: 8, nics: 4, spines: 2, dialects: [sonic, arista-eos]}
jobs: [{name: train, hosts: 1-6, util: 0.7}, {name: eval, hosts: 7-8}]
faults:
  - {kind: pfc_storm, at: 20s, host: gpu-node-003, device: mlx5_2}
  - {kind: link_flap, at: 1m5s, host: gpu-node-001, device: mlx5_0, down_for: 500ms}
  - {kind: link_flap, at: 25s, host: gpu-node-001, device: mlx5_0, port: 2, down_for: 500ms}
  - {kind: link_degrade, at: 30s, host: gpu-node-004, device: mlx5_3, factor: 0.25}
  - {kind: ecn_misconfig, at: 40s, switch: leaf-r1}
)");
  const RunPaths p = RunPathsUnder("/w");
  absl::StatusOr<std::vector<std::string>> args = SimulatorArgs(ok, p, Flags());
  ASSERT_TRUE(args.ok()) << args.status();
  // The faults travel in the scenario file, which the simulator reads through the fault kinds
  // (sim/fault_kinds.h): no flag string per fault.
  EXPECT_THAT(*args,
              ElementsAre("--root=/w/sys", "--hosts=8", "--nics=4", "--seed=9", "--link_gbps=400",
                          "--spines=2", "--switch_dialects=sonic,arista-eos",
                          "--gnmi_targets_out=/w/targets.yaml", "--topology_out=/w/topology.yaml",
                          "--ground_truth=/w/truth.jsonl",
                          "--scenario=" + std::filesystem::absolute("s.yaml").string(),
                          "--job=train:1-6:0.7,eval:7-8:0.8"));
}

TEST(ScenarioFlags, NewFaultKindsAndNoise) {
  const Scenario s = Load(R"(duration: 90s
topology: {hosts: 4, nics: 2, hosts_per_leaf: 2}
jobs: [{name: train, hosts: 1-4}]
noise:
  bursty: false
  benign_pause_rate: 0.5
  driver_reloads: [{host: gpu-node-001, device: mlx5_1, at: 5s}]
faults:
  - {kind: pfc_deadlock, at: 10s, host: gpu-node-001, device: mlx5_0, for: 20s}
  - {kind: link_flap_repeated, at: 15s, host: gpu-node-002, device: mlx5_1, count: 5, period: 4s}
  - {kind: bit_errors, at: 20s, host: gpu-node-003, device: mlx5_0}
  - {kind: straggler, at: 25s, host: gpu-node-004, device: mlx5_1, factor: 0.4}
  - {kind: wrong_priority, at: 30s, host: gpu-node-002}
  - {kind: nic_gone, at: 35s, host: gpu-node-003, device: mlx5_1}
  - {kind: packet_loss, at: 40s, host: gpu-node-004, device: mlx5_0, per_second: 800}
  - {kind: nccl_error, at: 45s, host: gpu-node-001, error: ib_completion}
)");
  const std::set<std::string> all = {"hosts_per_leaf", "bursty", "benign_pause_rate", "ethtool",
                                      "nccl_logs"};
  absl::StatusOr<std::vector<std::string>> args = SimulatorArgs(s, RunPathsUnder("/w"), Flags(all));
  ASSERT_TRUE(args.ok()) << args.status();
  for (const char* want : {"--hosts_per_leaf=2", "--bursty=false", "--benign_pause_rate=0.5",
                           "--ethtool", "--nccl_logs", "--job=train:1-4:0.8"}) {
    EXPECT_THAT(*args, Contains(want));
  }
  EXPECT_THAT(*args, Contains("--scenario=" + std::filesystem::absolute("s.yaml").string()));
  // Not one fault flag: every kind's flag, the companions and the noise's.
  for (const FaultKind* k : FaultKinds()) {
    EXPECT_THAT(*args, Not(Contains(HasSubstr(absl::StrCat("--", k->flag, "=")))));
  }
  for (const char* flag : {"--pfc_storm_for", "--flap_down_for", "--driver_reload"}) {
    EXPECT_THAT(*args, Not(Contains(HasSubstr(flag))));
  }

  // A simulator without --scenario (or the fabric settings the scenario needs): the scenario is
  // refused, naming every missing flag.
  absl::StatusOr<std::vector<std::string>> old = SimulatorArgs(
      s, RunPathsUnder("/w"), [](absl::string_view f) { return f == "root"; });
  ASSERT_FALSE(old.ok());
  EXPECT_THAT(std::string(old.status().message()),
              HasSubstr("s.yaml: this railwatch-sim has no --hosts_per_leaf, --benign_pause_rate, "
                        "--scenario"));
  // Driver reloads alone need it too; a scenario with neither faults nor reloads does not.
  const Scenario reloads = Load(
      "duration: 30s\nnoise: {driver_reloads: [{host: gpu-node-001, device: mlx5_1, at: 5s}]}\n");
  EXPECT_FALSE(SimulatorArgs(reloads, RunPathsUnder("/w"), [](absl::string_view f) {
                 return f != "scenario";
               }).ok());
  EXPECT_TRUE(SimulatorArgs(Load("duration: 30s\n"), RunPathsUnder("/w"), [](absl::string_view f) {
                return f != "scenario";
              }).ok());
}

TEST(ScenarioFlags, OptionalFlagsAtTheirDefaultsAreLeftOutWhenMissing) {
  const Scenario s = Load("duration: 30s\n");
  absl::StatusOr<std::vector<std::string>> args = SimulatorArgs(s, RunPathsUnder("/w"), Flags());
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_THAT(*args, Not(Contains(HasSubstr("--bursty"))));
  EXPECT_THAT(*args, Not(Contains(HasSubstr("--ethtool"))));
  absl::StatusOr<std::vector<std::string>> now = SimulatorArgs(
      s, RunPathsUnder("/w"), Flags({"bursty", "ethtool", "nccl_logs", "hosts_per_leaf"}));
  ASSERT_TRUE(now.ok());
  EXPECT_THAT(*now, Contains("--bursty=true"));
  EXPECT_THAT(*now, Contains("--ethtool"));
  EXPECT_THAT(*now, Contains("--nccl_logs"));
  EXPECT_THAT(*now, Contains("--hosts_per_leaf=0"));
}

TEST(ScenarioFlags, DaemonAndAgents) {
  const RunPaths p = RunPathsUnder("/w");
  EXPECT_THAT(
      DaemonArgs(p, "/src/rules"),
      ElementsAre("--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0", "--rules=/src/rules",
                  "--topology=/w/topology.yaml", "--ready_file=/w/daemon-ready.json"));
  EXPECT_THAT(SwitchAgentArgs(p, "127.0.0.1:4000", "/src/profiles/gnmi"),
              ElementsAre("--role=switch", "--agent_id=switch-agent", "--server=127.0.0.1:4000",
                          "--interval=1s", "--gnmi_targets=/w/targets.yaml",
                          "--gnmi_profiles=/src/profiles/gnmi", "--topology=/w/topology.yaml",
                          "--log_state_dir=/w/state/switch-agent", "--backoff_initial=100ms",
                          "--backoff_max=1s"));
  EXPECT_THAT(HostAgentArgs(p, "127.0.0.1:4000", "gpu-node-002", true),
              ElementsAre("--server=127.0.0.1:4000", "--hostname=gpu-node-002",
                          "--sysfs_root=/w/sys/gpu-node-002", "--interval=1s",
                          "--ethtool_dumps=/w/sys/gpu-node-002/ethtool", "--link_events=false",
                          "--log_paths=/w/sys/gpu-node-002/nccl/*.log",
                          "--nccl_inspector=/w/sys/gpu-node-002/nccl/inspector/*.log",
                          "--optics_dir=/w/sys/gpu-node-002/optics", "--optics_interval=2s",
                          "--kmsg=/w/sys/gpu-node-002/kmsg",
                          "--lldp_source=file:/w/sys/gpu-node-002/lldpd.json",
                          "--log_state_dir=/w/state/gpu-node-002", "--backoff_initial=100ms",
                          "--backoff_max=1s"));
  EXPECT_THAT(HostAgentArgs(p, "a", "h", false), Contains("--ethtool=false"));
  // --topology_source=discovered: no file for railwatchd or the switch agent.
  EXPECT_THAT(DaemonArgs(p, "/src/rules", "127.0.0.1:0", "127.0.0.1:0", false),
              ElementsAre("--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
                          "--rules=/src/rules", "--ready_file=/w/daemon-ready.json"));
  EXPECT_THAT(SwitchAgentArgs(p, "127.0.0.1:4000", "/src/profiles/gnmi", false),
              Contains("--topology="));
  EXPECT_THAT(BaselineArgs(p, "/src/sim/baseline/baseline.py", 8),
              ElementsAre("/src/sim/baseline/baseline.py", "--root=/w/sys", "--hosts=8",
                          "--work=/w/baseline", "--out=/w/baseline-diagnoses.json",
                          "--ready_file=/w/baseline-ready.json"));
}

// The host's RAS endpoint, from the port the simulator wrote; nothing without one.
TEST(ScenarioFlags, HostRasArgsReadThePortFile) {
  const std::string root = ::testing::TempDir() + "/ras-args-" + std::to_string(::getpid());
  const RunPaths p = RunPathsUnder(root);
  std::filesystem::create_directories(p.root + "/gpu-node-003/nccl");
  EXPECT_THAT(HostRasArgs(p, "gpu-node-003"), ::testing::IsEmpty());
  std::ofstream(p.root + "/gpu-node-003/nccl/ras_port") << "41234\n";
  EXPECT_THAT(HostRasArgs(p, "gpu-node-003"),
              ElementsAre("--nccl_ras=127.0.0.1:41234", "--nccl_ras_interval=2s",
                          "--nccl_ras_timeout=1s", "--nccl_ras_init_grace=0s"));
  std::ofstream(p.root + "/gpu-node-003/nccl/ras_port") << "not a port\n";
  EXPECT_THAT(HostRasArgs(p, "gpu-node-003"), ::testing::IsEmpty());
  std::filesystem::remove_all(root);
}

TEST(RunnerFlags, FormsDefaultsAndMistakes) {
  std::string out = "x";
  bool keep = false, json = true;
  int jobs = 1;
  FlagSet f;
  f.String("out", &out, "work dirs");
  f.Bool("keep", &keep, "keep");
  f.Bool("json", &json, "json");
  f.Int("jobs", &jobs, "jobs");
  EXPECT_THAT(f.Help(), HasSubstr("  --out=x\n      work dirs\n"));
  std::vector<std::string> rest;
  ASSERT_TRUE(
      f.Parse({"a.yaml", "--out", "/o", "-keep", "--nojson", "--jobs=3", "b.yaml", "--", "--c"},
              &rest)
          .ok());
  EXPECT_EQ(out, "/o");
  EXPECT_TRUE(keep);
  EXPECT_FALSE(json);
  EXPECT_EQ(jobs, 3);
  EXPECT_THAT(rest, ElementsAre("a.yaml", "b.yaml", "--c"));

  auto error = [&](std::vector<std::string> args) {
    std::vector<std::string> r;
    absl::Status st = f.Parse(args, &r);
    return std::string(st.message());
  };
  EXPECT_EQ(error({"--jbos=2"}), "unknown flag --jbos (did you mean --jobs?)");
  EXPECT_EQ(error({"--colour"}), "unknown flag --colour");
  EXPECT_EQ(error({"--jobs=many"}), "--jobs=many: want a whole number");
  EXPECT_EQ(error({"--keep=maybe"}), "--keep=maybe: want true or false");
  EXPECT_EQ(error({"--out"}), "--out wants a value");
  std::vector<std::string> r;
  EXPECT_TRUE(absl::IsCancelled(f.Parse({"--help"}, &r)));
}

}  // namespace
}  // namespace railwatch::sim
