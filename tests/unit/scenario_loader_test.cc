// Scenario files (sim/scenario.h): a full file, the defaults, and each kind of mistake with
// its FILE:LINE:COLUMN.
#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "sim/scenario.h"

namespace railwatch::sim {
namespace scenario_loader_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Problems(absl::string_view yaml) {
  absl::StatusOr<Scenario> s = ParseScenario(yaml, "bad.yaml");
  EXPECT_FALSE(s.ok()) << "loaded: " << yaml;
  return s.ok() ? "" : std::string(s.status().message());
}

constexpr char kFull[] = R"(name: pfc-storm-one-nic
description: One NIC storms.
seed: 7
duration: 1m30s
topology:
  hosts: 8
  nics: 4
  hosts_per_leaf: 4
  spines: 2
  link_gbps: 200
  dialects: [sonic, cumulus]
jobs:
  - {name: train, hosts: 1-6, util: 0.7}
  - {name: eval, hosts: 8}
noise:
  bursty: false
  benign_pause_rate: 5
  driver_reloads:
    - {host: gpu-node-002, device: mlx5_1, at: 30s}
faults:
  - {kind: pfc_storm, at: 20s, host: gpu-node-003, device: mlx5_2, for: 10s}
  - {kind: link_flap_repeated, at: 40s, host: gpu-node-001, device: mlx5_0, count: 4, period: 3s}
  - {kind: ecn_misconfig, at: 50s, switch: leaf-g1-r3, offset_kb: 2}
  - {kind: nccl_error, at: 60s, host: gpu-node-008, error: ib_completion}
expect:
  detected: none
  max_false: 2
  tolerated: [nccl_failure, straggler_rail]
  within_target: true
)";

TEST(ScenarioLoader, ReadsEverySection) {
  absl::StatusOr<Scenario> s = ParseScenario(kFull, "dir/full.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->name, "pfc-storm-one-nic");
  EXPECT_EQ(s->description, "One NIC storms.");
  EXPECT_EQ(s->seed, 7u);
  EXPECT_EQ(s->duration, absl::Seconds(90));
  EXPECT_EQ(s->topology.hosts, 8);
  EXPECT_EQ(s->topology.nics, 4);
  EXPECT_EQ(s->topology.hosts_per_leaf, 4);
  EXPECT_EQ(s->topology.spines, 2);
  EXPECT_EQ(s->topology.link_gbps, 200);
  EXPECT_THAT(s->topology.dialects, ElementsAre("sonic", "cumulus"));
  ASSERT_EQ(s->jobs.size(), 2u);
  EXPECT_EQ(s->jobs[0].name, "train");
  EXPECT_EQ(s->jobs[0].first_host, 1);
  EXPECT_EQ(s->jobs[0].last_host, 6);
  EXPECT_DOUBLE_EQ(s->jobs[0].util, 0.7);
  EXPECT_EQ(s->jobs[1].first_host, 8);
  EXPECT_EQ(s->jobs[1].last_host, 8);
  EXPECT_FALSE(s->noise.bursty);
  EXPECT_EQ(s->noise.benign_pause_rate, 5);
  ASSERT_EQ(s->noise.driver_reloads.size(), 1u);
  EXPECT_EQ(s->noise.driver_reloads[0].at, absl::Seconds(30));
  ASSERT_EQ(s->faults.size(), 4u);
  EXPECT_EQ(s->faults[0].kind, "pfc_storm");
  EXPECT_EQ(s->faults[0].info->playbook, "pfc_storm");
  EXPECT_EQ(s->faults[0].duration, absl::Seconds(10));
  EXPECT_EQ(s->faults[0].line, 21);
  EXPECT_EQ(s->faults[1].count, 4);
  EXPECT_EQ(s->faults[1].period, absl::Seconds(3));
  EXPECT_EQ(s->faults[1].last_at(), absl::Seconds(49));
  EXPECT_EQ(s->faults[2].switch_name, "leaf-g1-r3");
  EXPECT_EQ(s->faults[2].offset_kb, 2);
  EXPECT_EQ(s->faults[3].error, "ib_completion");
  EXPECT_FALSE(s->expect.all_detected);
  EXPECT_EQ(s->expect.max_false, 2);
  EXPECT_THAT(s->expect.tolerated, ElementsAre("nccl_failure", "straggler_rail"));
  EXPECT_TRUE(s->expect.within_target);
  EXPECT_EQ(s->FirstEventAt(), absl::Seconds(20));
}

TEST(ScenarioLoader, DefaultsAndNameFromTheFile) {
  absl::StatusOr<Scenario> s = ParseScenario(
      "duration: 30s\nfaults:\n  - {kind: link_flap, at: 10s, host: gpu-node-001, device: "
      "mlx5_7}\n",
      "sim/scenarios/flap.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->name, "flap");
  EXPECT_EQ(s->seed, 1u);
  EXPECT_EQ(s->topology.hosts, 4);
  EXPECT_EQ(s->topology.nics, 8);
  EXPECT_EQ(s->topology.spines, 0);
  EXPECT_THAT(s->topology.dialects, ElementsAre("sonic", "arista-eos"));
  EXPECT_TRUE(s->noise.bursty);
  EXPECT_EQ(s->noise.benign_pause_rate, 2);
  EXPECT_EQ(s->faults[0].port, 1);
  EXPECT_EQ(s->faults[0].down_for, absl::Milliseconds(300));
  EXPECT_TRUE(s->expect.all_detected);
  EXPECT_EQ(s->expect.max_false, 0);
  EXPECT_TRUE(s->expect.tolerated.empty());
  EXPECT_FALSE(s->expect.within_target);
}

TEST(ScenarioLoader, UnknownKeysSayWhereAndWhatWasMeant) {
  EXPECT_THAT(Problems("durtion: 30s\n"),
              HasSubstr("bad.yaml:1:1: error[unknown-key]: unknown key `durtion` in a scenario (did "
                        "you mean `duration`?)"));
  EXPECT_THAT(Problems("duration: 30s\nfaults:\n"
                       "  - {kind: link_flap, at: 10s, host: gpu-node-001, devcie: mlx5_1}\n"),
              HasSubstr("bad.yaml:3:52: error[unknown-key]: unknown key `devcie` in a link_flap fault "
                        "(did you mean `device`?)"));
  EXPECT_THAT(
      Problems("duration: 30s\ntopology: {hosts: 4, spine: 2}\n"),
      HasSubstr("bad.yaml:2:22: error[unknown-key]: unknown key `spine` in `topology` (did you "
                "mean `spines`?)"));
  EXPECT_THAT(
      Problems("duration: 30s\nfaults:\n  - {kind: pfc_strom, at: 10s}\n"),
      HasSubstr("bad.yaml:3:12: error[unknown-kind]: unknown fault kind `pfc_strom` (did you "
                "mean `pfc_storm`?)"));
  // Nothing close: the known keys, no guess.
  EXPECT_THAT(Problems("duration: 30s\ncolour: red\n"),
              HasSubstr("bad.yaml:2:1: error[unknown-key]: unknown key `colour` in a scenario "
                        "(known: description, duration, expect, faults, jobs, name, noise, seed, "
                        "topology)"));
  // A fault's known keys are its kind's.
  EXPECT_THAT(Problems("duration: 30s\nfaults:\n"
                       "  - {kind: nic_gone, at: 10s, host: gpu-node-001, device: mlx5_1, "
                       "factor: 0.5}\n"),
              HasSubstr("error[unknown-key]: unknown key `factor` in a nic_gone fault (known: at, "
                        "device, host, kind)"));
}

TEST(ScenarioLoader, NamesThatAreNotInTheTopology) {
  const char* head = "duration: 30s\ntopology: {hosts: 8, nics: 4, spines: 1}\nfaults:\n";
  EXPECT_THAT(Problems(std::string(head) +
                       "  - {kind: pfc_storm, at: 5s, host: gpu-node-009, device: mlx5_1}\n"),
              HasSubstr("bad.yaml:4:37: error[not-in-topology]: host `gpu-node-009` is not in the "
                        "topology (did you mean `gpu-node-001`?); it has gpu-node-001, "
                        "gpu-node-002 ... gpu-node-008"));
  EXPECT_THAT(Problems(std::string(head) +
                       "  - {kind: pfc_storm, at: 5s, host: gpu-node-002, device: mlx5_4}\n"),
              HasSubstr("device `mlx5_4` is not in the topology"));
  EXPECT_THAT(Problems(std::string(head) + "  - {kind: ecn_misconfig, at: 5s, switch: leaf-r9}\n"),
              HasSubstr("switch `leaf-r9` is not in the topology"));
  EXPECT_THAT(Problems(std::string(head) + "  - {kind: ecn_misconfig, at: 5s, switch: spine-0}\n"),
              HasSubstr("an ecn_misconfig is on a leaf, not spine-0"));
  // Rail groups name their leaves leaf-g<g>-r<k>.
  EXPECT_THAT(
      Problems("duration: 30s\ntopology: {hosts: 8, nics: 4, hosts_per_leaf: 4}\nfaults:\n"
               "  - {kind: ecn_misconfig, at: 5s, switch: leaf-r1}\n"),
      HasSubstr(
          "switch `leaf-r1` is not in the topology; it has leaf-g0-r0, leaf-g0-r1 ... leaf-g1-r3"));
  EXPECT_THAT(Problems("duration: 30s\nnoise:\n  driver_reloads:\n"
                       "    - {host: gpu-node-004, device: mlx5_9, at: 5s}\n"),
              HasSubstr("bad.yaml:4:36: error[not-in-topology]: device `mlx5_9` is not in the topology"));
}

TEST(ScenarioLoader, TimesWithinTheDuration) {
  EXPECT_THAT(Problems("duration: 30s\nfaults:\n"
                       "  - {kind: link_flap, at: 30s, host: gpu-node-001, device: mlx5_1}\n"),
              HasSubstr("bad.yaml:3:27: error[after-end]: at 30s it is after the scenario's end "
                        "(duration 30s)"));
  EXPECT_THAT(Problems("duration: 30s\nfaults:\n"
                       "  - {kind: link_flap_repeated, at: 20s, host: gpu-node-001, device: mlx5_1,"
                       " count: 5, period: 3s}\n"),
              HasSubstr("at 32s it is after the scenario's end"));
  EXPECT_THAT(Problems("duration: 0s\n"), HasSubstr("`duration` must be above 0"));
  EXPECT_THAT(Problems("seed: 2\n"), HasSubstr("bad.yaml:1:1: error[missing-key]: a scenario: `duration` is required"));
  EXPECT_THAT(Problems("duration: 20 seconds\n"),
              HasSubstr("bad.yaml:1:11: error[bad-value]: `duration`: bad duration"));
}

TEST(ScenarioLoader, FieldsAndValues) {
  const char* head = "duration: 30s\njobs: [{name: train, hosts: 1-4}]\nfaults:\n";
  EXPECT_THAT(Problems(std::string(head) + "  - {kind: pfc_storm, at: 5s, host: gpu-node-001}\n"),
              HasSubstr("bad.yaml:4:5: error[missing-key]: a pfc_storm fault: `device` is required"));
  EXPECT_THAT(
      Problems(std::string(head) +
               "  - {kind: straggler, at: 5s, host: gpu-node-001, device: mlx5_0, factor: 2}\n"),
      HasSubstr("`factor` must be a number in (0, 1], not \"2\""));
  EXPECT_THAT(Problems(std::string(head) + "  - {kind: nccl_error, at: 5s, host: gpu-node-001, "
                                           "error: segfault}\n"),
              HasSubstr("`error` must be timeout or ib_completion"));
  EXPECT_THAT(Problems("duration: 30s\ntopology: {hosts: 4}\nfaults:\n"
                       "  - {kind: nccl_error, at: 5s, host: gpu-node-002}\n"),
              HasSubstr("no job runs on gpu-node-002: NCCL errors come from a job's ranks"));
  EXPECT_THAT(Problems("duration: 30s\ntopology: {hosts: four}\n"),
              HasSubstr("`hosts` must be a whole number from 1 to 4096, not \"four\""));
  EXPECT_THAT(Problems("duration: 30s\ntopology: {dialects: [sonic, junos]}\n"),
              HasSubstr("unknown dialect \"junos\""));
  EXPECT_THAT(Problems("duration: 30s\nexpect: {detected: most}\n"),
              HasSubstr("`detected` must be all or none"));
  EXPECT_THAT(Problems("duration: 30s\nfaults: {kind: link_flap}\n"),
              HasSubstr("`faults` must be a list"));
}

TEST(ScenarioLoader, Jobs) {
  EXPECT_THAT(Problems("duration: 30s\ntopology: {hosts: 4}\njobs: [{name: a, hosts: 1-5}]\n"),
              HasSubstr("`hosts: 1-5` must be FIRST-LAST within 1-4"));
  EXPECT_THAT(Problems("duration: 30s\njobs: [{name: a, hosts: 1-3}, {name: b, hosts: 3-4}]\n"),
              HasSubstr("gpu-node-003 is already in job `a`"));
  EXPECT_THAT(Problems("duration: 30s\njobs: [{name: a, hosts: 1}, {name: a, hosts: 2}]\n"),
              HasSubstr("two jobs are called `a`"));
}

TEST(ScenarioLoader, EveryProblemAtOnceAndSyntaxErrors) {
  const std::string all = Problems("durtion: 30s\ntopology: {hosts: 0}\n");
  EXPECT_THAT(all, HasSubstr("bad.yaml:1:1: error[unknown-key]: unknown key `durtion`"));
  EXPECT_THAT(all, HasSubstr("bad.yaml:2:19: error[bad-value]: `hosts` must be a whole number from 1"));
  EXPECT_THAT(all, HasSubstr("`duration` is required"));
  EXPECT_THAT(Problems("duration: 30s\nfaults: [{kind: link_flap\n"), HasSubstr("bad.yaml:3:1: error[yaml-syntax]: "));
  EXPECT_THAT(Problems(""), HasSubstr("bad.yaml: error[bad-type]: a scenario is a map"));
  EXPECT_THAT(Problems("- a\n- b\n"), HasSubstr("bad.yaml:1:1: error[bad-type]: a scenario is a map"));
  absl::StatusOr<Scenario> missing = LoadScenarioFile("/nonexistent/x.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("/nonexistent/x.yaml"));
}

// The suite's scenarios (sim/scenarios, the large ones in sim/scenarios/large, the ones played
// under load in sim/scenarios/load) and the runner's fixture all load; the suite has at least 30.
TEST(ScenarioLoader, ShippedScenariosLoad) {
  int loaded = 0;
  for (const char* dir :
       {RAILWATCH_SOURCE_DIR "/sim/scenarios", RAILWATCH_SOURCE_DIR "/sim/scenarios/large",
        RAILWATCH_SOURCE_DIR "/sim/scenarios/load", RAILWATCH_SOURCE_DIR "/tests/fixtures/scenarios"}) {
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() != ".yaml") continue;
      absl::StatusOr<Scenario> s = LoadScenarioFile(entry.path().string());
      EXPECT_TRUE(s.ok()) << s.status();
      ++loaded;
    }
  }
  EXPECT_GE(loaded, 35);
}

TEST(ScenarioNames, ClosestWordOnlyForTypos) {
  EXPECT_EQ(ClosestWord("jbos", {"jobs", "json", "keep"}), "jobs");
  EXPECT_EQ(ClosestWord("colour", {"name", "seed"}), "");
  EXPECT_EQ(ClosestWord("x", {"y"}), "y");
  EXPECT_EQ(ClosestWord("ab", {"xyz"}), "");
}

}  // namespace
}  // namespace railwatch::sim
