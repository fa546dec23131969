// The real kernel paths on a veth pair in a network namespace that each test creates and
// deletes: the SIOCETHTOOL reader against `ethtool -S`, counters that move with frames sent
// across the pair, re-discovery when the statistics change shape, and carrier events from the
// netlink monitor for links set down and up. Needs root (CI runs as root), iproute2 and
// ethtool. No frame leaves the namespace: the pair has no route or address anywhere else.
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "collectors/ethtool_collector.h"
#include "collectors/ethtool_dump.h"
#include "collectors/ethtool_ioctl.h"
#include "collectors/link_collector.h"
#include "collectors/netlink_link_monitor.h"
#include "common/text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/recording_emitter.h"
#include "unit/netdev/netns.h"

namespace railwatch {
namespace veth_test {

using ::railwatch::testing::Attribute;
using ::railwatch::testing::NetnsThread;
using ::railwatch::testing::RealtimeNanos;
using ::railwatch::testing::RecordingEmitter;
using ::railwatch::testing::TestNetns;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Conditions are polled against this deadline; nothing asserts on how long they took.
constexpr absl::Duration kDeadline = absl::Seconds(20);

#define ASSERT_OK(expr)                                 \
  do {                                                  \
    const absl::Status _status = (expr);                \
    ASSERT_TRUE(_status.ok()) << #expr ": " << _status; \
  } while (0)
#define EXPECT_OK(expr)                                 \
  do {                                                  \
    const absl::Status _status = (expr);                \
    EXPECT_TRUE(_status.ok()) << #expr ": " << _status; \
  } while (0)

std::string Series(std::string_view name, Labels labels) {
  NormalizeLabels(labels);
  return FormatSeries(name, labels);
}

// A namespace with veth pair rwa <-> rwb (and rwc <-> rwd for the link tests), both ends up,
// one queue each, and a thread inside it. Members are destroyed in reverse order: the thread
// leaves before the namespace is deleted, also when a test failed half way.
class VethTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<TestNetns>> netns = TestNetns::Create();
    ASSERT_TRUE(netns.ok()) << netns.status();
    netns_ = std::move(*netns);
    for (auto [a, b] : {std::pair{"rwa", "rwb"}, std::pair{"rwc", "rwd"}}) {
      // Four queues allowed, one in use: tests grow it to make the statistics change shape.
      ASSERT_OK(netns_->Ip({"link", "add", a, "numtxqueues", "4", "numrxqueues", "4", "type",
                            "veth", "peer", "name", b, "numtxqueues", "4", "numrxqueues", "4"}));
      for (const char* end : {a, b}) {
        ASSERT_OK(netns_->Exec({"ethtool", "-L", end, "rx", "1", "tx", "1"}).status());
      }
    }
    for (const char* end : {"rwa", "rwb", "rwc", "rwd"}) {
      ASSERT_OK(netns_->Ip({"link", "set", end, "up"}));
    }
    absl::StatusOr<std::unique_ptr<NetnsThread>> thread = NetnsThread::Start(netns_->name());
    ASSERT_TRUE(thread.ok()) << thread.status();
    thread_ = std::move(*thread);
  }

  // Runs `fn` inside the namespace.
  void InNetns(std::function<void()> fn) { thread_->Run(std::move(fn)); }

  std::unique_ptr<TestNetns> netns_;
  std::unique_ptr<NetnsThread> thread_;
};

std::map<std::string, uint64_t> ByName(const std::vector<std::string>& names,
                                       std::span<const uint64_t> values) {
  std::map<std::string, uint64_t> out;
  for (size_t i = 0; i < names.size(); ++i) out[names[i]] = values[i];
  return out;
}

TEST_F(VethTest, IoctlReaderAgreesWithEthtoolCommand) {
  absl::StatusOr<std::string> text = netns_->Exec({"ethtool", "-S", "rwa"});
  ASSERT_TRUE(text.ok()) << text.status();
  EthtoolStatsText expected = ParseEthtoolStats(*text);
  ASSERT_THAT(expected.problems, IsEmpty());
  ASSERT_FALSE(expected.names.empty());

  InNetns([&] {
    absl::StatusOr<std::unique_ptr<IoctlEthtoolBackend>> backend = IoctlEthtoolBackend::Create();
    ASSERT_TRUE(backend.ok()) << backend.status();
    absl::StatusOr<std::unique_ptr<EthtoolDevice>> dev = (*backend)->Open("rwa");
    ASSERT_TRUE(dev.ok()) << dev.status();
    EXPECT_EQ((*dev)->driver(), "veth");
    EXPECT_EQ((*dev)->stat_names(), expected.names);
    absl::StatusOr<std::span<const uint64_t>> values = (*dev)->Read();
    ASSERT_TRUE(values.ok()) << values.status();
    // Nothing moves in the namespace (no IPv6, no addresses), so the two reads agree.
    EXPECT_THAT(*values, ::testing::ElementsAreArray(expected.values));
    // veth's first statistic is its peer's ifindex, as /sys/class/net/rwb/ifindex says.
    absl::StatusOr<std::string> ifindex = ReadFile("/sys/class/net/rwb/ifindex");
    ASSERT_TRUE(ifindex.ok()) << ifindex.status();
    EXPECT_EQ(ByName((*dev)->stat_names(), *values).at("peer_ifindex"), ParseCounterText(*ifindex));

    // lo has no statistics; a name that is not there is NotFound.
    EXPECT_TRUE(absl::IsUnimplemented((*backend)->Open("lo").status()));
    EXPECT_TRUE(absl::IsNotFound((*backend)->Open("rwnosuch").status()));
  });
}

// Sends `count` broadcast frames of a local experimental EtherType out of `netdev`.
void SendFrames(const char* netdev, int count) {
  const int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  sockaddr_ll addr = {};
  addr.sll_family = AF_PACKET;
  addr.sll_ifindex = static_cast<int>(if_nametoindex(netdev));
  addr.sll_halen = ETH_ALEN;
  std::fill(addr.sll_addr, addr.sll_addr + ETH_ALEN, 0xff);
  unsigned char frame[64] = {};
  std::fill(frame, frame + ETH_ALEN, 0xff);  // destination: broadcast
  frame[6] = 0x02;                           // source: locally administered
  frame[12] = 0x88;                          // EtherType 0x88b5: local experimental
  frame[13] = 0xb5;
  for (int i = 0; i < count; ++i) {
    EXPECT_EQ(sendto(fd, frame, sizeof(frame), 0, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)),
              static_cast<ssize_t>(sizeof(frame)))
        << std::strerror(errno);
  }
  close(fd);
}

TEST_F(VethTest, ReceiveCounterMovesWithFramesAcrossThePair) {
  // veth counts rx_queue_0_xdp_packets on its NAPI path, taken with GRO on at the receiver
  // and TSO off at the sender.
  ASSERT_OK(netns_->Exec({"ethtool", "-K", "rwb", "gro", "on"}).status());
  ASSERT_OK(netns_->Exec({"ethtool", "-K", "rwa", "tso", "off"}).status());
  constexpr int kFrames = 25;
  InNetns([&] {
    absl::StatusOr<std::unique_ptr<IoctlEthtoolBackend>> backend = IoctlEthtoolBackend::Create();
    ASSERT_TRUE(backend.ok()) << backend.status();
    absl::StatusOr<std::unique_ptr<EthtoolDevice>> rwb = (*backend)->Open("rwb");
    ASSERT_TRUE(rwb.ok()) << rwb.status();
    const std::vector<std::string>& names = (*rwb)->stat_names();
    const size_t packets =
        std::find(names.begin(), names.end(), "rx_queue_0_xdp_packets") - names.begin();
    const size_t bytes =
        std::find(names.begin(), names.end(), "rx_queue_0_xdp_bytes") - names.begin();
    ASSERT_LT(packets, names.size());
    ASSERT_LT(bytes, names.size());
    absl::StatusOr<std::span<const uint64_t>> before = (*rwb)->Read();
    ASSERT_TRUE(before.ok()) << before.status();
    const uint64_t packets_before = (*before)[packets];
    const uint64_t bytes_before = (*before)[bytes];

    SendFrames("rwa", kFrames);

    // The same open device, read again: the values are fresh each time.
    uint64_t packets_after = packets_before, bytes_after = bytes_before;
    for (absl::Time deadline = absl::Now() + kDeadline;
         packets_after < packets_before + kFrames && absl::Now() < deadline;) {
      absl::SleepFor(absl::Milliseconds(10));
      absl::StatusOr<std::span<const uint64_t>> now = (*rwb)->Read();
      ASSERT_TRUE(now.ok()) << now.status();
      packets_after = (*now)[packets];
      bytes_after = (*now)[bytes];
    }
    EXPECT_GE(packets_after, packets_before + kFrames);
    // veth counts bytes after the Ethernet header is pulled (50 of each 64-byte frame).
    EXPECT_GE(bytes_after, bytes_before + kFrames * (64 - ETH_HLEN));
  });
}

TEST_F(VethTest, CollectorMapsRealStatisticsAndRemapsWhenChannelsChange) {
  // veth is not in the canonical table; this one maps its per-queue XDP counter.
  static const std::vector<MetricSpec> kSpecs = {
      {"test_veth_xdp_packets_total",
       MetricKind::kCounter,
       "packets",
       "veth XDP packets",
       {},
       {{"veth", "rx_queue_{queue}_xdp_packets", "rx"}}},
  };
  static const EthtoolMapping mapping(kSpecs);
  auto series = [](const char* netdev, const char* queue) {
    return Series("test_veth_xdp_packets_total",
                  {{"interface", netdev}, {"queue", queue}, {"direction", "rx"}});
  };
  FakeClock clock;
  RecordingEmitter emitter;
  std::unique_ptr<EthtoolCollector> collector;
  InNetns([&] {
    // The default policy, on this namespace's sysfs: veths have no device, lo never counts.
    absl::StatusOr<NetdevSelector> by_default = NetdevSelector::Create({"/sys", ""});
    ASSERT_TRUE(by_default.ok());
    EXPECT_THAT(by_default->List(), IsEmpty());

    absl::StatusOr<NetdevSelector> selector = NetdevSelector::Create({"/sys", "rw[ab]"});
    ASSERT_TRUE(selector.ok());
    EXPECT_THAT(selector->List(), ElementsAre("rwa", "rwb"));
    absl::StatusOr<std::unique_ptr<IoctlEthtoolBackend>> backend = IoctlEthtoolBackend::Create();
    ASSERT_TRUE(backend.ok()) << backend.status();
    collector = std::make_unique<EthtoolCollector>(EthtoolCollector::Options{absl::Hours(1)},
                                                   std::move(*selector), std::move(*backend), clock,
                                                   mapping);
    ASSERT_OK(collector->Collect(emitter));
    EXPECT_EQ(collector->netdevs(), 2u);
    EXPECT_TRUE(emitter.Get(series("rwa", "0")).has_value());
    EXPECT_FALSE(emitter.Get(series("rwa", "1")).has_value());
  });

  // Two queues: rwa's statistics grow by one queue's worth.
  ASSERT_OK(netns_->Exec({"ethtool", "-L", "rwa", "rx", "2", "tx", "2"}).status());

  InNetns([&] {
    clock.Advance(absl::Seconds(1));
    ASSERT_OK(collector->Collect(emitter));
    EXPECT_TRUE(emitter.Get(series("rwa", "1")).has_value()) << "mapped again in this cycle";
    EXPECT_TRUE(emitter.Get(series("rwb", "0")).has_value());
    EXPECT_EQ(collector->mapped_stats(), 3u);
    collector.reset();  // its socket belongs to this thread's namespace; close it here
  });
}

// Events of `kind` for `netdev`, in order.
std::vector<EventRecord> EventsFor(const RecordingEmitter& e, const std::string& netdev) {
  std::vector<EventRecord> out;
  for (const EventRecord& ev : e.events) {
    if (const std::string* v = FindLabel(ev.labels, "interface"); v != nullptr && *v == netdev) {
      out.push_back(ev);
    }
  }
  return out;
}

size_t CountKind(const std::vector<EventRecord>& events, const std::string& kind) {
  return std::count_if(events.begin(), events.end(),
                       [&](const EventRecord& e) { return e.kind == kind; });
}

TEST_F(VethTest, EveryFlapIsReportedOnceWithItsTime) {
  constexpr int kFlaps = 6;
  FakeClock clock;
  RecordingEmitter emitter;
  std::unique_ptr<LinkCollector> collector;
  InNetns([&] {
    absl::StatusOr<NetdevSelector> selector = NetdevSelector::Create({"/sys", "rw[a-d]"});
    ASSERT_TRUE(selector.ok());
    NetlinkLinkMonitor::Options options;
    options.selected = [s = *selector](const std::string& name) { return s.Selected(name); };
    absl::StatusOr<std::unique_ptr<NetlinkLinkMonitor>> monitor =
        NetlinkLinkMonitor::Start(std::move(options));
    ASSERT_TRUE(monitor.ok()) << monitor.status();
    // lo and the two pairs (and whatever tunnel devices loaded modules put in every
    // namespace), known from the initial dump.
    EXPECT_GE((*monitor)->links(), 5u);
    collector = std::make_unique<LinkCollector>(LinkCollector::Options{absl::Hours(1)},
                                                std::move(*selector), std::move(*monitor), clock);
    ASSERT_OK(collector->Collect(emitter));
    EXPECT_THAT(emitter.events, IsEmpty()) << "the state at start is not an event";
  });
  ASSERT_NE(collector, nullptr);
  const std::string changes_rwa =
      Series("fabric_link_carrier_changes_total", {{"interface", "rwa"}});
  const std::string ups_rwa = Series("fabric_link_carrier_up_total", {{"interface", "rwa"}});
  const std::string downs_rwa = Series("fabric_link_carrier_down_total", {{"interface", "rwa"}});
  const std::optional<uint64_t> changes0 = emitter.Get(changes_rwa);
  const std::optional<uint64_t> ups0 = emitter.Get(ups_rwa);
  const std::optional<uint64_t> downs0 = emitter.Get(downs_rwa);
  ASSERT_TRUE(changes0.has_value());
  ASSERT_TRUE(ups0.has_value());
  ASSERT_TRUE(downs0.has_value());

  // Collects until both ends of the pair have reported `n` events; false at the deadline.
  auto wait_for_events = [&](size_t n) {
    for (absl::Time deadline = absl::Now() + kDeadline; absl::Now() < deadline;) {
      bool done = false;
      InNetns([&] {
        clock.Advance(absl::Seconds(1));
        EXPECT_OK(collector->Collect(emitter));
        done = EventsFor(emitter, "rwa").size() >= n && EventsFor(emitter, "rwb").size() >= n;
      });
      if (done) return true;
      absl::SleepFor(absl::Milliseconds(5));
    }
    return false;
  };

  // [issued, seen] for each transition: when the command started, when its events were in.
  std::vector<std::pair<int64_t, int64_t>> windows;
  for (int i = 0; i < kFlaps; ++i) {
    for (const char* state : {"down", "up"}) {
      const int64_t issued = RealtimeNanos();
      ASSERT_OK(netns_->Ip({"link", "set", "rwa", state}));
      ASSERT_TRUE(wait_for_events(windows.size() + 1)) << "flap " << i << " " << state;
      windows.emplace_back(issued, RealtimeNanos());
    }
  }
  // A barrier: rwc's carrier events come after everything rwa and rwb produced, so once they
  // are in, any extra rwa/rwb event would be in too.
  ASSERT_OK(netns_->Ip({"link", "set", "rwc", "down"}));
  for (absl::Time deadline = absl::Now() + kDeadline;
       EventsFor(emitter, "rwc").empty() && absl::Now() < deadline;) {
    InNetns([&] {
      clock.Advance(absl::Seconds(1));
      EXPECT_OK(collector->Collect(emitter));
    });
  }
  ASSERT_EQ(EventsFor(emitter, "rwc").size(), 1u);
  EXPECT_EQ(EventsFor(emitter, "rwc")[0].kind, "link.carrier_down");

  // rwa was set down and up; rwb, its peer, lost and regained carrier with it.
  for (const char* netdev : {"rwa", "rwb"}) {
    SCOPED_TRACE(netdev);
    const std::vector<EventRecord> events = EventsFor(emitter, netdev);
    ASSERT_EQ(events.size(), windows.size());
    EXPECT_EQ(CountKind(events, "link.carrier_down"), size_t{kFlaps});
    EXPECT_EQ(CountKind(events, "link.carrier_up"), size_t{kFlaps});
    for (size_t i = 0; i < events.size(); ++i) {
      SCOPED_TRACE(i);
      EXPECT_EQ(events[i].kind, i % 2 == 0 ? "link.carrier_down" : "link.carrier_up");
      EXPECT_GE(events[i].time_unix_nano, windows[i].first);
      EXPECT_LE(events[i].time_unix_nano, windows[i].second);
      EXPECT_EQ(Attribute(events[i], "inferred"), "");
      // The operstate the kernel had when it sent the message; it follows the carrier later
      // (linkwatch), so it is not checked against the event's direction.
      EXPECT_THAT(Attribute(events[i], "operstate"),
                  ::testing::AnyOf("up", "down", "lowerlayerdown", "unknown"));
      int ifindex = 0;
      EXPECT_TRUE(absl::SimpleAtoi(Attribute(events[i], "ifindex"), &ifindex));
      EXPECT_GT(ifindex, 0);
    }
  }
  // rwd, the barrier's peer, also went down; lo and nothing else reported anything.
  EXPECT_EQ(emitter.events.size(), 2 * windows.size() + 1 + EventsFor(emitter, "rwd").size());

  // sysfs agrees: every down and every up moved carrier_changes.
  EXPECT_EQ(emitter.Get(changes_rwa), *changes0 + 2 * kFlaps);
  EXPECT_EQ(emitter.Get(ups_rwa), *ups0 + kFlaps);
  EXPECT_EQ(emitter.Get(downs_rwa), *downs0 + kFlaps);
  EXPECT_EQ(emitter.Get("railwatch_netlink_overruns_total"), 0u);
  EXPECT_EQ(emitter.Get("railwatch_link_events_dropped_total"), 0u);

  InNetns([&] { collector.reset(); });
}

TEST_F(VethTest, OverrunIsCountedAndWhatWasMissedComesFromTheCounters) {
  constexpr int kFlaps = 5;
  std::unique_ptr<NetlinkLinkMonitor> monitor;
  InNetns([&] {
    NetlinkLinkMonitor::Options options;
    options.selected = [](const std::string& name) { return name == "rwa" || name == "rwb"; };
    // The smallest buffer the kernel allows, and nobody reading: notifications are dropped.
    options.receive_buffer_bytes = 1;
    options.run_thread = false;
    absl::StatusOr<std::unique_ptr<NetlinkLinkMonitor>> started =
        NetlinkLinkMonitor::Start(std::move(options));
    ASSERT_TRUE(started.ok()) << started.status();
    monitor = std::move(*started);
  });
  ASSERT_NE(monitor, nullptr);
  for (int i = 0; i < kFlaps; ++i) {
    ASSERT_OK(netns_->Ip({"link", "set", "rwa", "down"}));
    ASSERT_OK(netns_->Ip({"link", "set", "rwa", "up"}));
  }
  ASSERT_OK(netns_->Ip({"link", "set", "rwa", "down"}));

  std::vector<EventRecord> events;
  InNetns([&] {
    ASSERT_OK(monitor->ReceiveNow());
    monitor->Drain(events);
  });
  EXPECT_GE(monitor->overruns(), 1u);
  EXPECT_EQ(monitor->dropped_events(), 0u);
  for (const char* netdev : {"rwa", "rwb"}) {
    SCOPED_TRACE(netdev);
    std::vector<EventRecord> mine;
    for (const EventRecord& e : events) {
      if (*FindLabel(e.labels, "interface") == netdev) mine.push_back(e);
    }
    // Every transition is there, in order, however many notifications were lost; the ones
    // recovered from the carrier counters say so.
    ASSERT_EQ(mine.size(), size_t{2 * kFlaps + 1});
    size_t inferred = 0;
    for (size_t i = 0; i < mine.size(); ++i) {
      EXPECT_EQ(mine[i].kind, i % 2 == 0 ? "link.carrier_down" : "link.carrier_up") << i;
      inferred += Attribute(mine[i], "inferred") == "true";
    }
    EXPECT_GT(inferred, 0u);
    EXPECT_EQ(Attribute(mine.back(), "resync"), "true");
  }
  InNetns([&] { monitor.reset(); });
}

}  // namespace
}  // namespace railwatch
