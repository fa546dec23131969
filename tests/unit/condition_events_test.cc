// The condition language: events (count_over_time) and topology (topology(), peer(), peers).
#include "engine/condition.h"

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "store/event_store.h"
#include "store/series_store.h"
#include "topology/fabric_map.h"
#include "topology/topology.h"
#include "unit/condition_test_util.h"

namespace railwatch {
namespace condition_events_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

class ConditionEventsTest : public ConditionEvalTest {
 protected:
  void Event(std::string kind, int64_t t_sec, Labels labels, std::string raw = "") {
    StoredEvent e;
    e.kind = std::move(kind);
    e.time_unix_nano = t_sec * kSec;
    e.labels = std::move(labels);
    e.raw = std::move(raw);
    events_.Append(std::move(e));
  }
};

TEST_F(ConditionEventsTest, CountOverTimeGroupsByKindAndLabels) {
  for (int i = 0; i < 12; ++i) {
    Event("nccl.ib_completion_error", 1000 + i, {{"host", "h1"}},
          "NET/IB : Got completion with error 12 #" + std::to_string(i));
  }
  Event("nccl.ib_completion_error", 1005, {{"host", "h2"}}, "h2 line");
  Event("nccl.call_failed", 1006, {{"host", "h1"}}, "call failed");
  Event("pytorch.watchdog_timeout", 1007, {{"host", "h2"}}, "watchdog");
  Event("nccl.ib_completion_error", 10, {{"host", "h3"}}, "too old");

  std::vector<VectorElement> out =
      Eval("count_over_time(events{kind=\"nccl.ib_completion_error\"}[5m]) > 0", 1020);
  ASSERT_EQ(out.size(), 2u);
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return Get(a, "host") < Get(b, "host"); });
  EXPECT_EQ(Str(out[0].labels), R"(host="h1",kind="nccl.ib_completion_error")");
  EXPECT_DOUBLE_EQ(out[0].value, 12);
  // The newest eight, oldest of them first, with their raw lines.
  ASSERT_EQ(out[0].event_evidence.size(), 8u);
  EXPECT_EQ(out[0].event_evidence.front().raw, "NET/IB : Got completion with error 12 #4");
  EXPECT_EQ(out[0].event_evidence.back().raw, "NET/IB : Got completion with error 12 #11");
  EXPECT_EQ(out[0].event_evidence.back().kind, "nccl.ib_completion_error");
  EXPECT_EQ(out[0].event_evidence.back().time_unix_nano, 1011 * kSec);
  EXPECT_TRUE(out[0].evidence.empty());

  // A family by regex, a label matcher, and `in`.
  EXPECT_THAT(Values(Eval("count_over_time(events{kind=~\"nccl\\..*\",host=\"h1\"}[5m])", 1020),
                     "kind"),
              ElementsAre("nccl.call_failed=1", "nccl.ib_completion_error=12"));
  EXPECT_THAT(Values(Eval("sum by (host) (count_over_time(events{kind in "
                          "(\"nccl.ib_completion_error\", \"pytorch.watchdog_timeout\")}[5m]))",
                          1020),
                     "host"),
              ElementsAre("h1=12", "h2=2"));
  // A bare family string is a plain kind here: nothing is called "nccl.".
  EXPECT_TRUE(Eval("count_over_time(events{kind=\"nccl.\"}[5m])", 1020).empty());
  // The window counts: h3's one event is at t=10.
  EXPECT_THAT(Values(Eval("count_over_time(events{host=\"h3\"}[2m])", 1020), "host"),
              ElementsAre());
  EXPECT_THAT(Values(Eval("count_over_time(events{host=\"h3\"}[2m])", 100), "host"),
              ElementsAre("h3=1"));
  // Event evidence survives aggregation and "and".
  std::vector<VectorElement> joined =
      Eval("sum by (host) (count_over_time(events{kind=\"pytorch.watchdog_timeout\"}[5m])) and "
           "on(host) count_over_time(events{kind=\"nccl.ib_completion_error\"}[5m])",
           1020);
  ASSERT_EQ(joined.size(), 1u);
  EXPECT_EQ(Get(joined[0], "host"), "h2");
  ASSERT_EQ(joined[0].event_evidence.size(), 2u);
  EXPECT_EQ(joined[0].event_evidence[0].raw, "h2 line");
  EXPECT_EQ(joined[0].event_evidence[1].raw, "watchdog");
}

TEST(ConditionKeys, KeysThatComeAndGoDoNotPileUpOrGetConfused) {
  // Each tick brings 100 new pids. The left aggregation, keyed by pid, starts its keys over
  // now and then (it would otherwise keep every pid ever seen); the "unless" above it, which
  // also sees 5,000 pids that never change, does not start over as often, and must not take
  // the aggregation's new key numbers for the old ones.
  SeriesStore store(SeriesStore::Options{.capacity = 4});
  EventStore events(EventStore::Options{.capacity = 12'000});
  auto event = [&](const char* kind, int t, int pid) {
    StoredEvent e;
    e.kind = kind;
    e.time_unix_nano = t * kSec;
    e.labels = {{"pid", std::to_string(pid)}};
    events.Append(std::move(e));
  };
  auto cond = MustParse(
      "count by (pid) (count_over_time(events{kind=\"a\"}[500ms]))"
      " unless on(pid) count by (pid) (count_over_time(events{kind=\"b\"}[500ms]))");
  for (int t = 1; t <= 100; ++t) {
    for (int p = t * 100; p < t * 100 + 100; ++p) {
      event("a", t, p);
      if (p % 2 == 0) event("b", t, p);
    }
    for (int p = 1'000'000; p < 1'005'000; ++p) event("b", t, p);
    std::vector<VectorElement> out = cond->Evaluate(EvalContext{store, &events, nullptr, t * kSec});
    ASSERT_EQ(out.size(), 50u) << "tick " << t;
    for (const VectorElement& e : out) {
      const int pid = std::stoi(Get(e, "pid"));
      ASSERT_EQ(pid % 2, 1) << "tick " << t;
      ASSERT_GE(pid, t * 100) << "tick " << t;
      ASSERT_LT(pid, t * 100 + 100) << "tick " << t;
    }
  }
}

TEST_F(ConditionEventsTest, NoEventStoreYieldsNothing) {
  Event("nccl.call_failed", 1, {{"host", "h1"}});
  auto c = MustParse("count_over_time(events[5m])");
  EXPECT_EQ(c->Evaluate(EvalContext{store_, &events_, nullptr, 2 * kSec}).size(), 1u);
  EXPECT_TRUE(c->Evaluate(EvalContext{store_, nullptr, nullptr, 2 * kSec}).empty());
}

// ---- Topology ----------------------------------------------------------------------------

// Two hosts with a NIC each on rail 0, cabled to leaf-r0.
constexpr char kTopology[] = R"(
switches:
  - name: leaf-r0
    role: leaf
    links:
      - {port: Ethernet64, peer: spine-0, peer_port: Ethernet0}
  - {name: spine-0, role: spine}
hosts:
  - name: gpu-node-001
    nics:
      - {device: mlx5_0, netdev: enp12s0np0, rail: 0, switch: leaf-r0, port: Ethernet0}
  - name: gpu-node-002
    nics:
      - {device: mlx5_0, netdev: enp12s0np0, rail: 0, switch: leaf-r0, port: Ethernet4}
jobs:
  - name: train-a
    hosts: [gpu-node-001, gpu-node-002]
)";

class ConditionTopologyTest : public ConditionEvalTest {
 protected:
  void SetUp() override {
    absl::StatusOr<Topology> t = Topology::LoadString(kTopology, "fabric.yaml");
    ASSERT_TRUE(t.ok()) << t.status();
    topology_ = std::make_shared<const Topology>(*std::move(t));
    jobs_.SetStatic(topology_->jobs());
    fabric_ = std::make_unique<FabricMap>(topology_, &jobs_);
  }
  std::shared_ptr<const Topology> topology_;
  JobRegistry jobs_;
};

TEST_F(ConditionTopologyTest, TopologyAddsRailLeafAndJob) {
  Fill(Counter("tx_bytes_total", {{"host", "gpu-node-001"}, {"device", "mlx5_0"}}), 1, 3,
       [](int t) { return t * 100; });
  std::vector<VectorElement> out = Eval("topology(rate(tx_bytes_total[5s]))", 3);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Get(out[0], "rail"), "0");
  EXPECT_EQ(Get(out[0], "leaf"), "leaf-r0");
  EXPECT_EQ(Get(out[0], "job"), "train-a");
  EXPECT_EQ(Get(out[0], "node"), "gpu-node-001/mlx5_0");
  EXPECT_EQ(out[0].evidence.size(), 1u);
  EXPECT_THAT(Values(Eval("sum by (leaf) (topology(rate(tx_bytes_total[5s])))", 3), "leaf"),
              ElementsAre("leaf-r0=100"));
  // Without a fabric map: elements pass through unchanged.
  fabric_.reset();
  std::vector<VectorElement> bare = Eval("topology(rate(tx_bytes_total[5s]))", 3);
  ASSERT_EQ(bare.size(), 1u);
  EXPECT_EQ(Str(bare[0].labels), R"(device="mlx5_0",host="gpu-node-001")");
}

TEST_F(ConditionTopologyTest, TopologyLabelsFollowTheJobsAsTheyChange) {
  Fill(Counter("tx_bytes_total", {{"host", "gpu-node-001"}, {"device", "mlx5_0"}}), 1, 3,
       [](int t) { return t * 100; });
  Fill(Counter("tx_bytes_total", {{"host", "gpu-node-002"}, {"device", "mlx5_0"}}), 1, 3,
       [](int t) { return t * 300; });
  auto cond = MustParse("sum by (job) (topology(rate(tx_bytes_total[5s])))");
  auto eval = [&] {
    return Values(cond->Evaluate(EvalContext{store_, nullptr, fabric_.get(), 3 * kSec}), "job");
  };
  EXPECT_THAT(eval(), ElementsAre("train-a=400"));
  // gpu-node-002 moves to another job: the same parsed condition groups it there.
  jobs_.SetStatic({TopologyJob{"train-a", {"gpu-node-001"}, 8},
                   TopologyJob{"train-b", {"gpu-node-002"}, 8}});
  EXPECT_THAT(eval(), ElementsAre("train-a=100", "train-b=300"));
}

TEST_F(ConditionTopologyTest, PeerNamesTheNicBehindASwitchPort) {
  // The leaf port facing gpu-node-002 receives pauses at storm rate; the one facing
  // gpu-node-001 at a benign rate; an uplink relays.
  auto port = [&](const std::string& iface, double per_sec) {
    SeriesRef r = Counter("pfc_total", {{"switch", "leaf-r0"}, {"interface", iface},
                                        {"priority", "3"}, {"direction", "rx"}});
    Fill(r, 1, 3, [per_sec](int t) { return per_sec * t; });
  };
  port("Ethernet0", 2);
  port("Ethernet4", 20000);
  port("Ethernet64", 3000);
  std::vector<VectorElement> out = Eval("peer(rate(pfc_total{switch!=\"\"}[2s]) > 1000)", 3);
  // The NIC (it has a host) first.
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return FindLabel(a.labels, "host") != nullptr &&
                                                      FindLabel(b.labels, "host") == nullptr; });
  ASSERT_EQ(out.size(), 2u);
  // The NIC: what its leaf port received, it sent.
  EXPECT_EQ(Get(out[0], "host"), "gpu-node-002");
  EXPECT_EQ(Get(out[0], "device"), "mlx5_0");
  EXPECT_EQ(Get(out[0], "interface"), "enp12s0np0");
  EXPECT_EQ(Get(out[0], "direction"), "tx");
  EXPECT_EQ(Get(out[0], "priority"), "3");
  EXPECT_DOUBLE_EQ(out[0].value, 20000);
  // The uplink's far end is the spine.
  EXPECT_EQ(Get(out[1], "switch"), "spine-0");
  EXPECT_EQ(Get(out[1], "interface"), "Ethernet0");
  // A port the topology does not know has no peer.
  port("Ethernet99", 50000);
  EXPECT_EQ(Eval("peer(rate(pfc_total[2s]) > 1000)", 3).size(), 2u);
  // Without a fabric map, peer() yields nothing.
  fabric_.reset();
  EXPECT_TRUE(Eval("peer(rate(pfc_total[2s]) > 1000)", 3).empty());
}

TEST_F(ConditionTopologyTest, PfcSourceIsTheNicThatSendsWithoutReceiving) {
  // Host view: gpu-node-002 sends pauses and receives none (the source); gpu-node-001 sends
  // as many but also receives them (a relay).
  auto nic = [&](const std::string& host, const std::string& dir, double per_sec) {
    SeriesRef r = Counter("pfc_total", {{"host", host}, {"interface", "enp12s0np0"},
                                        {"priority", "3"}, {"direction", dir}});
    Fill(r, 1, 3, [per_sec](int t) { return per_sec * t; });
  };
  nic("gpu-node-001", "tx", 20000);
  nic("gpu-node-001", "rx", 20000);
  nic("gpu-node-002", "tx", 20000);
  nic("gpu-node-002", "rx", 2);
  std::vector<VectorElement> out =
      Eval("topology(rate(pfc_total{host!=\"\",direction=\"tx\"}[2s]) > 1000)\n"
           "  unless on(node) topology(rate(pfc_total{direction=\"rx\"}[2s]) > 1000)",
           3);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(Get(out[0], "node"), "gpu-node-002/mlx5_0");
  EXPECT_EQ(Get(out[0], "leaf"), "leaf-r0");
}

}  // namespace
}  // namespace railwatch
