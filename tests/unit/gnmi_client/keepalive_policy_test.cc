// The switch agent's keepalive pings against a gNMI target with gRPC's default keepalive
// enforcement (issue 19 item 6). The fake target is a grpc::Server with no keepalive settings
// of its own: C-core's default policy, as sonic-gnmi's (grpc-go) is: a ping less than 5 minutes
// after the previous one, with no data sent in between, is a strike, and the third strike is
// answered with GOAWAY ENHANCE_YOUR_CALM "too_many_pings".
//
// SONiC's profile subscribes to two gNMI targets: COUNTERS_DB counters (SAMPLE, data every
// interval) and OC-YANG oper-status (on change: nothing after the first answer). Each stream
// on a connection of its own pinged a silent connection every keepalive interval, and the
// target hung up on it about three intervals after subscribing; on one connection per switch
// the counters' data keeps every ping within the policy. The test runs at 1 s intervals (ten
// times faster than production) against the unscaled policy, so it is the stricter case.
#include <memory>

#include "absl/time/clock.h"
#include "fake_gnmi_target.h"
#include "freezing_proxy.h"
#include "gnmi_test_util.h"
#include "gtest/gtest.h"

namespace railwatch::testing {
namespace keepalive_policy_test {

::gnmi::SubscribeRequest Request(std::initializer_list<std::pair<::gnmi::SubscriptionMode, int>>
                                     subscriptions) {
  ::gnmi::SubscribeRequest r;
  for (auto [mode, seconds] : subscriptions) {
    ::gnmi::Subscription& s = *r.mutable_subscribe()->add_subscription();
    s.set_mode(mode);
    const uint64_t ns = static_cast<uint64_t>(seconds) * 1'000'000'000;
    if (mode == ::gnmi::SAMPLE) s.set_sample_interval(ns);
    if (mode == ::gnmi::ON_CHANGE) s.set_heartbeat_interval(ns);
  }
  return r;
}

TEST(GnmiKeepaliveTime, PingsNoFasterThanHalfTheDataIntervalAndEveryFiveMinutesWithoutData) {
  const absl::Duration ten = absl::Seconds(10);
  // SONiC: counters every 10 s on one stream, oper-status on change on the other.
  EXPECT_EQ(GnmiKeepaliveTime({Request({{::gnmi::SAMPLE, 10}}), Request({{::gnmi::ON_CHANGE, 0}})},
                              ten),
            ten);
  EXPECT_EQ(GnmiKeepaliveTime({Request({{::gnmi::SAMPLE, 1}})}, ten), ten);
  // Counters every minute: a ping every 30 s (at most one strike between two answers).
  EXPECT_EQ(GnmiKeepaliveTime({Request({{::gnmi::SAMPLE, 60}, {::gnmi::SAMPLE, 90}})}, ten),
            absl::Seconds(30));
  // On change only: the target may stay silent for hours.
  EXPECT_EQ(GnmiKeepaliveTime({Request({{::gnmi::ON_CHANGE, 0}})}, ten),
            absl::Minutes(5) + absl::Seconds(10));
  // ... unless it promises a heartbeat.
  EXPECT_EQ(GnmiKeepaliveTime({Request({{::gnmi::ON_CHANGE, 20}})}, ten), ten);
}

TEST(GnmiKeepalivePolicy, ADefaultPolicyTargetKeepsEverySonicStreamAndAFrozenOneIsNoticed) {
  FakeGnmiTarget target({});  // grpc::ServerBuilder's defaults: the policy above
  ASSERT_TRUE(target.Start().ok());
  FreezingProxy path(target.address());
  ASSERT_TRUE(path.Start().ok());

  GnmiSwitchCollector::Options options;
  GnmiTargetConfig sonic = TestTarget("leaf-sonic", path.address());
  sonic.profile = "sonic";
  sonic.sample_interval = absl::Seconds(1);
  options.targets.push_back(sonic);
  options.channel = FastChannel();
  options.channel.keepalive_time = absl::Seconds(1);
  options.channel.keepalive_timeout = absl::Seconds(1);
  auto collector = GnmiSwitchCollector::Create(std::move(options), ShippedProfiles());
  ASSERT_TRUE(collector.ok()) << collector.status();
  (*collector)->Start();
  // COUNTERS_DB (sampled), OC-YANG and APPL_DB (on change: silent after their first answer).
  ASSERT_TRUE(target.WaitForStreams(3, absl::Seconds(20)));

  // 12 s of counters every second on COUNTERS_DB and nothing on OC-YANG or APPL_DB: without
  // the shared connection, a silent stream's third unanswered ping (about 3 s) drew the GOAWAY.
  PointLog log;
  for (int second = 0; second < 12; ++second) {
    EXPECT_EQ(target.Broadcast(UintUpdate("/COUNTERS/Ethernet0/SAI_PORT_STAT_IF_IN_OCTETS",
                                          static_cast<uint64_t>(second) * 1000,
                                          absl::GetCurrentTimeNanos()),
                               "COUNTERS_DB"),
              1);
    CollectUntil(**collector, log, [] { return false; }, absl::Seconds(1));
  }
  const GnmiSwitchCollector::TargetStats stats = (*collector)->target_stats(0);
  EXPECT_EQ(target.subscribes(), 3) << "a stream was subscribed again: " << stats.client.last_error;
  EXPECT_EQ(stats.client.errors, 0u) << stats.client.last_error;
  EXPECT_EQ(stats.client.reconnects, 0u);
  EXPECT_TRUE(stats.client.connected);

  // A target that stops answering (a hung switch): noticed within keepalive time + timeout
  // (2 s here; 20 s with the production 10 s + 10 s).
  path.Freeze();
  const absl::Time frozen = absl::Now();
  ASSERT_TRUE(CollectUntil(
      **collector, log, [&] { return (*collector)->target_stats(0).client.errors > 0; },
      absl::Seconds(20)));
  const absl::Duration noticed = absl::Now() - frozen;
  printf("FIGURE gnmi_frozen_target_noticed_ms %.0f ms (keepalive 1 s + 1 s)\n",
         absl::ToDoubleMilliseconds(noticed));
  EXPECT_LT(noticed, absl::Seconds(5));
  (*collector)->Stop();
}

}  // namespace keepalive_policy_test
}  // namespace railwatch::testing
