#include "collectors/link_state.h"

#include <net/if.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/recording_emitter.h"

namespace railwatch {
namespace link_state_test {

using ::railwatch::testing::Attribute;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr uint32_t kLowerUp = 0x10000;  // IFF_LOWER_UP
constexpr uint32_t kUpFlags = IFF_UP | IFF_RUNNING | kLowerUp;
constexpr uint32_t kDownFlags = IFF_UP;

LinkSnapshot Link(int ifindex, const std::string& name, bool carrier, uint32_t ups,
                  uint32_t downs) {
  LinkSnapshot l;
  l.ifindex = ifindex;
  l.name = name;
  l.flags = carrier ? kUpFlags : kDownFlags;
  l.operstate = carrier ? 6 : 2;  // IF_OPER_UP, IF_OPER_DOWN
  l.carrier_up_count = ups;
  l.carrier_down_count = downs;
  l.carrier_changes = ups + downs;
  return l;
}

std::vector<std::string> Kinds(const std::vector<EventRecord>& events) {
  std::vector<std::string> out;
  for (const EventRecord& e : events) out.push_back(e.kind);
  return out;
}

LinkStateTracker AllLinks() {
  return LinkStateTracker([](const std::string&) { return true; });
}

TEST(LinkStateTracker, FirstSightIsStateNotAnEvent) {
  LinkStateTracker t = AllLinks();
  std::vector<EventRecord> out;
  t.OnNewLink(Link(2, "eth0", true, 1, 0), 100, out);
  t.OnNewLink(Link(3, "eth1", false, 0, 0), 100, out);
  EXPECT_THAT(out, IsEmpty());
  EXPECT_EQ(t.links(), 2u);
}

TEST(LinkStateTracker, EachObservedTransitionIsOneEvent) {
  LinkStateTracker t = AllLinks();
  std::vector<EventRecord> out;
  t.OnNewLink(Link(2, "eth0", true, 1, 0), 100, out);
  t.OnNewLink(Link(2, "eth0", false, 1, 1), 200, out);
  t.OnNewLink(Link(2, "eth0", false, 1, 1), 250, out);  // operstate noise: nothing
  t.OnNewLink(Link(2, "eth0", true, 2, 1), 300, out);
  ASSERT_THAT(Kinds(out), ElementsAre("link.carrier_down", "link.carrier_up"));
  EXPECT_EQ(out[0].time_unix_nano, 200);
  EXPECT_EQ(out[1].time_unix_nano, 300);
  EXPECT_THAT(out[0].labels, ElementsAre(Label{"interface", "eth0"}));
  EXPECT_EQ(Attribute(out[0], "ifindex"), "2");
  EXPECT_EQ(Attribute(out[0], "operstate"), "down");
  EXPECT_EQ(Attribute(out[0], "flags"), "0x1");
  EXPECT_EQ(Attribute(out[0], "admin_up"), "true");
  EXPECT_EQ(Attribute(out[0], "carrier_changes"), "2");
  EXPECT_EQ(Attribute(out[0], "carrier_down_count"), "1");
  EXPECT_EQ(Attribute(out[1], "operstate"), "up");
  EXPECT_EQ(Attribute(out[1], "carrier_up_count"), "2");
  for (const EventRecord& e : out) EXPECT_EQ(Attribute(e, "inferred"), "");
}

TEST(LinkStateTracker, FlapMergedIntoOneMessageIsRecoveredFromCounters) {
  LinkStateTracker t = AllLinks();
  std::vector<EventRecord> out;
  t.OnNewLink(Link(2, "eth0", true, 5, 4), 100, out);
  // Up before and after, but one down and one up happened in between.
  t.OnNewLink(Link(2, "eth0", true, 6, 5), 200, out);
  ASSERT_THAT(Kinds(out), ElementsAre("link.carrier_down", "link.carrier_up"));
  EXPECT_EQ(Attribute(out[0], "inferred"), "true");
  EXPECT_EQ(Attribute(out[1], "inferred"), "true");

  out.clear();
  // Up, then down, up, down: the last one is what the message shows.
  t.OnNewLink(Link(2, "eth0", false, 7, 7), 300, out);
  ASSERT_THAT(Kinds(out), ElementsAre("link.carrier_down", "link.carrier_up", "link.carrier_down"));
  EXPECT_EQ(Attribute(out[0], "inferred"), "true");
  EXPECT_EQ(Attribute(out[1], "inferred"), "true");
  EXPECT_EQ(Attribute(out[2], "inferred"), "");
}

TEST(LinkStateTracker, OnlyCarrierChangesKnown) {
  LinkStateTracker t = AllLinks();
  std::vector<EventRecord> out;
  LinkSnapshot a = Link(4, "eth2", true, 0, 0);
  a.carrier_up_count.reset();
  a.carrier_down_count.reset();
  a.carrier_changes = 10;
  LinkSnapshot b = a;
  b.flags = kDownFlags;
  b.carrier_changes = 13;
  t.OnNewLink(a, 1, out);
  t.OnNewLink(b, 2, out);
  EXPECT_THAT(Kinds(out), ElementsAre("link.carrier_down", "link.carrier_up", "link.carrier_down"));
}

TEST(LinkStateTracker, CountersThatDisagreeYieldTheObservedChangeOnly) {
  LinkStateTracker t = AllLinks();
  std::vector<EventRecord> out;
  t.OnNewLink(Link(2, "eth0", true, 1, 0), 100, out);
  // Admin down on a driver that keeps its carrier: LOWER_UP drops, the counters do not move.
  LinkSnapshot down = Link(2, "eth0", false, 1, 0);
  down.flags = 0;
  t.OnNewLink(down, 200, out);
  ASSERT_THAT(Kinds(out), ElementsAre("link.carrier_down"));
  EXPECT_EQ(Attribute(out[0], "admin_up"), "false");
  EXPECT_EQ(Attribute(out[0], "inferred"), "");
  // And no counters at all: the observed change still counts.
  out.clear();
  LinkSnapshot up = Link(2, "eth0", true, 0, 0);
  up.carrier_up_count.reset();
  up.carrier_down_count.reset();
  up.carrier_changes.reset();
  t.OnNewLink(up, 300, out);
  EXPECT_THAT(Kinds(out), ElementsAre("link.carrier_up"));
}

TEST(LinkStateTracker, CountersThatWrapStillCount) {
  LinkStateTracker t = AllLinks();
  std::vector<EventRecord> out;
  t.OnNewLink(Link(2, "eth0", true, 0xffffffffu, 0xfffffffeu), 1, out);
  t.OnNewLink(Link(2, "eth0", false, 0xffffffffu, 0xffffffffu), 2, out);
  t.OnNewLink(Link(2, "eth0", true, 0, 0xffffffffu), 3, out);
  EXPECT_THAT(Kinds(out), ElementsAre("link.carrier_down", "link.carrier_up"));
}

TEST(LinkStateTracker, HugeJumpReportsObservedChangeAndWhatWasMissed) {
  LinkStateTracker t = AllLinks();
  std::vector<EventRecord> out;
  t.OnNewLink(Link(2, "eth0", true, 1, 0), 1, out);
  t.OnNewLink(Link(2, "eth0", false, 1001, 1001), 2, out);
  ASSERT_THAT(Kinds(out), ElementsAre("link.carrier_down"));
  EXPECT_EQ(Attribute(out[0], "missed_transitions"), "2000");
}

TEST(LinkStateTracker, UnselectedLinksAreTrackedButSilent) {
  LinkStateTracker t([](const std::string& name) { return name.starts_with("ens"); });
  std::vector<EventRecord> out;
  t.OnNewLink(Link(7, "veth9", true, 1, 0), 1, out);
  t.OnNewLink(Link(7, "veth9", false, 1, 1), 2, out);
  EXPECT_THAT(out, IsEmpty());
  // Renamed into the selection (udev renames new netdevs): selected from then on.
  t.OnNewLink(Link(7, "ens3", false, 1, 1), 3, out);
  t.OnNewLink(Link(7, "ens3", true, 2, 1), 4, out);
  ASSERT_THAT(Kinds(out), ElementsAre("link.carrier_up"));
  EXPECT_THAT(out[0].labels, ElementsAre(Label{"interface", "ens3"}));
}

TEST(LinkStateTracker, ResyncDumpReportsChangesAndForgetsVanishedLinks) {
  LinkStateTracker t = AllLinks();
  std::vector<EventRecord> out;
  t.OnNewLink(Link(2, "eth0", true, 1, 0), 1, out);
  t.OnNewLink(Link(3, "eth1", true, 1, 0), 1, out);
  // After an overrun: eth0 went down meanwhile, eth1 was removed.
  t.BeginDump();
  t.OnNewLink(Link(2, "eth0", false, 1, 1), 5, out);
  t.EndDump();
  ASSERT_THAT(Kinds(out), ElementsAre("link.carrier_down"));
  EXPECT_EQ(Attribute(out[0], "resync"), "true");
  EXPECT_EQ(t.links(), 1u);
  // eth1 is new again: state, no event.
  out.clear();
  t.OnNewLink(Link(3, "eth1", false, 1, 1), 6, out);
  EXPECT_THAT(out, IsEmpty());

  // A failed dump forgets nothing.
  t.BeginDump();
  t.AbortDump();
  EXPECT_EQ(t.links(), 2u);
}

TEST(LinkStateTracker, DeletedLinkStartsOverWhenItComesBack) {
  LinkStateTracker t = AllLinks();
  std::vector<EventRecord> out;
  t.OnNewLink(Link(2, "eth0", true, 1, 0), 1, out);
  t.OnDelLink(2);
  EXPECT_EQ(t.links(), 0u);
  t.OnNewLink(Link(2, "eth0", false, 0, 0), 2, out);
  EXPECT_THAT(out, IsEmpty());
}

}  // namespace
}  // namespace railwatch
