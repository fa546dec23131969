// The engine's incident logic: one diagnosis per root cause with its symptoms as evidence,
// group_by, blast radius and cost, runbook commands, repeat offenders, events as evidence;
// and the loader's lists, macros and overrides.
#include <filesystem>
#include <fstream>

#include "engine/engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/ttar.h"
#include "unit/engine_test_topology.h"
#include "unit/engine_test_util.h"

namespace railwatch {
namespace engine_correlation_test {

using ::testing::Contains;
using ::testing::HasSubstr;

class Recorder final : public DiagnosisListener {
 public:
  void OnFiring(const AlertRecord& a) override { fired.push_back(ToDiagnosis(a)); }
  void OnResolved(const AlertRecord& a) override { resolved.push_back(ToDiagnosis(a)); }
  std::vector<v1::Diagnosis> fired, resolved;
};

using testing_topology::kTwoLeaves;

std::string Culprit(const v1::Diagnosis& d, const std::string& name) {
  for (const v1::Label& l : d.culprit()) {
    if (l.name() == name) return l.value();
  }
  return "";
}

std::vector<v1::Diagnosis> Active(const Engine& e, const std::string& playbook) {
  std::vector<v1::Diagnosis> out;
  for (const v1::Diagnosis& d : Diagnoses(e)) {
    if (d.playbook() == playbook && d.state() != v1::DIAGNOSIS_STATE_RESOLVED) out.push_back(d);
  }
  return out;
}

class CorrelationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<Topology> t = Topology::LoadString(kTwoLeaves, "topo.yaml");
    ASSERT_TRUE(t.ok()) << t.status();
    topology_ = std::make_shared<const Topology>(std::move(*t));
    jobs_.SetStatic(topology_->jobs());
    fabric_ = std::make_unique<FabricMap>(topology_, &jobs_);
    std::ofstream(dir_.path() + "/storm.md")
        << "# Storm\n## Commands\n```sh\n# look at the NIC\nssh {{host}} ethtool -S {{netdev}}\n"
           "$ ssh {{host}} mlnx_qos -i {{netdev}} --prio {{priority}}\n```\n"
           "```text\nnot a command {{host}}\n```\n";
  }

  std::vector<Playbook> Load(const std::string& yaml) {
    const std::string file = dir_.path() + "/rules.yaml";
    std::ofstream(file) << yaml;
    LoadResult r = LoadPlaybooks({file});
    for (const LoadProblem& p : r.problems) ADD_FAILURE() << p.ToString();
    return std::move(r.playbooks);
  }

  SeriesRef Counter(const std::string& name, Labels labels) {
    NormalizeLabels(labels);
    return store_.Intern(name, labels, MetricKind::kCounter);
  }

  // Advances one second and appends value[i] to series i.
  void Tick(const std::vector<std::pair<SeriesRef, double>>& values) {
    clock_.Advance(absl::Seconds(1));
    for (const auto& [ref, v] : values) store_.Append(ref, clock_.NowNanos(), v);
  }

  testing::TempDir dir_;
  FakeClock clock_;
  SeriesStore store_{SeriesStore::Options{.capacity = 600}};
  EventStore events_{EventStore::Options{}};
  std::shared_ptr<const Topology> topology_;
  JobRegistry jobs_;
  std::unique_ptr<FabricMap> fabric_;
};

constexpr char kStormRules[] = R"y(
- playbook: storm
  desc: a NIC sends pauses
  condition: rate(fabric_pfc_pause_frames_total{host!="",direction="tx"}[5s]) > 1000
  severity: critical
  culprit: [host, device, netdev, priority, leaf, rail]
  group_by: [node]
  blast_radius: leaf
  summary: "storm from {{host}} {{netdev}} ({{value}}/s)"
  runbook: storm.md
  explains:
    - {playbooks: [relay], relation: fabric, hops: 3}
- playbook: relay
  desc: a switch port sends pauses
  condition: rate(fabric_pfc_pause_frames_total{switch!="",direction="tx"}[5s]) > 500
  culprit: [switch, interface]
  runbook: https://example/relay
)y";

TEST_F(CorrelationTest, RelaysAreEvidenceOfTheStormNotDiagnoses) {
  const SeriesRef nic =
      Counter("fabric_pfc_pause_frames_total",
              {{"host", "h1"}, {"interface", "eth0"}, {"priority", "3"}, {"direction", "tx"}});
  const SeriesRef up_a =
      Counter("fabric_pfc_pause_frames_total",
              {{"switch", "leaf-a"}, {"interface", "up0"}, {"priority", "3"}, {"direction", "tx"}});
  const SeriesRef p2_a =
      Counter("fabric_pfc_pause_frames_total",
              {{"switch", "leaf-a"}, {"interface", "p2"}, {"priority", "3"}, {"direction", "tx"}});
  const SeriesRef spine =
      Counter("fabric_pfc_pause_frames_total",
              {{"switch", "spine-0"}, {"interface", "p1"}, {"priority", "3"}, {"direction", "tx"}});
  Engine engine(Engine::Options{.gpu_hour_cost = 30}, Load(kStormRules), store_, clock_,
                Engine::Sources{&events_, fabric_.get()});
  Recorder rec;
  engine.AddListener(&rec);

  double n = 0, r = 0;
  for (int i = 0; i < 5; ++i) {
    Tick({{nic, n}, {up_a, r}, {p2_a, r}, {spine, r}});
    engine.EvaluateOnce();
  }
  EXPECT_TRUE(Diagnoses(engine).empty());
  for (int i = 0; i < 4; ++i) {
    n += 20000;
    r += 3000;
    Tick({{nic, n}, {up_a, r}, {p2_a, r}, {spine, r}});
    engine.EvaluateOnce();
  }
  ASSERT_EQ(rec.fired.size(), 1u) << "one incident, one page";
  std::vector<v1::Diagnosis> storms = Active(engine, "storm");
  ASSERT_EQ(storms.size(), 1u);
  const v1::Diagnosis& d = storms[0];
  EXPECT_EQ(Culprit(d, "host"), "h1");
  EXPECT_EQ(Culprit(d, "device"), "mlx5_0") << "topology adds the RDMA device to a netdev";
  EXPECT_EQ(Culprit(d, "leaf"), "leaf-a");
  EXPECT_EQ(d.summary(), "storm from h1 eth0 (16,000/s)") << "80000 pauses over the 5 s window";
  EXPECT_EQ(d.location(), "h1 mlx5_0 (rail 0, leaf-a p1, job train-a)");
  EXPECT_TRUE(Active(engine, "relay").empty());
  EXPECT_EQ(d.explains_size(), 3) << "leaf-a up0, leaf-a p2 and spine-0 p1 (2 hops away)";
  int symptoms = 0;
  for (const v1::Evidence& e : d.evidence()) symptoms += e.kind() == "symptom";
  EXPECT_EQ(symptoms, 3);
  // Blast radius: every host behind leaf-a, the job there, 16 GPUs at $30/GPU-hour.
  EXPECT_EQ(d.blast_radius().scope(), "leaf");
  EXPECT_THAT(d.blast_radius().hosts(), ::testing::ElementsAre("h1", "h2"));
  ASSERT_EQ(d.blast_radius().jobs_size(), 1);
  EXPECT_EQ(d.blast_radius().jobs(0).job(), "train-a");
  EXPECT_EQ(d.blast_radius().gpus(), 16u);
  EXPECT_DOUBLE_EQ(d.blast_radius().cost_per_minute(), 8.0);
  // The runbook's shell lines, with the culprit filled in; comments and other blocks skipped.
  EXPECT_THAT(d.commands(),
              ::testing::ElementsAre("ssh h1 ethtool -S eth0", "ssh h1 mlnx_qos -i eth0 --prio 3"));
  EXPECT_THAT(d.runbook_text(), HasSubstr("not a command h1"));

  // The storm ends; the relays go on alone for a while: they are their own incident now.
  for (int i = 0; i < 8; ++i) {
    r += 3000;
    Tick({{nic, n}, {up_a, r}, {p2_a, r}, {spine, r}});
    engine.EvaluateOnce();
  }
  EXPECT_TRUE(Active(engine, "storm").empty());
  EXPECT_EQ(Active(engine, "relay").size(), 3u);
}

TEST_F(CorrelationTest, AFiringSymptomResolvesAsExplainedWhenItsCauseAppears) {
  const SeriesRef nic =
      Counter("fabric_pfc_pause_frames_total",
              {{"host", "h2"}, {"interface", "eth0"}, {"priority", "3"}, {"direction", "tx"}});
  const SeriesRef up =
      Counter("fabric_pfc_pause_frames_total",
              {{"switch", "leaf-a"}, {"interface", "up0"}, {"priority", "3"}, {"direction", "tx"}});
  Engine engine({}, Load(kStormRules), store_, clock_, Engine::Sources{&events_, fabric_.get()});
  Recorder rec;
  engine.AddListener(&rec);
  double n = 0, r = 0;
  for (int i = 0; i < 4; ++i) {  // relays first (the NIC's counters arrive late)
    r += 3000;
    Tick({{nic, n}, {up, r}});
    engine.EvaluateOnce();
  }
  ASSERT_EQ(Active(engine, "relay").size(), 1u);
  for (int i = 0; i < 3; ++i) {
    r += 3000;
    n += 20000;
    Tick({{nic, n}, {up, r}});
    engine.EvaluateOnce();
  }
  EXPECT_TRUE(Active(engine, "relay").empty());
  ASSERT_EQ(rec.resolved.size(), 1u);
  const std::vector<v1::Diagnosis> storms = Active(engine, "storm");
  ASSERT_EQ(storms.size(), 1u);
  EXPECT_EQ(rec.resolved[0].explained_by(), storms[0].id());
  EXPECT_EQ(storms[0].explains_size(), 1);
}

// A cause that blinks in and out of pending (its `for:` never met) must not take back a symptom
// that has paged, or the symptom would resolve and page again each time the cause blinks.
TEST_F(CorrelationTest, APendingCauseDoesNotTakeBackAPagedSymptom) {
  std::string rules = kStormRules;
  rules.replace(rules.find("severity: critical"), 0, "for: 10s\n  ");
  const SeriesRef nic =
      Counter("fabric_pfc_pause_frames_total",
              {{"host", "h2"}, {"interface", "eth0"}, {"priority", "3"}, {"direction", "tx"}});
  const SeriesRef up =
      Counter("fabric_pfc_pause_frames_total",
              {{"switch", "leaf-a"}, {"interface", "up0"}, {"priority", "3"}, {"direction", "tx"}});
  Engine engine({}, Load(rules), store_, clock_, Engine::Sources{&events_, fabric_.get()});
  Recorder rec;
  engine.AddListener(&rec);
  double n = 0, r = 0;
  for (int i = 0; i < 4; ++i) {  // the relay pages on its own first
    r += 3000;
    Tick({{nic, n}, {up, r}});
    engine.EvaluateOnce();
  }
  ASSERT_EQ(rec.fired.size(), 1u);
  ASSERT_EQ(rec.fired[0].playbook(), "relay");
  for (int blink = 0; blink < 3; ++blink) {  // the storm condition holds 3 s, then 6 s not
    for (int i = 0; i < 9; ++i) {
      r += 3000;
      n += i < 3 ? 20000 : 0;
      Tick({{nic, n}, {up, r}});
      engine.EvaluateOnce();
    }
  }
  EXPECT_TRUE(rec.resolved.empty()) << "resolved " << rec.resolved.size() << " time(s)";
  EXPECT_EQ(rec.fired.size(), 1u) << "one page for the relay, none for the never-firing storm";
  EXPECT_EQ(Active(engine, "relay").size(), 1u);
}

TEST_F(CorrelationTest, UnrelatedSymptomStaysItsOwnDiagnosis) {
  const SeriesRef nic =
      Counter("fabric_pfc_pause_frames_total",
              {{"host", "h1"}, {"interface", "eth0"}, {"priority", "3"}, {"direction", "tx"}});
  // leaf-b's host port is 3 hops from h1's NIC (NIC - leaf-a - spine - leaf-b): hops 3 allows
  // it, so use a rule with hops 1 to see the distance matter.
  std::string rules = kStormRules;
  rules.replace(rules.find("hops: 3"), 7, "hops: 1");
  const SeriesRef far =
      Counter("fabric_pfc_pause_frames_total",
              {{"switch", "leaf-b"}, {"interface", "p1"}, {"priority", "3"}, {"direction", "tx"}});
  Engine engine({}, Load(rules), store_, clock_, Engine::Sources{&events_, fabric_.get()});
  double n = 0, r = 0;
  for (int i = 0; i < 4; ++i) {
    n += 20000;
    r += 3000;
    Tick({{nic, n}, {far, r}});
    engine.EvaluateOnce();
  }
  EXPECT_EQ(Active(engine, "storm").size(), 1u);
  EXPECT_EQ(Active(engine, "relay").size(), 1u);
}

TEST_F(CorrelationTest, GroupByLinkMakesBothEndsAndRepeatsOneIncident) {
  const std::string rules = R"y(
- playbook: flap
  desc: link flapped
  condition: |
    increase(fabric_rdma_link_downed_total[1m]) > 0
    or changes(fabric_switch_interface_oper_up[1m]) > 0
  keep_firing_for: 1m
  culprit: [link, host, device, switch, interface]
  group_by: [link]
  runbook: https://example/flap
)y";
  const SeriesRef nic = Counter("fabric_rdma_link_downed_total",
                                {{"host", "h3"}, {"device", "mlx5_0"}, {"port", "1"}});
  Labels sw_labels = {{"switch", "leaf-b"}, {"interface", "p1"}};
  NormalizeLabels(sw_labels);
  const SeriesRef sw =
      store_.Intern("fabric_switch_interface_oper_up", sw_labels, MetricKind::kGauge);
  Engine engine({}, Load(rules), store_, clock_, Engine::Sources{&events_, fabric_.get()});
  Recorder rec;
  engine.AddListener(&rec);
  double downed = 0, up = 1;
  for (int i = 0; i < 60; ++i) {
    if (i % 10 == 5) {  // five flaps, each seen by both ends
      downed += 1;
      up = 0;
    } else {
      up = 1;
    }
    Tick({{nic, downed}, {sw, up}});
    engine.EvaluateOnce();
  }
  EXPECT_EQ(rec.fired.size(), 1u);
  const std::vector<v1::Diagnosis> flaps = Active(engine, "flap");
  ASSERT_EQ(flaps.size(), 1u);
  EXPECT_EQ(Culprit(flaps[0], "link"), "h3/mlx5_0 <-> leaf-b/p1");
  // It resolves after keep_firing_for; a new flap is a new incident that knows the old one.
  for (int i = 0; i < 150; ++i) {
    Tick({{nic, downed}, {sw, 1}});
    engine.EvaluateOnce();
  }
  ASSERT_EQ(rec.resolved.size(), 1u);
  Tick({{nic, downed + 1}, {sw, 1}});
  engine.EvaluateOnce();
  const std::vector<v1::Diagnosis> again = Active(engine, "flap");
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].previous_incidents(), 1u) << "a repeat offender";
}

TEST_F(CorrelationTest, EventsBecomeEvidenceWithTheirRawLines) {
  const std::string rules = R"y(
- playbook: nccl
  desc: NCCL failed
  condition: sum by (host) (count_over_time(events{kind="nccl.ib_completion_error"}[5m])) > 0
  culprit: [host, job]
  blast_radius: job
  runbook: https://example/nccl
)y";
  Engine engine({}, Load(rules), store_, clock_, Engine::Sources{&events_, fabric_.get()});
  clock_.Advance(absl::Seconds(10));
  StoredEvent e;
  e.kind = "nccl.ib_completion_error";
  e.time_unix_nano = clock_.NowNanos() - 1'000'000'000;
  e.labels = {{"host", "h2"}};
  e.raw = "h2:123:456 [1] NCCL WARN NET/IB : Got completion from peer with status=12";
  events_.Append(e);
  engine.EvaluateOnce();
  const std::vector<v1::Diagnosis> d = Active(engine, "nccl");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(Culprit(d[0], "host"), "h2");
  EXPECT_EQ(Culprit(d[0], "job"), "train-a");
  EXPECT_EQ(d[0].blast_radius().gpus(), 16u);
  bool found = false;
  for (const v1::Evidence& ev : d[0].evidence()) {
    if (ev.kind() == "event" && ev.raw() == e.raw) found = true;
  }
  EXPECT_TRUE(found);
}

TEST(PlaybookItems, ListsMacrosAndOverridesAcrossFiles) {
  testing::TempDir dir;
  std::filesystem::create_directories(dir.path() + "/shipped");
  std::filesystem::create_directories(dir.path() + "/local");
  std::ofstream(dir.path() + "/shipped/a.yaml") << R"y(
- list: lossless
  items: ["3"]
- playbook: pauses
  desc: pauses
  condition: busy_pauses > 10
  tags: [pfc]
  runbook: https://example/p
)y";
  // Defined after use, in another file.
  std::ofstream(dir.path() + "/shipped/b.yaml") << R"y(
- macro: busy_pauses
  condition: rate(fabric_pfc_pause_frames_total{priority in (lossless)}[10s])
)y";
  std::ofstream(dir.path() + "/local/site.yaml") << R"y(
- list: lossless
  items: ["4"]
  override: {items: append}
- playbook: pauses
  condition: unless on(host) fabric_maintenance == 1
  tags: [site]
  for: 30s
  override: {condition: append, tags: append, for: replace}
- playbook: nothing_here
  override: {for: replace}
  for: 1m
)y";
  // A site's own series (fabric_maintenance) and `a`: made-up names, the vocabulary check is
  // tests/unit/playbook_test.cc's.
  LoadResult r = LoadPlaybooks({dir.path() + "/shipped", dir.path() + "/local"},
                               {.check_metric_names = false});
  std::vector<std::string> problems;
  for (const LoadProblem& p : r.problems) problems.push_back(p.ToString());
  ASSERT_EQ(problems.size(), 1u) << ::testing::PrintToString(problems);
  EXPECT_THAT(problems[0], HasSubstr("site.yaml:10:13: error[unknown-override]"));
  ASSERT_EQ(r.playbooks.size(), 1u);
  const Playbook& pb = r.playbooks[0];
  EXPECT_EQ(pb.for_duration, absl::Seconds(30));
  EXPECT_THAT(pb.tags, ::testing::ElementsAre("pfc", "site"));
  const std::string text = pb.condition->ToString();
  EXPECT_THAT(text, HasSubstr("fabric_pfc_pause_frames_total"));
  EXPECT_THAT(text, HasSubstr("\"3\""));
  EXPECT_THAT(text, HasSubstr("\"4\""));
  EXPECT_THAT(text, HasSubstr("fabric_maintenance"));
}

TEST(PlaybookItems, DisableWithEnabledOnlyAndBadExplains) {
  testing::TempDir dir;
  const std::string text =
      "- playbook: p\n"                                  // 1
      "  desc: d\n"                                      // 2
      "  condition: a > 1\n"                             // 3
      "  runbook: https://example/p\n"                   // 4
      "- playbook: q\n"                                  // 5
      "  desc: d\n"                                      // 6
      "  condition: a > 1\n"                             // 7
      "  runbook: https://example/q\n"                   // 8
      "  explains:\n"                                    // 9
      "    - {playbooks: [p], relation: same_galaxy}\n"  // 10
      "    - {relation: same_host}\n"                    // 11
      "- playbook: p\n"                                  // 12
      "  enabled: false\n";                              // 13
  std::ofstream(dir.path() + "/a.yaml") << text;
  LoadResult r = LoadPlaybooks({dir.path() + "/a.yaml"}, {.check_metric_names = false});
  std::vector<std::string> got;
  for (const LoadProblem& p : r.problems) got.push_back(p.ToString());
  EXPECT_THAT(got, Contains(HasSubstr("a.yaml:10:34: error[bad-relation]")));
  EXPECT_THAT(got, Contains(HasSubstr("a.yaml:11:7: error[missing-key]")));
  EXPECT_EQ(got.size(), 2u) << ::testing::PrintToString(got);
  ASSERT_EQ(r.playbooks.size(), 1u);
  EXPECT_EQ(r.playbooks[0].name, "p");
  EXPECT_FALSE(r.playbooks[0].enabled);
}

TEST(RunbookCommands, ShellBlocksOnly) {
  EXPECT_THAT(RunbookCommands("text\n```sh\n# c\n\n  ls /x  \n$ echo y\n```\n```\nno\n```\n"
                              "```bash\nuname\n```"),
              ::testing::ElementsAre("ls /x", "echo y", "uname"));
}

}  // namespace engine_correlation_test
}  // namespace railwatch
