// Capabilities, ONCE and POLL subscriptions, and credentials as metadata.
#include "fake_gnmi_target.h"
#include "gnmi/client.h"
#include "gnmi_test_util.h"
#include "gtest/gtest.h"

namespace railwatch::testing {
namespace oneshot_test {

::gnmi::Notification Snapshot(uint64_t in_octets) {
  ::gnmi::Notification n;
  n.set_timestamp(1700000000000000000);
  for (const char* leaf : {"in-octets", "out-octets"}) {
    ::gnmi::Update& u = *n.add_update();
    *u.mutable_path() = *ParseGnmiPath(
        std::string("/interfaces/interface[name=Ethernet3]/state/counters/") + leaf);
    u.mutable_val()->set_uint_val(in_octets);
  }
  return n;
}

::gnmi::SubscriptionList CountersList() {
  ::gnmi::SubscriptionList list;
  *list.add_subscription()->mutable_path() =
      *ParseGnmiPath("/interfaces/interface[name=*]/state/counters");
  return list;
}

class OneShotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fake_.Start().ok());
    fake_.SetSnapshot({Snapshot(11)});
    target_ = TestTarget("leaf-r5", fake_.address());
  }
  FakeGnmiTarget fake_{{}};
  GnmiTargetConfig target_;
};

TEST_F(OneShotTest, OnceCollectsUntilSyncResponse) {
  auto notifications = GnmiSubscribeOnce(target_, CountersList(), absl::Seconds(20));
  ASSERT_TRUE(notifications.ok()) << notifications.status();
  ASSERT_EQ(notifications->size(), 1u);
  EXPECT_EQ((*notifications)[0].update_size(), 2);
  EXPECT_EQ((*notifications)[0].update(0).val().uint_val(), 11u);
  EXPECT_EQ(fake_.last_request().subscribe().mode(), ::gnmi::SubscriptionList::ONCE);
}

TEST_F(OneShotTest, PollAsksAgainEachTime) {
  auto session = GnmiPollSession::Open(target_, CountersList(), absl::Seconds(20));
  ASSERT_TRUE(session.ok()) << session.status();
  auto first = (*session)->Poll();
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(first->size(), 1u);
  EXPECT_EQ((*first)[0].update(0).val().uint_val(), 11u);
  fake_.SetSnapshot({Snapshot(12)});
  auto second = (*session)->Poll();
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_EQ(second->size(), 1u);
  EXPECT_EQ((*second)[0].update(0).val().uint_val(), 12u);
  EXPECT_EQ(fake_.polls(), 2);
  EXPECT_EQ(fake_.last_request().subscribe().mode(), ::gnmi::SubscriptionList::POLL);
}

TEST_F(OneShotTest, CapabilitiesAndCredentialsAsMetadata) {
  target_.username = "admin";
  target_.password = "s3cret-pw";
  auto caps = GnmiCapabilities(target_, absl::Seconds(20));
  ASSERT_TRUE(caps.ok()) << caps.status();
  EXPECT_EQ(caps->gnmi_version(), "0.10.0");
  auto md = fake_.last_metadata();
  ASSERT_EQ(md.count("username"), 1u);
  EXPECT_EQ(md.find("username")->second, "admin");
  ASSERT_EQ(md.count("password"), 1u);
  EXPECT_EQ(md.find("password")->second, "s3cret-pw");
}

TEST_F(OneShotTest, StreamingClientSendsCredentials) {
  target_.username = "netops";
  target_.password = "pw-2";
  GnmiSwitchCollector::Options options;
  options.targets = {target_};
  options.channel = FastChannel();
  auto collector = GnmiSwitchCollector::Create(std::move(options), ShippedProfiles());
  ASSERT_TRUE(collector.ok()) << collector.status();
  (*collector)->Start();
  ASSERT_TRUE(fake_.WaitForStreams(1, absl::Seconds(20)));
  auto md = fake_.last_metadata();
  ASSERT_EQ(md.count("username"), 1u);
  EXPECT_EQ(md.find("username")->second, "netops");
  EXPECT_EQ(md.find("password")->second, "pw-2");
}

TEST_F(OneShotTest, UnreachableTargetIsAnErrorNotAHang) {
  GnmiTargetConfig gone = target_;
  fake_.Stop();
  auto notifications = GnmiSubscribeOnce(gone, CountersList(), absl::Seconds(2));
  EXPECT_FALSE(notifications.ok());
}

}  // namespace
}  // namespace railwatch::testing
