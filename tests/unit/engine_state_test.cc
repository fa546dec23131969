// The engine's diagnoses across a restart (engine_state.cc, diagnosis_state.cc): saved on
// every transition, restored by a new engine with the same id and since and without OnFiring,
// held through the restore grace, resolved when the condition is gone, resolved with a note
// when the playbook is gone; a corrupt file is reported, moved aside, and the engine starts
// empty.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "common/text.h"
#include "engine/diagnosis_state.h"
#include "engine/engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "unit/engine_test_util.h"

namespace railwatch {
namespace engine_state_test {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

const char kLinkFlap[] =
    "- playbook: link_flap\n"
    "  desc: link went down\n"
    "  condition: increase(fabric_rdma_link_downed_total[1m]) > 0\n"
    "  severity: critical\n"
    "  culprit: [host, device, port]\n"
    "  summary: \"Link flap on {{host}} {{device}} port {{port}}\"\n"
    "  runbook: https://runbooks.example/link-flap\n";

const char kOther[] =
    "- playbook: other\n"
    "  desc: another playbook\n"
    "  condition: fabric_rdma_link_downed_total > 100\n"
    "  culprit: [host]\n"
    "  runbook: https://runbooks.example/other\n";

// One "process": a store, an engine on the shared state file, a listener. A restart is a new
// Process on the same file and clock, with an empty store, as railwatchd has after a start.
struct Process {
  Process(const std::string& yaml, const std::string& state_file, FakeClock& clock,
          absl::Duration grace = absl::Seconds(30))
      : clock(clock) {
    ref = store.Intern("fabric_rdma_link_downed_total",
                       {{"device", "mlx5_3"}, {"host", "gpu-node-117"}, {"port", "1"}},
                       MetricKind::kCounter);
    Engine::Options o;
    o.threads = 1;
    o.state_file = state_file;
    o.restore_grace = grace;
    engine = std::make_unique<Engine>(o, LoadPlaybooksOrFail(yaml), store, clock);
    engine->AddListener(&listener);
  }
  // One poll a second, the counter at `value`.
  void Poll(uint64_t value) {
    clock.Advance(absl::Seconds(1));
    store.Append(ref, clock.NowNanos(), value);
  }
  // Polls flat counters for `seconds`, evaluating after each.
  void Quiet(int seconds, uint64_t value) {
    for (int i = 0; i < seconds; ++i) {
      Poll(value);
      engine->EvaluateOnce();
    }
  }

  FakeClock& clock;
  SeriesStore store{SeriesStore::Options{.capacity = 600}};
  SeriesRef ref;
  std::unique_ptr<Engine> engine;
  RecordingListener listener;
};

class EngineStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("railwatch-engine-state-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    file_ = (dir_ / "diagnoses.json").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A link flap that fires in a first process; returns the diagnosis it fired.
  v1::Diagnosis FireInFirstProcess() {
    Process first(kLinkFlap, file_, clock_);
    first.Quiet(3, 5);
    first.Poll(6);  // the flap
    first.engine->EvaluateOnce();
    EXPECT_EQ(first.listener.fired.size(), 1u);
    EXPECT_TRUE(fs::exists(file_)) << "a firing diagnosis is saved at once";
    return first.listener.fired.empty() ? v1::Diagnosis() : first.listener.fired[0];
  }

  fs::path dir_;
  std::string file_;
  FakeClock clock_;
};

TEST_F(EngineStateTest, RestartKeepsIdAndSinceAndDoesNotFireAgain) {
  const v1::Diagnosis fired = FireInFirstProcess();
  clock_.Advance(absl::Seconds(3));  // the restart

  Process second(kLinkFlap, file_, clock_);
  const Engine::RestoreResult r = second.engine->Restore();
  EXPECT_EQ(r.firing, 1u);
  EXPECT_EQ(r.error, "");
  // Shown firing at once, as it was.
  std::vector<v1::Diagnosis> list = Diagnoses(*second.engine);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].id(), fired.id());
  EXPECT_EQ(list[0].state(), v1::DIAGNOSIS_STATE_FIRING);
  EXPECT_EQ(list[0].active_since_unix_nano(), fired.active_since_unix_nano());
  EXPECT_EQ(list[0].fired_at_unix_nano(), fired.fired_at_unix_nano());
  EXPECT_EQ(list[0].summary(), fired.summary());
  EXPECT_EQ(list[0].evidence_size(), fired.evidence_size());
  ASSERT_TRUE(DiagnosisById(*second.engine, fired.id()).has_value());
  ASSERT_EQ(second.listener.restored.size(), 1u);
  EXPECT_EQ(second.listener.restored[0].id(), fired.id());

  // The agents are back; the link flaps again while the incident goes on: the same incident.
  second.Quiet(2, 6);
  second.Poll(7);
  second.engine->EvaluateOnce();
  EXPECT_TRUE(second.listener.fired.empty()) << "a restored diagnosis must not page again";
  EXPECT_TRUE(second.listener.resolved.empty());
  list = Diagnoses(*second.engine);
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].id(), fired.id());
  EXPECT_EQ(list[0].active_since_unix_nano(), fired.active_since_unix_nano());
}

TEST_F(EngineStateTest, RestoredDiagnosisIsHeldThroughTheGraceThenResolves) {
  const v1::Diagnosis fired = FireInFirstProcess();
  Process second(kLinkFlap, file_, clock_, absl::Seconds(30));
  second.engine->Restore();
  // No data for a while (agents reconnecting), then flat counters: the condition is gone.
  clock_.Advance(absl::Seconds(10));
  second.engine->EvaluateOnce();
  second.Quiet(18, 6);
  EXPECT_TRUE(second.listener.resolved.empty()) << "resolved within the restore grace";
  ASSERT_EQ(Diagnoses(*second.engine).size(), 1u);
  EXPECT_EQ(Diagnoses(*second.engine)[0].state(), v1::DIAGNOSIS_STATE_FIRING);
  second.Quiet(3, 6);
  ASSERT_EQ(second.listener.resolved.size(), 1u);
  EXPECT_EQ(second.listener.resolved[0].id(), fired.id());
  EXPECT_EQ(second.listener.resolved[0].active_since_unix_nano(), fired.active_since_unix_nano());
  EXPECT_TRUE(second.listener.fired.empty());

  // The resolve was saved: a third start has nothing to restore, but remembers the incident.
  Process third(kLinkFlap, file_, clock_);
  const Engine::RestoreResult r = third.engine->Restore();
  EXPECT_EQ(r.firing, 0u);
  EXPECT_TRUE(Diagnoses(*third.engine).empty());
  third.Quiet(2, 6);
  third.Poll(7);
  third.engine->EvaluateOnce();
  ASSERT_EQ(third.listener.fired.size(), 1u);
  EXPECT_NE(third.listener.fired[0].id(), fired.id()) << "a new incident gets a new id";
  EXPECT_EQ(third.listener.fired[0].previous_incidents(), 1u)
      << "repeat-offender counts survive a restart";
}

TEST_F(EngineStateTest, PendingKeepsItsSinceAndFiresOnTheOriginalSchedule) {
  const std::string yaml = std::string(kLinkFlap) + "  for: 10s\n";
  int64_t since = 0;
  {
    Process first(yaml, file_, clock_);
    first.Quiet(2, 5);
    first.Poll(6);
    first.engine->EvaluateOnce();
    ASSERT_EQ(first.listener.pending.size(), 1u);
    since = first.listener.pending[0].active_since_unix_nano();
    first.Quiet(3, 6);  // the save interval (10 s) has not passed: the pending one was saved
  }                     // at its transition
  Process second(yaml, file_, clock_);
  EXPECT_EQ(second.engine->Restore().pending, 1u);
  second.Quiet(6, 6);
  second.Poll(7);  // flapping on
  second.engine->EvaluateOnce();
  ASSERT_EQ(second.listener.fired.size(), 1u);
  EXPECT_EQ(second.listener.fired[0].active_since_unix_nano(), since);
  EXPECT_EQ(second.listener.fired[0].fired_at_unix_nano(), clock_.NowNanos());
  EXPECT_GE(clock_.NowNanos() - since, absl::ToInt64Nanoseconds(absl::Seconds(10)));
  EXPECT_LT(clock_.NowNanos() - since, absl::ToInt64Nanoseconds(absl::Seconds(14)))
      << "for: counts from the first sight, not from the restart";
}

TEST_F(EngineStateTest, DiagnosisOfARemovedPlaybookIsResolvedWithANote) {
  const v1::Diagnosis fired = FireInFirstProcess();
  Process second(kOther, file_, clock_);
  const Engine::RestoreResult r = second.engine->Restore();
  EXPECT_EQ(r.firing, 0u);
  EXPECT_EQ(r.orphaned, 1u);
  ASSERT_EQ(second.listener.resolved.size(), 1u) << "Alertmanager must get the resolve";
  const v1::Diagnosis& d = second.listener.resolved[0];
  EXPECT_EQ(d.id(), fired.id());
  EXPECT_EQ(d.state(), v1::DIAGNOSIS_STATE_RESOLVED);
  EXPECT_THAT(d.description(), HasSubstr("playbook link_flap is no longer loaded"));
  EXPECT_TRUE(second.listener.restored.empty());
  ASSERT_EQ(Diagnoses(*second.engine).size(), 1u);
  EXPECT_EQ(Diagnoses(*second.engine)[0].state(), v1::DIAGNOSIS_STATE_RESOLVED);
  // Saved without it: the next start does not resolve it a second time.
  second.engine->EvaluateOnce();
  Process third(kOther, file_, clock_);
  EXPECT_EQ(third.engine->Restore().orphaned, 0u);
  EXPECT_TRUE(third.listener.resolved.empty());
}

TEST_F(EngineStateTest, CorruptFileIsReportedMovedAsideAndTheEngineStartsEmpty) {
  {
    std::ofstream out(file_);
    out << "{\"format\": \"railwatchd-diagnoses\",\n \"version\": 1,\n \"diagnoses\": [\n";
  }
  Process p(kLinkFlap, file_, clock_);
  const Engine::RestoreResult r = p.engine->Restore();
  EXPECT_THAT(r.error, HasSubstr(file_));
  EXPECT_THAT(r.error, HasSubstr("line 4"));
  ASSERT_FALSE(r.moved_to.empty());
  EXPECT_TRUE(fs::exists(r.moved_to));
  EXPECT_THAT(r.moved_to, HasSubstr("diagnoses.json.corrupt-"));
  EXPECT_FALSE(fs::exists(file_));
  EXPECT_TRUE(Diagnoses(*p.engine).empty());
  // It goes on, and saves a good file again.
  p.Quiet(2, 5);
  p.Poll(6);
  p.engine->EvaluateOnce();
  ASSERT_EQ(p.listener.fired.size(), 1u);
  absl::StatusOr<EngineState> state = ReadStateFile(file_);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->diagnoses.size(), 1u);
}

TEST_F(EngineStateTest, NoFileIsAFirstStart) {
  Process p(kLinkFlap, file_, clock_);
  const Engine::RestoreResult r = p.engine->Restore();
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(r.firing + r.pending + r.orphaned, 0u);
  EXPECT_FALSE(fs::exists(file_));
}

TEST(DiagnosisStateTest, RoundTripKeepsEverything) {
  EngineState s;
  s.saved_at_unix_nano = 1'700'000'000'000'000'000;
  SavedDiagnosis& d = s.diagnoses.emplace_back();
  d.key = "host=\"h\"";
  d.labels = {{"host", "h"}, {"device", "mlx5_0"}};  // order kept, not sorted
  d.last_true_unix_nano = 42;
  d.diagnosis.set_id("abc");
  d.diagnosis.set_playbook("pfc_storm");
  d.diagnosis.set_state(v1::DIAGNOSIS_STATE_FIRING);
  d.diagnosis.set_active_since_unix_nano(1'699'999'999'000'000'000);
  d.diagnosis.add_evidence()->set_raw("NCCL WARN \xff bad byte");
  d.symptoms.push_back({"ecn", "switch=\"leaf\"", {{"switch", "leaf"}}, 2.5, "s{}", "raw", 1, 2});
  s.incidents.push_back({"pfc_storm", "host=\"h\"", {10, 20}});
  absl::StatusOr<EngineState> back = StateFromJson(StateToJson(s));
  ASSERT_TRUE(back.ok()) << back.status();
  ASSERT_EQ(back->diagnoses.size(), 1u);
  const SavedDiagnosis& b = back->diagnoses[0];
  EXPECT_EQ(b.key, d.key);
  EXPECT_EQ(b.labels, d.labels);
  EXPECT_EQ(b.last_true_unix_nano, 42);
  EXPECT_EQ(b.diagnosis.id(), "abc");
  EXPECT_EQ(b.diagnosis.active_since_unix_nano(), 1'699'999'999'000'000'000);
  ASSERT_EQ(b.symptoms.size(), 1u);
  EXPECT_EQ(b.symptoms[0].key, "switch=\"leaf\"");
  EXPECT_EQ(b.symptoms[0].value, 2.5);
  EXPECT_EQ(b.symptoms[0].last_seen_unix_nano, 2);
  ASSERT_EQ(back->incidents.size(), 1u);
  EXPECT_EQ(back->incidents[0].resolved_unix_nano, (std::vector<int64_t>{10, 20}));
}

TEST(DiagnosisStateTest, ErrorsSayWhatIsWrongAndWhere) {
  auto error = [](const std::string& text) {
    absl::StatusOr<EngineState> s = StateFromJson(text);
    return s.ok() ? std::string("ok") : std::string(s.status().message());
  };
  const std::string head = R"({"format": "railwatchd-diagnoses", "version": 1, )"
                           R"("saved_at_unix_nano": 1, "incidents": [], )";
  EXPECT_THAT(error(""), HasSubstr("parse error at line 1"));
  EXPECT_THAT(error("[]"), HasSubstr("not a JSON object"));
  EXPECT_THAT(error(R"({"format": "x", "version": 1})"), HasSubstr("format is \"x\""));
  EXPECT_THAT(error(R"({"format": "railwatchd-diagnoses", "version": 9})"), HasSubstr("version 9"));
  EXPECT_THAT(error(head + R"("diagnoses": [{"key": 3}]})"),
              HasSubstr("$.diagnoses[0].key: not a string"));
  EXPECT_THAT(error(head + R"("diagnoses": [{"key": "k", "labels": [["a"]], )"
                           R"("last_true_unix_nano": 1, "diagnosis": {}, "symptoms": []}]})"),
              HasSubstr("$.diagnoses[0].labels[0]: not a [name, value] pair"));
  EXPECT_THAT(error(head + R"("diagnoses": [{"key": "k", "labels": [], )"
                           R"("last_true_unix_nano": 1, "diagnosis": {"id": "x"}, )"
                           R"("symptoms": []}]})"),
              HasSubstr("$.diagnoses[0].diagnosis.playbook: missing"));
  EXPECT_THAT(error(head + R"("diagnoses": [{"key": "k", "labels": [], )"
                           R"("last_true_unix_nano": 1, "diagnosis": {"id": []}, )"
                           R"("symptoms": []}]})"),
              HasSubstr("$.diagnoses[0].diagnosis:"));
  EXPECT_EQ(error(head + R"("diagnoses": []})"), "ok");
}

TEST(DiagnosisStateTest, MissingFileIsNotFoundAndUnwritableDirIsAnError) {
  EXPECT_TRUE(absl::IsNotFound(ReadStateFile("/nonexistent/railwatch/diagnoses.json").status()));
  absl::Status s = WriteStateFile("/nonexistent/railwatch/diagnoses.json", EngineState{});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("/nonexistent/railwatch/diagnoses.json.tmp"));
}

}  // namespace engine_state_test
}  // namespace railwatch
