// The optics collector's kernel backend against the real kernel, on a veth pair in a network
// namespace each test creates and deletes: generic netlink ETHTOOL_MSG_MODULE_EEPROM_GET and
// ETHTOOL_MSG_FEC_GET (and the SIOCETHTOOL fallback) asked about a netdev that has neither a
// module nor FEC, which the kernel answers "not supported" and the collector counts as no
// module, without an error; the link speed veth reports. Needs root (CI runs as root) and
// iproute2.
#include <memory>

#include "collectors/optics_collector.h"
#include "collectors/optics_kernel.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/recording_emitter.h"
#include "unit/netdev/netns.h"

namespace railwatch {
namespace optics_veth_test {

using ::railwatch::testing::NetnsThread;
using ::railwatch::testing::RecordingEmitter;
using ::railwatch::testing::TestNetns;
using ::testing::HasSubstr;

class OpticsVethTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<TestNetns>> netns = TestNetns::Create();
    ASSERT_TRUE(netns.ok()) << netns.status();
    netns_ = std::move(*netns);
    absl::Status s = netns_->Ip({"link", "add", "rwa", "type", "veth", "peer", "name", "rwb"});
    ASSERT_TRUE(s.ok()) << s;
    for (const char* end : {"rwa", "rwb"}) {
      s = netns_->Ip({"link", "set", end, "up"});
      ASSERT_TRUE(s.ok()) << s;
    }
    absl::StatusOr<std::unique_ptr<NetnsThread>> thread = NetnsThread::Start(netns_->name());
    ASSERT_TRUE(thread.ok()) << thread.status();
    thread_ = std::move(*thread);
  }

  void InNetns(std::function<void()> fn) { thread_->Run(std::move(fn)); }

  std::unique_ptr<TestNetns> netns_;
  std::unique_ptr<NetnsThread> thread_;
};

TEST_F(OpticsVethTest, KernelAnswersNoModuleAndNoFec) {
  InNetns([&] {
    absl::StatusOr<std::unique_ptr<KernelModuleBackend>> backend = KernelModuleBackend::Create();
    ASSERT_TRUE(backend.ok()) << backend.status();
    EXPECT_TRUE((*backend)->has_netlink());
    absl::StatusOr<optics::ModuleEeprom> module = (*backend)->ReadModule("rwa");
    EXPECT_TRUE(absl::IsNotFound(module.status())) << module.status();
    absl::StatusOr<FecStats> fec = (*backend)->ReadFec("rwa");
    EXPECT_TRUE(absl::IsNotFound(fec.status())) << fec.status();
    EXPECT_THAT(fec.status().message(), HasSubstr("ETHTOOL_MSG_FEC_GET"));
    EXPECT_EQ((*backend)->Driver("rwa"), "veth");
    // A netdev that is not there: the kernel's ENODEV, the same "nothing here".
    EXPECT_TRUE(absl::IsNotFound((*backend)->ReadModule("rwnosuch").status()));
    EXPECT_TRUE(absl::IsNotFound((*backend)->ReadFec("rwnosuch").status()));
    EXPECT_EQ((*backend)->Driver("rwnosuch"), "");
  });
}

TEST_F(OpticsVethTest, CollectorCountsVethsAsAbsentWithoutErrors) {
  InNetns([&] {
    absl::StatusOr<std::unique_ptr<KernelModuleBackend>> backend = KernelModuleBackend::Create();
    ASSERT_TRUE(backend.ok()) << backend.status();
    // veths have no device behind them: the pattern selects them.
    absl::StatusOr<NetdevSelector> selector = NetdevSelector::Create({"/sys", "rwa|rwb"});
    ASSERT_TRUE(selector.ok()) << selector.status();
    FakeClock clock;
    OpticsCollector collector(OpticsCollector::Options{}, *std::move(selector), *std::move(backend),
                              clock);
    RecordingEmitter emitter;
    absl::Status status = collector.Collect(emitter);
    ASSERT_TRUE(status.ok()) << status;
    EXPECT_EQ(collector.netdevs(), 2u);
    EXPECT_EQ(collector.modules_absent(), 2u);
    EXPECT_EQ(collector.module_reads(), 0u);
    EXPECT_EQ(collector.read_errors("module"), 0u);
    EXPECT_EQ(collector.read_errors("fec"), 0u);
    EXPECT_EQ(emitter.GetGauge("railwatch_optics_modules_absent"), 2.0);
    for (const std::string& name : emitter.names) {
      EXPECT_FALSE(name.starts_with("fabric_optics_")) << name;
      EXPECT_FALSE(name.starts_with("fabric_netdev_fec_")) << name;
    }
    // veth says 10000 Mb/s while up.
    EXPECT_EQ(emitter.GetGauge("fabric_netdev_speed_bytes_per_second{interface=\"rwa\"}"), 1.25e9);
  });
  // Down, the kernel has no speed to give: the series is not emitted.
  ASSERT_TRUE(netns_->Ip({"link", "set", "rwb", "down"}).ok());
  InNetns([&] {
    absl::StatusOr<NetdevSelector> selector = NetdevSelector::Create({"/sys", "rwb"});
    ASSERT_TRUE(selector.ok()) << selector.status();
    absl::StatusOr<std::unique_ptr<KernelModuleBackend>> backend = KernelModuleBackend::Create();
    ASSERT_TRUE(backend.ok()) << backend.status();
    FakeClock clock;
    OpticsCollector collector(OpticsCollector::Options{}, *std::move(selector), *std::move(backend),
                              clock);
    RecordingEmitter emitter;
    ASSERT_TRUE(collector.Collect(emitter).ok());
    EXPECT_FALSE(emitter.GetGauge("fabric_netdev_speed_bytes_per_second{interface=\"rwb\"}"));
  });
}

}  // namespace optics_veth_test
}  // namespace railwatch
