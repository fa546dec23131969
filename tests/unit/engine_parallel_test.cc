// Conditions evaluated on several threads give exactly the diagnoses and transitions of one
// thread (causes and symptoms included); the worker pool runs each item once; a poke's
// hold-off grows with the cost of the last evaluation.
#include <algorithm>
#include <fstream>
#include <memory>

#include "absl/strings/str_join.h"
#include "engine/engine.h"
#include "engine/worker_pool.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/ttar.h"
#include "unit/engine_test_topology.h"
#include "unit/engine_test_util.h"

namespace railwatch {
namespace engine_parallel_test {

// Every transition, in order, as text that holds everything a listener sees.
class Recorder final : public DiagnosisListener {
 public:
  void OnFiring(const AlertRecord& a) override { Add("firing", ToDiagnosis(a)); }
  void OnResolved(const AlertRecord& a) override { Add("resolved", ToDiagnosis(a)); }
  void OnPending(const AlertRecord& a) override { Add("pending", ToDiagnosis(a)); }
  void OnPendingCleared(const AlertRecord& a) override { Add("cleared", ToDiagnosis(a)); }
  std::vector<std::string> log;

 private:
  void Add(const char* what, const v1::Diagnosis& d) {
    log.push_back(std::string(what) + " " + d.DebugString());
  }
};

using testing_topology::kTwoLeaves;

// A cause that explains two symptom playbooks (one of them explained in turn by nothing), a
// playbook that waits (`for`), one that keeps firing, one on events, and a few independent
// ones, so that more playbooks than threads run at once.
constexpr char kRules[] = R"y(
- playbook: storm
  desc: a NIC sends pauses
  runbook: https://example/runbook
  condition: rate(fabric_pfc_pause_frames_total{host!="",direction="tx"}[5s]) > 1000
  culprit: [host, device, netdev, priority, leaf, rail]
  group_by: [node]
  blast_radius: leaf
  explains:
    - {playbooks: [relay, slow], relation: fabric, hops: 3}
- playbook: relay
  desc: a switch port sends pauses
  runbook: https://example/runbook
  condition: rate(fabric_pfc_pause_frames_total{switch!="",direction="tx"}[5s]) > 500
  culprit: [switch, interface]
- playbook: slow
  desc: a NIC sends little
  runbook: https://example/runbook
  condition: rate(fabric_rdma_port_transmit_bytes_total[5s]) < 1000
  culprit: [host, device]
  for: 2s
- playbook: busy
  desc: a NIC sends a lot
  runbook: https://example/runbook
  condition: sum by (host) (rate(fabric_rdma_port_transmit_bytes_total[5s])) > 2000
  culprit: [host]
  keep_firing_for: 3s
- playbook: flap
  desc: carrier changes
  runbook: https://example/runbook
  condition: count_over_time(events{kind="link.carrier_down"}[10s]) >= 1
  culprit: [host, interface]
- playbook: any_pause
  desc: any pause
  runbook: https://example/runbook
  condition: increase(fabric_pfc_pause_frames_total[10s]) > 0
  culprit: [host, switch, interface]
  for: 3s
- playbook: outlier
  desc: one NIC against its peers
  runbook: https://example/runbook
  condition: peer_ratio(rate(fabric_rdma_port_transmit_bytes_total[5s]), by (rail)) < 0.5
  culprit: [host, device]
)y";

// One engine with its own stores, fed the same inputs as its twin.
struct Rig {
  Rig(int threads, const std::string& rules_file, const FabricMap* fabric, const Clock& clock) {
    LoadResult r = LoadPlaybooks({rules_file});
    for (const LoadProblem& p : r.problems) ADD_FAILURE() << p.ToString();
    Engine::Options o;
    o.threads = threads;
    engine = std::make_unique<Engine>(o, std::move(r.playbooks), store, clock,
                                      Engine::Sources{&events, fabric});
    engine->AddListener(&recorder);
  }
  SeriesStore store{SeriesStore::Options{.capacity = 60}};
  EventStore events{EventStore::Options{}};
  Recorder recorder;
  std::unique_ptr<Engine> engine;
};

// Every diagnosis the engine holds, sorted: List() orders by start time only, and ties come
// out in hash-map order, which differs between two engines.
std::vector<std::string> Listed(const Engine& e) {
  std::vector<std::string> out;
  for (const v1::Diagnosis& d : Diagnoses(e)) out.push_back(d.DebugString());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(EngineParallelTest, SameTransitionsAndDiagnosesOnFourThreadsAsOnOne) {
  testing::TempDir dir;
  const std::string rules = dir.path() + "/rules.yaml";
  std::ofstream(rules) << kRules;
  absl::StatusOr<Topology> t = Topology::LoadString(kTwoLeaves, "topo.yaml");
  ASSERT_TRUE(t.ok()) << t.status();
  auto topology = std::make_shared<const Topology>(std::move(*t));
  JobRegistry jobs;
  jobs.SetStatic(topology->jobs());
  FabricMap fabric(topology, &jobs);
  FakeClock clock;
  Rig one(1, rules, &fabric, clock), four(4, rules, &fabric, clock);
  ASSERT_EQ(one.engine->threads(), 1);
  ASSERT_EQ(four.engine->threads(), 4);

  struct Input {
    std::string name;
    Labels labels;
  };
  const std::vector<Input> inputs = {
      {"fabric_pfc_pause_frames_total",
       {{"direction", "tx"}, {"host", "h1"}, {"interface", "eth0"}, {"priority", "3"}}},
      {"fabric_pfc_pause_frames_total",
       {{"direction", "tx"}, {"interface", "up0"}, {"priority", "3"}, {"switch", "leaf-a"}}},
      {"fabric_pfc_pause_frames_total",
       {{"direction", "tx"}, {"interface", "p2"}, {"priority", "3"}, {"switch", "leaf-a"}}},
      {"fabric_pfc_pause_frames_total",
       {{"direction", "tx"}, {"interface", "p1"}, {"priority", "3"}, {"switch", "spine-0"}}},
      {"fabric_rdma_port_transmit_bytes_total",
       {{"device", "mlx5_0"}, {"host", "h1"}, {"port", "1"}}},
      {"fabric_rdma_port_transmit_bytes_total",
       {{"device", "mlx5_0"}, {"host", "h2"}, {"port", "1"}}},
      {"fabric_rdma_port_transmit_bytes_total",
       {{"device", "mlx5_0"}, {"host", "h3"}, {"port", "1"}}},
  };
  std::vector<SeriesRef> refs_one, refs_four;
  for (const Input& in : inputs) {
    refs_one.push_back(one.store.Intern(in.name, in.labels, MetricKind::kCounter));
    refs_four.push_back(four.store.Intern(in.name, in.labels, MetricKind::kCounter));
  }
  // Per second: quiet, then h1 storms (relays and h2's slow NIC are its symptoms), a carrier
  // flap, the storm ends, the relays go on, h3 slows down, everything calms down.
  std::vector<double> value(inputs.size(), 0);
  for (int s = 0; s < 40; ++s) {
    const bool storm = s >= 6 && s < 16, relays = s >= 8 && s < 24;
    value[0] += storm ? 20000 : 0;
    for (size_t i = 1; i <= 3; ++i) value[i] += relays ? 3000 : 0;
    value[4] += 3000;
    value[5] += storm ? 10 : 3000;
    value[6] += (s >= 20 && s < 30) ? 100 : 3000;
    clock.Advance(absl::Seconds(1));
    for (size_t i = 0; i < inputs.size(); ++i) {
      one.store.Append(refs_one[i], clock.NowNanos(), value[i]);
      four.store.Append(refs_four[i], clock.NowNanos(), value[i]);
    }
    if (s == 10 || s == 11) {
      for (Rig* rig : {&one, &four}) {
        StoredEvent e;
        e.kind = "link.carrier_down";
        e.time_unix_nano = clock.NowNanos();
        e.labels = {{"host", "h3"}, {"interface", "eth0"}};
        rig->events.Append(std::move(e));
      }
    }
    one.engine->EvaluateOnce();
    four.engine->EvaluateOnce();
    ASSERT_EQ(one.recorder.log, four.recorder.log) << "second " << s;
    ASSERT_EQ(Listed(*one.engine), Listed(*four.engine)) << "second " << s;
  }
  // The scenario did what it is meant to: a storm that explained symptoms, and the rest.
  const std::string all = absl::StrJoin(one.recorder.log, "\n");
  EXPECT_THAT(all, ::testing::HasSubstr("explains: \"relay"));
  EXPECT_THAT(all, ::testing::HasSubstr("explains: \"slow"));
  EXPECT_THAT(all, ::testing::HasSubstr("playbook: \"flap\""));
  EXPECT_THAT(all, ::testing::HasSubstr("playbook: \"busy\""));
  EXPECT_THAT(all, ::testing::HasSubstr("playbook: \"outlier\""));
  EXPECT_GT(one.recorder.log.size(), 10u);
}

TEST(WorkerPoolTest, RunsEachItemOnceLoopAfterLoop) {
  for (int threads : {1, 2, 4}) {
    WorkerPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (size_t n : {0u, 1u, 2u, 7u, 100u}) {
      for (int loop = 0; loop < 20; ++loop) {
        std::vector<std::atomic<int>> calls(n);
        pool.ParallelFor(n, [&](size_t i) { calls[i].fetch_add(1); });
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(calls[i].load(), 1) << threads << " " << n;
      }
    }
  }
}

TEST(EnginePokeTest, HoldOffGrowsWithTheLastEvaluationUnlessAnEventCame) {
  Engine::Options o;
  o.min_interval = absl::Milliseconds(50);
  o.poke_hold_factor = 4;
  // A small pod: pokes evaluate as soon as before.
  EXPECT_EQ(Engine::PokeHoldOff(o, absl::Milliseconds(2), false), absl::Milliseconds(50));
  // A large one: series pokes wait four times the last evaluation.
  EXPECT_EQ(Engine::PokeHoldOff(o, absl::Milliseconds(80), false), absl::Milliseconds(320));
  // An event (a carrier flap, an NCCL error) is evaluated promptly whatever the cost.
  EXPECT_EQ(Engine::PokeHoldOff(o, absl::Milliseconds(80), true), absl::Milliseconds(50));
}

}  // namespace engine_parallel_test
}  // namespace railwatch
