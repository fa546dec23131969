// ListAgents' health: ok, a failing collector, lag, silence, a disconnected gNMI target and a
// disconnected agent, from the registry and the series agents send about themselves.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "query_test_server.h"

namespace railwatch::testing {
namespace query_agents_test {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

class QueryAgentsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    v1::Hello hello;
    hello.set_agent_id("gpu-node-001");
    hello.set_role(v1::AGENT_ROLE_HOST);
    hello.set_hostname("gpu-node-001");
    hello.add_collectors("rdma_sysfs");
    hello.add_collectors("ethtool");
    server_.agents.Connected(hello, "ipv4:127.0.0.1:5555", server_.clock.NowNanos());
    for (const char* c : {"rdma_sysfs", "ethtool"}) {
      success_.push_back(server_.Gauge("railwatch_collector_success",
                                       {{"collector", c}, {"host", "gpu-node-001"}}));
    }
  }

  // One agent cycle `interval` after the last: both collectors report, a batch is stored
  // whose newest point is `lag` old.
  void Cycle(double rdma_ok, double ethtool_ok, absl::Duration interval = absl::Seconds(1),
             absl::Duration lag = absl::ZeroDuration()) {
    server_.clock.Advance(interval);
    const int64_t now = server_.clock.NowNanos();
    const int64_t sampled = now - absl::ToInt64Nanoseconds(lag);
    server_.store.Append(success_[0], sampled, rdma_ok);
    server_.store.Append(success_[1], sampled, ethtool_ok);
    server_.agents.BatchStored("gpu-node-001", ++sequence_, 2, 2, sampled, now);
  }

  v1::AgentInfo Agent(const std::string& id) {
    v1::ListAgentsResponse r;
    grpc::ClientContext ctx;
    EXPECT_TRUE(server_.stub().ListAgents(&ctx, {}, &r).ok());
    for (const v1::AgentInfo& a : r.agents()) {
      if (a.agent_id() == id) return a;
    }
    ADD_FAILURE() << "no agent " << id;
    return {};
  }

  QueryTestServer server_;
  std::vector<SeriesRef> success_;
  uint64_t sequence_ = 0;
};

TEST_F(QueryAgentsTest, HealthyAgentIsOk) {
  Cycle(1, 1);
  Cycle(1, 1);
  v1::AgentInfo a = Agent("gpu-node-001");
  EXPECT_TRUE(a.connected());
  EXPECT_EQ(a.health(), "ok");
  EXPECT_THAT(a.problems(), IsEmpty());
  EXPECT_THAT(a.failing_collectors(), IsEmpty());
  EXPECT_EQ(a.last_sequence(), 2u);
}

TEST_F(QueryAgentsTest, FailingCollectorDegrades) {
  Cycle(1, 1);
  Cycle(1, 0);
  v1::AgentInfo a = Agent("gpu-node-001");
  EXPECT_EQ(a.health(), "degraded");
  EXPECT_THAT(a.failing_collectors(), ElementsAre("ethtool"));
  EXPECT_THAT(a.problems(), ElementsAre("collector ethtool failing"));
  Cycle(1, 1);
  EXPECT_EQ(Agent("gpu-node-001").health(), "ok") << "it recovers with the next report";
}

TEST_F(QueryAgentsTest, LagAboveFiveSecondsDegrades) {
  Cycle(1, 1);
  Cycle(1, 1, absl::Seconds(1), absl::Seconds(12));
  v1::AgentInfo a = Agent("gpu-node-001");
  EXPECT_EQ(a.health(), "degraded");
  EXPECT_THAT(a.problems(), ElementsAre("lag 12.0s"));
}

TEST_F(QueryAgentsTest, SilentAfterThreeIntervalsOfNothing) {
  // A 4 s collection interval, read from the agent's own reports: silent after 12 s.
  Cycle(1, 1, absl::Seconds(4));
  Cycle(1, 1, absl::Seconds(4));
  server_.clock.Advance(absl::Seconds(11));
  EXPECT_EQ(Agent("gpu-node-001").health(), "ok");
  server_.clock.Advance(absl::Seconds(2));
  v1::AgentInfo a = Agent("gpu-node-001");
  EXPECT_EQ(a.health(), "silent");
  EXPECT_THAT(a.problems(), ElementsAre("nothing received for 13s"));
}

TEST_F(QueryAgentsTest, UnknownIntervalMeansThirtySeconds) {
  // Only one report: the interval is not known, 10 s is assumed.
  Cycle(1, 1);
  server_.clock.Advance(absl::Seconds(29));
  EXPECT_EQ(Agent("gpu-node-001").health(), "ok");
  server_.clock.Advance(absl::Seconds(2));
  EXPECT_EQ(Agent("gpu-node-001").health(), "silent");
}

TEST_F(QueryAgentsTest, DisconnectedAgent) {
  Cycle(1, 1);
  server_.agents.Disconnected("gpu-node-001", 0, server_.clock.NowNanos());
  v1::AgentInfo a = Agent("gpu-node-001");
  EXPECT_FALSE(a.connected());
  EXPECT_EQ(a.health(), "disconnected");
  ASSERT_EQ(a.problems_size(), 1);
  EXPECT_THAT(a.problems(0), ::testing::StartsWith("disconnected since 2023-11-14T22:13:21"));
}

TEST_F(QueryAgentsTest, SwitchAgentWithADisconnectedTarget) {
  v1::Hello hello;
  hello.set_agent_id("switch-agent");
  hello.set_role(v1::AGENT_ROLE_SWITCH);
  hello.set_hostname("mgmt-1");
  hello.add_collectors("gnmi");
  server_.agents.Connected(hello, "ipv4:127.0.0.1:6666", server_.clock.NowNanos());
  const SeriesRef ok = server_.Gauge("railwatch_collector_success",
                                     {{"agent", "switch-agent"}, {"collector", "gnmi"}});
  SeriesRef up[2];
  const char* targets[2] = {"leaf-1", "leaf-2"};
  for (int i = 0; i < 2; ++i) {
    up[i] = server_.Gauge("railwatch_gnmi_target_connected",
                          {{"agent", "switch-agent"}, {"target", targets[i]}});
  }
  for (int cycle = 0; cycle < 2; ++cycle) {
    server_.clock.Advance(absl::Seconds(1));
    const int64_t now = server_.clock.NowNanos();
    server_.store.Append(ok, now, 1);
    server_.store.Append(up[0], now, 1);
    server_.store.Append(up[1], now, cycle == 0 ? 1 : 0);
    server_.agents.BatchStored("switch-agent", cycle + 1, 3, 3, now, now);
  }
  v1::AgentInfo a = Agent("switch-agent");
  EXPECT_EQ(a.health(), "degraded");
  EXPECT_THAT(a.problems(), ElementsAre("gNMI target leaf-2 disconnected"));
  ASSERT_EQ(a.targets_size(), 2);
  EXPECT_TRUE(a.targets(0).connected());
  EXPECT_FALSE(a.targets(1).connected());
}

}  // namespace
}  // namespace railwatch::testing
