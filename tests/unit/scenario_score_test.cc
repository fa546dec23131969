// Scoring (sim/score.h) on hand-written ground truth and diagnoses: detection, delay, culprit,
// false diagnoses and what does not count as one, the table and the JSON.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "sim/score.h"

namespace railwatch::sim {
namespace scenario_score_test {

using ::testing::HasSubstr;

constexpr int64_t kStart = 1'700'000'000'000'000'000;  // the simulator's start
constexpr int64_t kSecond = 1'000'000'000;

Scenario Load(const std::string& yaml) {
  absl::StatusOr<Scenario> s = ParseScenario(yaml, "test.yaml");
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : Scenario{};
}

std::vector<TruthRecord> Truth(const std::string& lines) {
  absl::StatusOr<std::vector<TruthRecord>> t = ParseGroundTruth(lines, "truth.jsonl");
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : std::vector<TruthRecord>{};
}

std::string At(double seconds) {
  return std::to_string(kStart + static_cast<int64_t>(seconds * kSecond));
}

struct D {
  D(std::string id, std::string playbook, double fired_s,
    std::vector<std::pair<std::string, std::string>> culprit, std::string explained_by = "")
      : id(std::move(id)),
        playbook(std::move(playbook)),
        fired_s(fired_s),
        culprit(std::move(culprit)),
        explained_by(std::move(explained_by)) {}
  std::string id, playbook;
  double fired_s;  // 0: never fired (pending)
  std::vector<std::pair<std::string, std::string>> culprit;
  std::string explained_by;
};

v1::ListDiagnosesResponse Diagnoses(const std::vector<D>& list) {
  v1::ListDiagnosesResponse r;
  for (const D& d : list) {
    v1::Diagnosis* x = r.add_diagnoses();
    x->set_id(d.id);
    x->set_playbook(d.playbook);
    x->set_summary(d.playbook + " summary");
    if (d.fired_s > 0)
      x->set_fired_at_unix_nano(kStart + static_cast<int64_t>(d.fired_s * kSecond));
    for (const auto& [k, v] : d.culprit) {
      v1::Label* l = x->add_culprit();
      l->set_name(k);
      l->set_value(v);
    }
    x->set_explained_by(d.explained_by);
  }
  return r;
}

ScenarioScore Score(const Scenario& s, const std::string& truth, const std::vector<D>& diagnoses) {
  ScoreInput in;
  in.scenario = &s;
  in.truth = Truth(truth);
  in.diagnoses = Diagnoses(diagnoses);
  return ScoreScenario(in);
}

const char kStorm[] = R"(name: storm
duration: 60s
topology: {hosts: 8, nics: 4}
faults:
  - {kind: pfc_storm, at: 20s, host: gpu-node-003, device: mlx5_2}
)";
std::string StormTruth() {
  return R"({"fault": "pfc_storm", "host": "gpu-node-003", "device": "mlx5_2", "switch": "leaf-r2", "port": "Ethernet8", "priority": 3, "injected_at_unix_nano": )" +
         At(20.1) + ", \"duration_ms\": 0}\n";
}
const std::vector<std::pair<std::string, std::string>> kStormCulprit = {
    {"host", "gpu-node-003"}, {"device", "mlx5_2"}, {"switch", "leaf-r2"}};

TEST(ScenarioScore, DetectedWithTheRightCulpritAndItsDelay) {
  ScenarioScore s = Score(Load(kStorm), StormTruth(), {{"a1", "pfc_storm", 21.9, kStormCulprit}});
  ASSERT_EQ(s.faults.size(), 1u);
  const FaultScore& f = s.faults[0];
  EXPECT_TRUE(f.injected);
  EXPECT_TRUE(f.detected);
  EXPECT_TRUE(f.right_culprit);
  EXPECT_EQ(f.delay_ms, 1800);
  EXPECT_EQ(f.target_ms, 2000);
  EXPECT_EQ(f.within_target(), true);
  EXPECT_EQ(f.diagnosis_id, "a1");
  EXPECT_TRUE(s.false_diagnoses.empty());
  EXPECT_TRUE(s.passed) << ::testing::PrintToString(s.problems);
  // The simulator's start, for offsets: the injection minus the fault's `at`.
  EXPECT_EQ(s.sim_start_unix_nano, kStart + kSecond / 10);
}

TEST(ScenarioScore, TheRightCulpritWinsOverAnEarlierWrongOne) {
  ScenarioScore s =
      Score(Load(kStorm), StormTruth(),
            {{"wrong", "pfc_storm", 20.5, {{"host", "gpu-node-004"}, {"device", "mlx5_2"}}},
             {"right", "pfc_storm", 23.1, kStormCulprit}});
  EXPECT_EQ(s.faults[0].diagnosis_id, "right");
  EXPECT_TRUE(s.faults[0].right_culprit);
  EXPECT_EQ(s.faults[0].delay_ms, 3000);
  EXPECT_EQ(s.faults[0].within_target(), false);
  // The wrong one pages about something that is not a fault.
  ASSERT_EQ(s.false_diagnoses.size(), 1u);
  EXPECT_EQ(s.false_diagnoses[0].id, "wrong");
  EXPECT_EQ(s.false_diagnoses[0].why, "matches no fault");
  EXPECT_FALSE(s.passed);
}

TEST(ScenarioScore, WrongCulpritMissedAndNeverInjected) {
  const Scenario sc = Load(kStorm);
  ScenarioScore wrong =
      Score(sc, StormTruth(), {{"x", "pfc_storm", 22, {{"host", "gpu-node-004"}}}});
  EXPECT_TRUE(wrong.faults[0].detected);
  EXPECT_FALSE(wrong.faults[0].right_culprit);
  EXPECT_EQ(wrong.faults[0].diagnosis_culprit, "host=gpu-node-004");
  EXPECT_THAT(wrong.problems,
              testing::Contains(HasSubstr("named the wrong culprit (host=gpu-node-004)")));

  // Another playbook, or a pfc_storm that fired before the injection, does not detect it.
  ScenarioScore missed =
      Score(sc, StormTruth(),
            {{"y", "pfc_storm", 19, kStormCulprit}, {"z", "link_flap", 25, kStormCulprit}});
  EXPECT_FALSE(missed.faults[0].detected);
  EXPECT_THAT(
      missed.problems,
      testing::Contains("pfc_storm gpu-node-003/mlx5_2 at 20s: not detected (no pfc_storm fired)"));
  ASSERT_EQ(missed.false_diagnoses.size(), 2u);
  EXPECT_EQ(missed.false_diagnoses[0].why, "before the first fault");
  EXPECT_EQ(missed.false_diagnoses[1].why, "matches no fault");

  ScenarioScore none = Score(sc, "", {});
  EXPECT_FALSE(none.faults[0].injected);
  EXPECT_THAT(none.problems, testing::Contains(HasSubstr("not in the ground truth")));
  EXPECT_FALSE(none.passed);
}

TEST(ScenarioScore, WhatPagesAndWhatDoesNot) {
  const Scenario sc = Load(std::string(kStorm) +
                           "  - {kind: nic_gone, at: 30s, host: gpu-node-005, device: mlx5_1}\n"
                           "jobs: [{name: train, hosts: 1-8}]\n"
                           "expect: {tolerated: [pfc_pause_relay]}\n");
  const std::string truth =
      StormTruth() +
      R"({"fault": "nic_gone", "host": "gpu-node-005", "device": "mlx5_1", "injected_at_unix_nano": )" +
      At(30) + "}\n" +
      R"({"fault": "nccl_error", "host": "gpu-node-006", "job": "train", "error": "timeout", "caused_by": "nic_gone", "cause_host": "gpu-node-005", "cause_device": "mlx5_1", "injected_at_unix_nano": )" +
      At(33) + "}\n" +
      R"({"noise": "driver_reload", "host": "gpu-node-001", "device": "mlx5_0", "at_unix_nano": )" +
      At(5) + "}\n";
  ScenarioScore s =
      Score(sc, truth,
            {{"storm", "pfc_storm", 21, kStormCulprit},
             {"relay", "pfc_pause_relay", 21, {{"switch", "leaf-r2"}}},      // tolerated
             {"folded", "pfc_storm", 22, {{"switch", "spine-0"}}, "storm"},  // explained_by
             {"pending", "straggler_rail", 0, {{"host", "gpu-node-002"}}},   // never fired
             {"gone", "nic_gone", 31, {{"host", "gpu-node-005"}, {"device", "mlx5_1"}}},
             {"symptom", "nccl_failure", 35, {{"host", "gpu-node-006"}}},   // caused_by
             {"at_cause", "nccl_failure", 36, {{"host", "gpu-node-005"}}},  // names the cause
             {"other", "nccl_failure", 35, {{"host", "gpu-node-007"}}}});
  ASSERT_EQ(s.faults.size(), 2u);
  EXPECT_TRUE(s.faults[1].detected);
  EXPECT_EQ(s.faults[1].delay_ms, 1000);
  ASSERT_EQ(s.false_diagnoses.size(), 1u);
  EXPECT_EQ(s.false_diagnoses[0].id, "other");
  // 1 false in 8 hosts x 60 s.
  EXPECT_DOUBLE_EQ(s.false_per_host_hour, 1 / (8 * 60 / 3600.0));
  EXPECT_THAT(s.problems, testing::ElementsAre("1 false diagnoses (at most 0)"));
}

TEST(ScenarioScore, HealthyFabricEverythingThatFiresIsFalse) {
  const Scenario sc = Load("duration: 30s\nexpect: {max_false: 1}\n");
  ScenarioScore one = Score(sc, "", {{"a", "straggler_rail", 12, {{"host", "gpu-node-001"}}}});
  ASSERT_EQ(one.false_diagnoses.size(), 1u);
  EXPECT_EQ(one.false_diagnoses[0].why, "no fault was injected");
  EXPECT_TRUE(one.passed);  // max_false: 1
  ScenarioScore two = Score(sc, "", {{"a", "straggler_rail", 12, {}}, {"b", "link_flap", 13, {}}});
  EXPECT_FALSE(two.passed);
}

TEST(ScenarioScore, RepeatedFlapsAreOneFaultAndSeparateFlapsTwo) {
  const Scenario sc = Load(R"(duration: 60s
faults:
  - {kind: link_flap_repeated, at: 10s, host: gpu-node-002, device: mlx5_1, count: 3, period: 4s}
  - {kind: link_flap, at: 40s, host: gpu-node-002, device: mlx5_1}
)");
  std::string truth;
  for (int i = 0; i < 3; ++i) {
    truth +=
        R"({"fault": "link_flap", "host": "gpu-node-002", "device": "mlx5_1", "port": "1", "repeat": )" +
        std::to_string(i) + R"(, "of": 3, "down_for_ms": 300, "injected_at_unix_nano": )" +
        At(10 + 4 * i) + "}\n";
  }
  truth +=
      R"({"fault": "link_flap", "host": "gpu-node-002", "device": "mlx5_1", "port": "1", "down_for_ms": 300, "injected_at_unix_nano": )" +
      At(40) + "}\n";
  const std::vector<std::pair<std::string, std::string>> link = {{"host", "gpu-node-002"},
                                                                 {"device", "mlx5_1"}};
  ScenarioScore s =
      Score(sc, truth, {{"first", "link_flap", 10.5, link}, {"again", "link_flap", 40.7, link}});
  ASSERT_EQ(s.faults.size(), 2u);
  EXPECT_EQ(s.faults[0].injected_at_unix_nano, kStart + 10 * kSecond);
  EXPECT_EQ(s.faults[0].diagnosis_id, "first");
  EXPECT_EQ(s.faults[0].delay_ms, 500);
  EXPECT_EQ(s.faults[1].diagnosis_id, "again");
  EXPECT_EQ(s.faults[1].delay_ms, 700);
  EXPECT_TRUE(s.false_diagnoses.empty());
  EXPECT_TRUE(s.passed) << ::testing::PrintToString(s.problems);
}

TEST(ScenarioScore, ALinkLabelNamesBothEndsOfTheCable) {
  const Scenario sc = Load(
      "duration: 60s\nfaults:\n  - {kind: link_flap, at: 15s, host: gpu-node-002, device: "
      "mlx5_1}\n");
  const std::string truth =
      R"({"fault": "link_flap", "host": "gpu-node-002", "device": "mlx5_1", "port": "1", "down_for_ms": 300, "injected_at_unix_nano": )" +
      At(15) + "}\n";
  // Seen first from the switch's end: switch, interface and the cable.
  ScenarioScore s = Score(sc, truth,
                          {{"sw",
                            "link_flap",
                            15.5,
                            {{"interface", "Ethernet2"},
                             {"link", "gpu-node-002/mlx5_1 <-> leaf-r1/Ethernet2"},
                             {"switch", "leaf-r1"}}}});
  EXPECT_TRUE(s.faults[0].right_culprit);
  EXPECT_TRUE(s.false_diagnoses.empty());
  // Another cable is another culprit.
  ScenarioScore other =
      Score(sc, truth,
            {{"sw", "link_flap", 15.5, {{"link", "gpu-node-002/mlx5_0 <-> leaf-r0/Ethernet2"}}}});
  EXPECT_FALSE(other.faults[0].right_culprit);
}

TEST(ScenarioScore, DeadlockCulpritIsTheLeafPortFromTheGroundTruth) {
  const Scenario sc = Load(
      "duration: 60s\nfaults:\n  - {kind: pfc_deadlock, at: 15s, host: gpu-node-004, device: "
      "mlx5_1}\n");
  const std::string truth =
      R"({"fault": "pfc_deadlock", "host": "gpu-node-004", "device": "mlx5_1", "switch": "leaf-r1", "interface": "Ethernet12", "queue": 3, "duration_ms": 0, "injected_at_unix_nano": )" +
      At(15) + "}\n";
  ScenarioScore s = Score(sc, truth,
                          {{"d",
                            "pfc_deadlock",
                            25,
                            {{"switch", "leaf-r1"}, {"interface", "Ethernet12"}, {"queue", "3"}}}});
  EXPECT_TRUE(s.faults[0].right_culprit);
  EXPECT_EQ(s.faults[0].culprit, (std::vector<std::pair<std::string, std::string>>{
                                     {"switch", "leaf-r1"}, {"interface", "Ethernet12"}}));
  EXPECT_FALSE(s.faults[0].target_ms.has_value());
  EXPECT_FALSE(s.faults[0].within_target().has_value());
}

TEST(ScenarioScore, ExpectDetectedNoneAndWithinTarget) {
  ScenarioScore none =
      Score(Load(std::string(kStorm) + "expect: {detected: none}\n"), StormTruth(), {});
  EXPECT_TRUE(none.passed);
  ScenarioScore late = Score(Load(std::string(kStorm) + "expect: {within_target: true}\n"),
                             StormTruth(), {{"a", "pfc_storm", 25, kStormCulprit}});
  EXPECT_THAT(late.problems,
              testing::ElementsAre(HasSubstr("detected in 4900 ms, target 2000 ms")));
}

TEST(ScenarioScore, InputErrorsNameTheFileAndLine) {
  absl::StatusOr<std::vector<TruthRecord>> t =
      ParseGroundTruth("{\"fault\": \"x\", \"injected_at_unix_nano\": 1}\nnot json\n", "t.jsonl");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(std::string(t.status().message()), HasSubstr("t.jsonl:2: not a JSON object"));
  t = ParseGroundTruth("{\"fault\": \"x\"}\n", "t.jsonl");
  EXPECT_THAT(std::string(t.status().message()),
              HasSubstr("t.jsonl:1: no \"injected_at_unix_nano\""));
  EXPECT_FALSE(ParseDiagnosesJson("{\"diagnoses\": 3}", "d.json").ok());
  // The CLI's shape: int64 as strings, enums by name; fields it does not know are fine.
  absl::StatusOr<v1::ListDiagnosesResponse> d = ParseDiagnosesJson(
      R"({"diagnoses": [{"id": "a", "playbook": "link_flap", "state": "DIAGNOSIS_STATE_FIRING",
          "fired_at_unix_nano": "1700000000000000000", "culprit": [{"name": "host", "value": "h"}],
          "new_field": 1}]})",
      "d.json");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->diagnoses(0).fired_at_unix_nano(), 1700000000000000000);
  EXPECT_EQ(d->diagnoses(0).state(), v1::DIAGNOSIS_STATE_FIRING);
}

TEST(ScenarioScore, TableOneRowPerFaultAndSystemsSideBySide) {
  const Scenario sc = Load(kStorm);
  ScenarioScore railwatch = Score(sc, StormTruth(), {{"a1", "pfc_storm", 21.9, kStormCulprit}});
  ScoreInput in;
  in.scenario = &sc;
  in.truth = Truth(StormTruth());
  in.diagnoses = Diagnoses({{"b", "straggler_rail", 10, {{"host", "gpu-node-001"}}}});
  in.system = "baseline";
  ScenarioScore baseline = ScoreScenario(in);
  const std::string table = ScoreTable({railwatch, baseline});
  EXPECT_THAT(table, HasSubstr("== storm: 8 hosts, 60 s\n"));
  EXPECT_THAT(
      table,
      HasSubstr("FAULT      AT   CULPRIT              PLAYBOOK   TARGET  RAILWATCH  BASELINE\n"));
  EXPECT_THAT(
      table,
      HasSubstr("pfc_storm  20s  gpu-node-003 mlx5_2  pfc_storm  2.00 s  1.80 s     missed\n"));
  EXPECT_THAT(table, HasSubstr("railwatch: PASSED, 0 false diagnoses (0.00 per host-hour)\n"));
  EXPECT_THAT(
      table,
      HasSubstr("baseline: FAILED, 1 false diagnoses (7.50 per host-hour)\n"
                "  false: straggler_rail host=gpu-node-001 at +9.9s (before the first fault)\n"));
  EXPECT_THAT(table,
              HasSubstr("railwatch: 1/1 scenarios passed; 1/1 faults detected, 1 with the right "
                        "culprit, 1/1 within target; 0 false diagnoses in 0.13 host-hours"));
  EXPECT_THAT(table, HasSubstr("baseline: 0/1 scenarios passed; 0/1 faults detected"));
}

TEST(ScenarioScore, JsonHasTheFieldsOfTheSpec) {
  const Scenario sc = Load(kStorm);
  ScenarioScore s = Score(sc, StormTruth(), {{"a1", "pfc_storm", 21.9, kStormCulprit}});
  const nlohmann::json j = nlohmann::json::parse(ScoreJson({s}));
  const nlohmann::json& one = j["scenarios"][0];
  EXPECT_EQ(one["name"], "storm");
  EXPECT_EQ(one["system"], "railwatch");
  EXPECT_EQ(one["hosts"], 8);
  EXPECT_EQ(one["duration_s"], 60);
  EXPECT_EQ(one["passed"], true);
  const nlohmann::json& f = one["faults"][0];
  EXPECT_EQ(f["kind"], "pfc_storm");
  EXPECT_EQ(f["culprit"], (nlohmann::json{{"host", "gpu-node-003"}, {"device", "mlx5_2"}}));
  EXPECT_EQ(f["injected_at_unix_nano"], kStart + 201 * kSecond / 10);
  EXPECT_EQ(f["detected"], true);
  EXPECT_EQ(f["playbook"], "pfc_storm");
  EXPECT_EQ(f["delay_ms"], 1800);
  EXPECT_EQ(f["target_ms"], 2000);
  EXPECT_EQ(f["within_target"], true);
  EXPECT_EQ(f["right_culprit"], true);
  EXPECT_EQ(f["diagnosis_id"], "a1");
  EXPECT_TRUE(one["false_diagnoses"].empty());
  EXPECT_EQ(one["false_per_host_hour"], 0.0);
  EXPECT_TRUE(one["problems"].empty());
  const nlohmann::json& sum = j["summary"];
  EXPECT_EQ(sum["faults"], 1);
  EXPECT_EQ(sum["detected"], 1);
  EXPECT_EQ(sum["right_culprit"], 1);
  EXPECT_EQ(sum["false_diagnoses"], 0);
  EXPECT_NEAR(sum["host_hours"].get<double>(), 8 * 60 / 3600.0, 1e-9);
  EXPECT_EQ(sum["within_target"], 1);
  EXPECT_EQ(sum["with_target"], 1);
}

}  // namespace
}  // namespace railwatch::sim
