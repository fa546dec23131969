// The engine's parts on their own: one playbook's state machine (PlaybookState), the
// correlator, the history of resolved diagnoses and the AlertRecord <-> v1::Diagnosis boundary.
// The whole engine is engine_test.cc and engine_correlation_test.cc.
#include <fstream>
#include <string>
#include <vector>

#include "engine/alert.h"
#include "engine/alert_history.h"
#include "engine/alert_proto.h"
#include "engine/candidates.h"
#include "engine/correlator.h"
#include "engine/diagnosis_text.h"
#include "engine/enricher.h"
#include "engine/playbook_state.h"
#include "gtest/gtest.h"
#include "store/series_store.h"

namespace railwatch {
namespace engine_parts_test {

constexpr int64_t kSecond = 1'000'000'000;

Playbook MakePlaybook(const std::string& name, absl::Duration for_duration = absl::ZeroDuration(),
                      absl::Duration keep = absl::ZeroDuration()) {
  Playbook pb;
  pb.name = name;
  pb.for_duration = for_duration;
  pb.keep_firing_for = keep;
  pb.culprit = {"host"};
  pb.summary = name + " on {{host}}";
  return pb;
}

ExplainRule Explains(const std::string& symptom, const std::string& relation,
                     absl::Duration lead = absl::Minutes(2)) {
  ExplainRule rule;
  rule.playbooks = {symptom};
  rule.relation = relation;
  rule.lead = lead;
  return rule;
}

Candidate Result(const std::string& host, double value = 1, bool unknown = false) {
  Labels labels{{"host", host}};
  return {FormatLabels(labels), labels, value, unknown, {}, {}};
}

// Drives PlaybookStates the way the engine does, on explicit times.
class Harness {
 public:
  explicit Harness(std::vector<const Playbook*> playbooks)
      : correlator_(playbooks),
        enricher_(playbooks, store_, nullptr, 30),
        history_(/*capacity=*/3, absl::Hours(1)) {
    for (const Playbook* pb : correlator_.order()) states_.emplace_back(*pb);
  }

  // One evaluation at `now`: results by playbook name (playbooks not named have none).
  std::vector<AlertTransition> Evaluate(
      int64_t now, const std::vector<std::pair<std::string, std::vector<Candidate>>>& results) {
    std::vector<AlertTransition> transitions;
    auto alerts_of = [this](const Playbook& pb) -> AlertMap& { return State(pb.name).alerts(); };
    const PlaybookState::Step step{.now = now,
                                   .correlator = correlator_,
                                   .enricher = enricher_,
                                   .store = store_,
                                   .fabric = nullptr,
                                   .alerts_of = alerts_of,
                                   .history = history_,
                                   .transitions = transitions,
                                   .unknown_results = unknown_};
    for (PlaybookState& s : states_) {
      std::vector<Candidate> candidates;
      for (const auto& [name, c] : results) {
        if (name == s.playbook().name) candidates = c;
      }
      s.Evaluate(std::move(candidates), step);
    }
    return transitions;
  }

  PlaybookState& State(const std::string& name) {
    for (PlaybookState& s : states_) {
      if (s.playbook().name == name) return s;
    }
    ADD_FAILURE() << "no playbook " << name;
    return states_.front();
  }
  const Correlator& correlator() const { return correlator_; }
  AlertHistory& history() { return history_; }
  uint64_t unknown() const { return unknown_; }

 private:
  SeriesStore store_{SeriesStore::Options{.capacity = 4}};
  Correlator correlator_;
  Enricher enricher_;
  AlertHistory history_;
  std::vector<PlaybookState> states_;
  uint64_t unknown_ = 0;
};

std::vector<Transition> Kinds(const std::vector<AlertTransition>& ts) {
  std::vector<Transition> out;
  for (const AlertTransition& t : ts) out.push_back(t.what);
  return out;
}

TEST(PlaybookStateTest, PendingFiresAfterForThenResolvesAfterKeepFiringFor) {
  const Playbook pb = MakePlaybook("storm", absl::Seconds(10), absl::Seconds(5));
  Harness h({&pb});
  auto t = h.Evaluate(0, {{"storm", {Result("a", 3)}}});
  ASSERT_EQ(Kinds(t), std::vector<Transition>{Transition::kPending});
  EXPECT_EQ(t[0].alert.summary, "storm on a");
  const std::string id = t[0].alert.id;

  EXPECT_TRUE(h.Evaluate(9 * kSecond, {{"storm", {Result("a", 7)}}}).empty());
  t = h.Evaluate(10 * kSecond, {{"storm", {Result("a", 2)}}});
  ASSERT_EQ(Kinds(t), std::vector<Transition>{Transition::kFiring});
  EXPECT_EQ(t[0].alert.id, id);
  EXPECT_EQ(t[0].alert.fired_at, 10 * kSecond);
  EXPECT_EQ(t[0].alert.peak, 7);

  // Quiet: kept firing for 5 s after the last time it held, its summary in the past.
  EXPECT_TRUE(h.Evaluate(14 * kSecond, {}).empty());
  const AlertRecord& kept = h.State("storm").alerts().begin()->second;
  EXPECT_TRUE(kept.firing());
  EXPECT_NE(kept.summary.find("quiet since"), std::string::npos) << kept.summary;

  t = h.Evaluate(15 * kSecond, {});
  ASSERT_EQ(Kinds(t), std::vector<Transition>{Transition::kResolved});
  EXPECT_EQ(t[0].alert.resolved_at, 15 * kSecond);
  EXPECT_TRUE(h.State("storm").alerts().empty());
  ASSERT_EQ(h.history().resolved().size(), 1u);
  EXPECT_EQ(h.history().resolved().front().id, id);
}

TEST(PlaybookStateTest, PendingThatStopsHoldingIsClearedNotResolved) {
  const Playbook pb = MakePlaybook("storm", absl::Seconds(10));
  Harness h({&pb});
  h.Evaluate(0, {{"storm", {Result("a")}}});
  auto t = h.Evaluate(kSecond, {});
  ASSERT_EQ(Kinds(t), std::vector<Transition>{Transition::kPendingCleared});
  EXPECT_TRUE(h.history().resolved().empty());
}

TEST(PlaybookStateTest, UnknownResultNeitherStartsNorResolves) {
  const Playbook pb = MakePlaybook("storm");
  Harness h({&pb});
  EXPECT_TRUE(h.Evaluate(0, {{"storm", {Result("a", 1, /*unknown=*/true)}}}).empty());
  EXPECT_TRUE(h.State("storm").alerts().empty());
  ASSERT_EQ(Kinds(h.Evaluate(kSecond, {{"storm", {Result("b")}}})),
            std::vector<Transition>{Transition::kFiring});
  // b's window does not hold its data for a tick: b stays firing, unrefreshed.
  EXPECT_TRUE(h.Evaluate(2 * kSecond, {{"storm", {Result("b", 1, true)}}}).empty());
  EXPECT_EQ(h.State("storm").alerts().size(), 1u);
  EXPECT_EQ(h.unknown(), 2u);
}

TEST(PlaybookStateTest, HeldAlertIsNotResolvedUntilItsHoldEnds) {
  const Playbook pb = MakePlaybook("storm");
  Harness h({&pb});
  h.Evaluate(0, {{"storm", {Result("a")}}});
  h.State("storm").alerts().begin()->second.hold_until = 10 * kSecond;
  EXPECT_TRUE(h.Evaluate(5 * kSecond, {}).empty());
  EXPECT_EQ(Kinds(h.Evaluate(10 * kSecond, {})), std::vector<Transition>{Transition::kResolved});
}

TEST(PlaybookStateTest, RepeatIncidentsAreCountedWithinTheWindow) {
  const Playbook pb = MakePlaybook("storm");
  Harness h({&pb});
  for (int i = 0; i < 3; ++i) {
    h.Evaluate(i * 600 * kSecond, {{"storm", {Result("a")}}});
    h.Evaluate(i * 600 * kSecond + kSecond, {});
  }
  auto t = h.Evaluate(1800 * kSecond, {{"storm", {Result("a")}}});
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].alert.previous_incidents, 3u);
  // An hour later the first two have left the (one-hour) window.
  h.Evaluate(1801 * kSecond, {});
  t = h.Evaluate(4300 * kSecond, {{"storm", {Result("a")}}});
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].alert.previous_incidents, 2u);
  // The history keeps its capacity (3), newest first.
  ASSERT_EQ(h.history().resolved().size(), 3u);
  EXPECT_EQ(h.history().resolved().front().resolved_at, 1801 * kSecond);
}

TEST(CorrelatorTest, CausesAreEvaluatedBeforeTheirSymptoms) {
  Playbook symptom = MakePlaybook("slow");
  Playbook cause = MakePlaybook("storm");
  cause.explains.push_back(Explains("slow", "same_host"));
  Playbook other = MakePlaybook("other");
  const Correlator c({&symptom, &other, &cause});
  ASSERT_EQ(c.order().size(), 3u);
  EXPECT_EQ(c.order()[0]->name, "storm");
  EXPECT_EQ(c.order()[1]->name, "slow");
  EXPECT_EQ(c.order()[2]->name, "other");
}

TEST(CorrelatorTest, SymptomIsFoldedIntoItsCauseAndAFiringOneResolvesExplained) {
  Playbook cause = MakePlaybook("storm");
  cause.explains.push_back(Explains("slow", "same_host"));
  Playbook symptom = MakePlaybook("slow");
  Harness h({&cause, &symptom});
  // The symptom fires first (no cause yet), on host a.
  ASSERT_EQ(Kinds(h.Evaluate(0, {{"slow", {Result("a")}}})),
            std::vector<Transition>{Transition::kFiring});
  // The cause on a: the symptom resolves, explained by it, and is its evidence.
  auto t = h.Evaluate(kSecond, {{"storm", {Result("a")}}, {"slow", {Result("a")}}});
  ASSERT_EQ(Kinds(t), (std::vector<Transition>{Transition::kFiring, Transition::kResolved}));
  EXPECT_EQ(t[1].alert.playbook, "slow");
  EXPECT_EQ(t[1].alert.explained_by, t[0].alert.id);
  const AlertRecord& storm = h.State("storm").alerts().begin()->second;
  ASSERT_EQ(storm.explains.size(), 1u);
  EXPECT_EQ(storm.explains[0], "slow host=\"a\"");
  const v1::Diagnosis d = ToDiagnosis(storm);
  ASSERT_EQ(d.evidence_size(), 1);
  EXPECT_EQ(d.evidence(0).kind(), "symptom");
  EXPECT_EQ(d.evidence(0).playbook(), "slow");
  // A symptom on another host is not the cause's.
  EXPECT_EQ(Kinds(h.Evaluate(2 * kSecond, {{"storm", {Result("a")}}, {"slow", {Result("b")}}})),
            std::vector<Transition>{Transition::kFiring});
}

TEST(CorrelatorTest, OfSeveralCausesTheOldestTakesTheSymptom) {
  Playbook cause = MakePlaybook("storm");
  cause.culprit = {"host", "port"};
  cause.explains.push_back(Explains("slow", "same_host"));
  Playbook symptom = MakePlaybook("slow");
  Harness h({&cause, &symptom});
  auto port = [](const std::string& p) {
    Labels labels{{"host", "a"}, {"port", p}};
    return Candidate{FormatLabels(labels), labels, 1, false, {}, {}};
  };
  h.Evaluate(0, {{"storm", {port("2")}}});
  h.Evaluate(kSecond, {{"storm", {port("2"), port("1")}}});
  h.Evaluate(2 * kSecond, {{"storm", {port("2"), port("1")}}, {"slow", {Result("a")}}});
  const AlertMap& storms = h.State("storm").alerts();
  ASSERT_EQ(storms.size(), 2u);
  for (const auto& [key, a] : storms) {
    EXPECT_EQ(a.symptoms.size(), LabelValue(a.labels, "port") == "2" ? 1u : 0u) << key;
  }
}

TEST(CorrelatorTest, PendingCauseHoldsBackOnlyASymptomThatHasNotPaged) {
  Playbook cause = MakePlaybook("storm", absl::Seconds(30));
  cause.explains.push_back(Explains("slow", "same_host"));
  Playbook symptom = MakePlaybook("slow");
  Harness h({&cause, &symptom});
  // Cause pending, symptom new: held back (folded), no diagnosis of its own.
  auto t = h.Evaluate(0, {{"storm", {Result("a")}}, {"slow", {Result("a")}}});
  EXPECT_EQ(Kinds(t), std::vector<Transition>{Transition::kPending});
  EXPECT_TRUE(h.State("slow").alerts().empty());
  // A symptom that already paged (on b, before any cause there) is not taken by a pending one.
  h.Evaluate(kSecond, {{"storm", {Result("a")}}, {"slow", {Result("b")}}});
  t = h.Evaluate(2 * kSecond, {{"storm", {Result("a"), Result("b")}}, {"slow", {Result("b")}}});
  EXPECT_EQ(Kinds(t), std::vector<Transition>{Transition::kPending});
  EXPECT_EQ(h.State("slow").alerts().size(), 1u);
}

TEST(CorrelatorTest, SymptomFromWellBeforeTheCauseIsNotItsEffect) {
  Playbook cause = MakePlaybook("storm");
  cause.explains.push_back(Explains("slow", "same_host", absl::Seconds(5)));
  Playbook symptom = MakePlaybook("slow", absl::Seconds(60));
  Harness h({&cause, &symptom});
  h.Evaluate(0, {{"slow", {Result("a")}}});  // pending since 0
  h.Evaluate(10 * kSecond, {{"storm", {Result("a")}}, {"slow", {Result("a")}}});
  EXPECT_EQ(h.State("slow").alerts().size(), 1u);
  EXPECT_TRUE(h.State("storm").alerts().begin()->second.symptoms.empty());
}

TEST(CorrelatorTest, RelationsCompareEnrichedLabels) {
  AlertRecord cause;
  cause.labels = {{"host", "a"}, {"leaf", "leaf-1"}, {"rail", "3"}, {"node", "a/mlx5_3"}};
  cause.blast.jobs.emplace_back().job = "train";
  cause.blast.hosts = {"a", "c"};
  auto related = [&](const std::string& relation, const Labels& s) {
    return Correlator::Related(Explains("x", relation), cause, s, nullptr);
  };
  EXPECT_TRUE(related("same_host", {{"peer_host", "a"}}));
  EXPECT_FALSE(related("same_host", {{"host", "b"}}));
  EXPECT_TRUE(related("same_rail", {{"rail", "3"}}));
  EXPECT_FALSE(related("same_rail", {{"rail", ""}}));
  EXPECT_TRUE(related("same_leaf", {{"switch", "leaf-1"}}));
  EXPECT_TRUE(related("same_job", {{"job", "train"}}));
  EXPECT_TRUE(related("same_job", {{"host", "c"}}));
  EXPECT_FALSE(related("same_job", {{"host", "d"}}));
  // Without a fabric map, `fabric` falls back to the same leaf.
  EXPECT_TRUE(related("fabric", {{"node", "b/mlx5_0"}, {"leaf", "leaf-1"}}));
  EXPECT_FALSE(related("fabric", {{"node", "b/mlx5_0"}, {"leaf", "leaf-2"}}));
  ExplainRule equal = Explains("x", "same_host");
  equal.equal = {"priority"};
  EXPECT_FALSE(Correlator::Related(equal, cause, {{"host", "a"}, {"priority", "3"}}, nullptr));
}

TEST(AlertTest, DiagnosisRoundTripsAndSymptomsAreNotDoubled) {
  AlertRecord a;
  a.id = "abc";
  a.playbook = "storm";
  a.key = "{host=\"a\"}";
  a.culprit = {{"host", "a"}};
  a.severity = v1::SEVERITY_CRITICAL;
  a.state = AlertState::kFiring;
  a.active_since = 1;
  a.fired_at = 2;
  a.last_evaluated = 3;
  a.summary = "storm on a";
  a.location = "a";
  a.runbook = "rules/runbooks/storm.md";
  a.runbook_text = "# Storm";
  a.commands = {"ssh a ethtool -S eth0"};
  a.tags = {"pfc"};
  a.previous_incidents = 4;
  a.has_blast = true;
  a.blast.scope = "host";
  a.blast.hosts = {"a"};
  a.blast.jobs.push_back({"train", 8, 8, {"a"}, {"a", "b"}});
  a.blast.gpus = 8;
  a.cost_per_minute = 4;
  AlertEvidence& e = a.evidence.emplace_back();
  e.series = "x{host=\"a\"}";
  e.name = "x";
  e.labels = {{"host", "a"}};
  e.summary = "value = 1";
  e.value = 1;
  e.points = {{10, 1}, {20, 2}};
  Symptom& sym = a.symptoms[std::string("slow\0k", 6)];
  sym.playbook = "slow";
  sym.labels = {{"host", "a"}};
  sym.first_seen = 5;
  a.explains = {"slow k"};
  const v1::Diagnosis d = ToDiagnosis(a);
  EXPECT_EQ(d.state(), v1::DIAGNOSIS_STATE_FIRING);
  EXPECT_EQ(d.severity(), v1::SEVERITY_CRITICAL);
  ASSERT_EQ(d.evidence_size(), 2);
  EXPECT_EQ(d.evidence(0).points_size(), 2);
  EXPECT_EQ(d.evidence(1).kind(), "symptom");
  EXPECT_EQ(d.blast_radius().jobs(0).job_hosts_size(), 2);
  EXPECT_DOUBLE_EQ(d.blast_radius().cost_per_minute(), 4);
  EXPECT_EQ(ToDiagnosis(a, /*points=*/false).evidence(0).points_size(), 0);

  AlertRecord back = AlertFromDiagnosis(d);
  back.key = a.key;
  back.symptoms = a.symptoms;
  EXPECT_EQ(ToDiagnosis(back).SerializeAsString(), d.SerializeAsString());
  EXPECT_EQ(back.evidence.size(), 1u);
}

TEST(AlertTest, NoBlastRadiusWithoutAFabricMap) {
  AlertRecord a;
  EXPECT_FALSE(ToDiagnosis(a).has_blast_radius());
}

// A runbook command wholly in a [[section]] whose label the culprit lacks is not shown; the
// others are, with a missing label as a blank to fill in.
TEST(EnricherTest, CommandsOfAbsentSectionsAreLeftOut) {
  const std::string dir = ::testing::TempDir();
  const std::string runbook = dir + "/enricher-runbook.md";
  {
    std::ofstream out(runbook);
    out << "# Flap\n\n```sh\n[[perfquery -x -G {{guid}} {{interface}}]]\n"
           "ssh {{host}} cat /sys/class/infiniband/{{device}}/ports/1/state\n```\n";
  }
  Playbook pb;
  pb.name = "flap";
  pb.runbook = runbook;
  SeriesStore store(SeriesStore::Options{.capacity = 4});
  const Enricher enricher({&pb}, store, nullptr, 30);
  Candidate nic;
  nic.key = "k";
  nic.labels = {{"device", "mlx5_1"}, {"host", "gpu-node-002"}};
  AlertRecord a;
  enricher.Start(pb, nic, 1, a);
  ASSERT_EQ(a.commands.size(), 1u);
  EXPECT_EQ(a.commands[0], "ssh gpu-node-002 cat /sys/class/infiniband/mlx5_1/ports/1/state");
  Candidate port;
  port.key = "p";
  port.labels = {{"guid", "0x0000000000000a00"}, {"interface", "33"}, {"switch", "ib-leaf-0"}};
  AlertRecord b;
  enricher.Start(pb, port, 1, b);
  ASSERT_EQ(b.commands.size(), 2u);
  EXPECT_EQ(b.commands[0], "perfquery -x -G 0x0000000000000a00 33");
  EXPECT_EQ(b.commands[1], "ssh <host> cat /sys/class/infiniband/<device>/ports/1/state");
}

}  // namespace engine_parts_test
}  // namespace railwatch
