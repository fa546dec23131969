#include "engine/engine.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "unit/engine_test_util.h"

namespace railwatch {
namespace engine_test {

const char kLinkFlap[] =
    "- playbook: link_flap\n"
    "  desc: link went down\n"
    "  condition: increase(fabric_rdma_link_downed_total[5m]) > 0\n"
    "  severity: critical\n"
    "  culprit: [host, device, port]\n"
    "  summary: \"Link flap on {{host}} {{device}} port {{port}} ({{value}}x)\"\n"
    "  runbook: https://runbooks.example/link-flap\n";

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int d = 0; d < 4; ++d) {
      refs_.push_back(store_.Intern(
          "fabric_rdma_link_downed_total",
          {{"device", "mlx5_" + std::to_string(d)}, {"host", "gpu-node-117"}, {"port", "1"}},
          MetricKind::kCounter));
    }
  }
  // One poll: every port's counter, with `bump` added to port 3.
  void Poll(uint64_t port3_value) {
    clock_.Advance(absl::Seconds(1));
    for (size_t i = 0; i < refs_.size(); ++i) {
      store_.Append(refs_[i], clock_.NowNanos(), i == 3 ? port3_value : 0);
    }
  }

  FakeClock clock_;
  SeriesStore store_{SeriesStore::Options{.capacity = 600}};
  std::vector<SeriesRef> refs_;
};

TEST_F(EngineTest, LinkFlapFiresWithCulpritEvidenceAndResolves) {
  Engine engine({}, LoadPlaybooksOrFail(kLinkFlap), store_, clock_);
  RecordingListener listener;
  engine.AddListener(&listener);

  for (int i = 0; i < 5; ++i) Poll(2);
  engine.EvaluateOnce();
  EXPECT_TRUE(Diagnoses(engine).empty()) << "a counter that did not move must not fire";

  Poll(3);  // the flap
  const int64_t flap_time = clock_.NowNanos();
  engine.EvaluateOnce();
  ASSERT_EQ(listener.fired.size(), 1u);
  const v1::Diagnosis& d = listener.fired[0];
  EXPECT_EQ(d.playbook(), "link_flap");
  EXPECT_EQ(d.state(), v1::DIAGNOSIS_STATE_FIRING);
  EXPECT_EQ(d.severity(), v1::SEVERITY_CRITICAL);
  EXPECT_EQ(d.summary(), "Link flap on gpu-node-117 mlx5_3 port 1 (1x)");
  ASSERT_EQ(d.culprit_size(), 3);
  EXPECT_EQ(d.culprit(0).name(), "device");
  EXPECT_EQ(d.culprit(0).value(), "mlx5_3");
  EXPECT_EQ(d.culprit(1).value(), "gpu-node-117");
  EXPECT_EQ(d.runbook(), "https://runbooks.example/link-flap");
  ASSERT_EQ(d.evidence_size(), 1);
  const v1::Evidence& e = d.evidence(0);
  EXPECT_EQ(e.series(),
            "fabric_rdma_link_downed_total{device=\"mlx5_3\",host=\"gpu-node-117\",port=\"1\"}");
  EXPECT_EQ(e.summary(), "increase over 5m = 1");
  // The evidence keeps the readings where the value changed: first, the flap, and last.
  ASSERT_GE(e.points_size(), 2);
  EXPECT_EQ(e.points(0).value(), 2);
  bool saw_flap = false;
  for (const auto& p : e.points()) saw_flap |= p.value() == 3 && p.time_unix_nano() == flap_time;
  EXPECT_TRUE(saw_flap);
  EXPECT_EQ(DiagnosisById(engine, d.id())->id(), d.id());

  // Still within the window: stays one incident, not a second page.
  for (int i = 0; i < 60; ++i) Poll(3);
  engine.EvaluateOnce();
  EXPECT_EQ(listener.fired.size(), 1u);
  ASSERT_EQ(Diagnoses(engine).size(), 1u);
  EXPECT_EQ(Diagnoses(engine)[0].id(), d.id());

  // Five quiet minutes later the flap leaves the window and the diagnosis resolves.
  for (int i = 0; i < 300; ++i) Poll(3);
  engine.EvaluateOnce();
  ASSERT_EQ(listener.resolved.size(), 1u);
  EXPECT_EQ(listener.resolved[0].id(), d.id());
  EXPECT_EQ(listener.resolved[0].state(), v1::DIAGNOSIS_STATE_RESOLVED);
  std::vector<v1::Diagnosis> all = Diagnoses(engine);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].state(), v1::DIAGNOSIS_STATE_RESOLVED);
}

TEST_F(EngineTest, CounterResetDoesNotFire) {
  Engine engine({}, LoadPlaybooksOrFail(kLinkFlap), store_, clock_);
  for (int i = 0; i < 5; ++i) Poll(7);
  Poll(0);  // driver reload: the counter restarts at zero
  Poll(0);
  engine.EvaluateOnce();
  EXPECT_TRUE(Diagnoses(engine).empty());
}

TEST_F(EngineTest, ForHoldsPendingThenFires) {
  const std::string yaml = std::string(kLinkFlap) + "  for: 10s\n";
  Engine engine({}, LoadPlaybooksOrFail(yaml), store_, clock_);
  RecordingListener listener;
  engine.AddListener(&listener);
  Poll(0);
  Poll(1);
  engine.EvaluateOnce();
  ASSERT_EQ(Diagnoses(engine).size(), 1u);
  EXPECT_EQ(Diagnoses(engine)[0].state(), v1::DIAGNOSIS_STATE_PENDING);
  EXPECT_TRUE(listener.fired.empty());
  for (int i = 0; i < 10; ++i) Poll(1);
  engine.EvaluateOnce();
  ASSERT_EQ(listener.fired.size(), 1u);
  EXPECT_EQ(Diagnoses(engine)[0].state(), v1::DIAGNOSIS_STATE_FIRING);
}

// A window longer than the store's capacity at the series' interval: the engine tells the store
// how far back each name must reach (KeepSpans), so 125 minutes of 10 s samples (750, past the
// 600 of capacity) are all there. Without it, the first error would have been dropped at 100
// minutes and the count would read 3.
TEST_F(EngineTest, TheStoreKeepsWhatTheLongestWindowReads) {
  const std::string yaml = std::string(kLinkFlap).replace(
      std::string(kLinkFlap).find("increase(fabric_rdma_link_downed_total[5m]) > 0"),
      std::string("increase(fabric_rdma_link_downed_total[5m]) > 0").size(),
      "increase(fabric_rdma_link_downed_total[125m]) >= 4");
  Engine engine({}, LoadPlaybooksOrFail(yaml), store_, clock_);
  // One link-down at 1, 40, 80 and 120 minutes, samples every 10 s.
  uint64_t downs = 0;
  for (int i = 1; i <= 740; ++i) {
    clock_.Advance(absl::Seconds(10));
    if (i == 6 || i == 240 || i == 480 || i == 720) ++downs;
    store_.Append(refs_[3], clock_.NowNanos(), static_cast<double>(downs));
  }
  engine.EvaluateOnce();
  ASSERT_EQ(Diagnoses(engine).size(), 1u);
  EXPECT_EQ(store_.Range(refs_[3], 0, clock_.NowNanos()).size(), 740u);
}

TEST_F(EngineTest, DisabledPlaybookNeverFires) {
  const std::string yaml = std::string(kLinkFlap) + "  enabled: false\n";
  Engine engine({}, LoadPlaybooksOrFail(yaml), store_, clock_);
  Poll(0);
  Poll(1);
  engine.EvaluateOnce();
  EXPECT_TRUE(Diagnoses(engine).empty());
}

TEST(ExpandTemplate, FillsLabelsAndValue) {
  Labels l = {{"host", "h"}, {"port", "1"}};
  EXPECT_EQ(ExpandTemplate("{{host}}:{{ port }} x{{value}} {{rail}}", l, 2.5), "h:1 x2.5 <rail?>");
}

TEST(FormatTemplateNumber, ThreeSignificantDigitsAndTinyValuesInScientificNotation) {
  EXPECT_EQ(FormatTemplateNumber(0.474, ""), "0.474");
  EXPECT_EQ(FormatTemplateNumber(6240, ""), "6,240");
  EXPECT_EQ(FormatTemplateNumber(0.0012, ""), "0.0012");
  // A bit error rate: 4 errors in 2.88e14 bits.
  EXPECT_EQ(FormatTemplateNumber(4 / 2.88e14, ""), "1.39e-14");
  EXPECT_EQ(FormatTemplateNumber(0, ""), "0");
}

// A culprit seen from a switch port has no host, device or netdev: the summary names what it
// has and leaves out what it cannot say, instead of reading "<host?> <device?> (<netdev?>)".
TEST(ExpandTemplate, AlternativesAndOptionalSections) {
  const std::string tmpl =
      "PFC storm: {{host or switch}} {{device or interface}}[[ ({{netdev}})]] at {{peak}}/s"
      "[[; leaf {{leaf}} port {{leaf_port}} relays them]]";
  const Labels nic = {{"device", "mlx5_3"},
                      {"host", "gpu-node-004"},
                      {"leaf", "leaf-1"},
                      {"leaf_port", "Ethernet12"},
                      {"netdev", "eth3"}};
  EXPECT_EQ(ExpandTemplate(tmpl, nic, 6240),
            "PFC storm: gpu-node-004 mlx5_3 (eth3) at 6,240/s; leaf leaf-1 port Ethernet12 "
            "relays them");
  const Labels port = {{"interface", "Ethernet8"}, {"switch", "leaf-2"}};
  EXPECT_EQ(ExpandTemplate(tmpl, port, 6240), "PFC storm: leaf-2 Ethernet8 at 6,240/s");
  // Neither alternative: still said, outside a section.
  EXPECT_EQ(ExpandTemplate("on {{host or switch}}", {}, 1), "on <host or switch?>");
  // An unclosed section is text.
  EXPECT_EQ(ExpandTemplate("a [[b {{x}}", {}, 1), "a [[b <x?>");
}

}  // namespace engine_test
}  // namespace railwatch
