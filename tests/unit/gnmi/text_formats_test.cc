// ReadGnmiCapture on inline text: each format on its own, documents mixing them, and input
// that is broken, truncated or garbage (errors with file:line, no crash, the rest read).

#include "gnmi/text_formats.h"

#include <random>

#include "gmock/gmock.h"
#include "gnmi_test_util.h"
#include "gtest/gtest.h"

namespace railwatch {
namespace text_formats_test {

using ::testing::HasSubstr;
using testing::ReadFixture;

GnmiCapture MustRead(std::string_view text, GnmiTextFormat format = GnmiTextFormat::kAuto) {
  absl::StatusOr<GnmiCapture> c = ReadGnmiCapture(text, "inline.md", format);
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *std::move(c) : GnmiCapture();
}

TEST(GnmiTextFormats, FormatNamesRoundTrip) {
  for (auto f : {GnmiTextFormat::kAuto, GnmiTextFormat::kProtoJson, GnmiTextFormat::kProtoText,
                 GnmiTextFormat::kGnmicJson, GnmiTextFormat::kGnmicEvent,
                 GnmiTextFormat::kGnmiCli, GnmiTextFormat::kGnmicDebugLog}) {
    EXPECT_EQ(ParseGnmiTextFormat(GnmiTextFormatName(f)), f);
  }
  EXPECT_EQ(ParseGnmiTextFormat("yaml"), std::nullopt);
}

TEST(GnmiTextFormats, ProtoJsonSyncResponseAndGetResponse) {
  GnmiCapture c = MustRead(R"({"syncResponse": true}
{"notification": [{"timestamp": "12", "update": [{"path": {"elem": [{"name": "a"}]},
  "val": {"uintVal": "18446744073709551615"}}]}]})");
  EXPECT_EQ(c.sync_responses, 1u);
  ASSERT_EQ(c.notifications.size(), 1u);
  EXPECT_EQ(c.notifications[0].timestamp(), 12);
  EXPECT_EQ(c.notifications[0].update(0).val().uint_val(), 18446744073709551615ull);
}

TEST(GnmiTextFormats, PrototextBothDelimitersAndBareNotification) {
  GnmiCapture c = MustRead(R"(
update: <
  timestamp: 3
  update: < path: < elem: < name: "x" > > val: < int_val: -1 > >
>
sync_response: true

timestamp: 9
update { path { elem { name: "y" } } val { bool_val: true } }
delete { elem { name: "z" } }
)");
  EXPECT_EQ(c.sync_responses, 1u);
  ASSERT_EQ(c.notifications.size(), 2u);
  EXPECT_EQ(c.notifications[0].update(0).val().int_val(), -1);
  EXPECT_EQ(c.notifications[1].timestamp(), 9);
  EXPECT_EQ(c.notifications[1].delete__size(), 1);
}

TEST(GnmiTextFormats, GnmicJsonDeletesTargetAndObjects) {
  GnmiCapture c = MustRead(R"({
  "source": "leaf1:6030", "subscription-name": "s", "timestamp": 100,
  "prefix": "interfaces/interface[name=Ethernet3]", "target": "leaf1",
  "updates": [{"Path": "state", "values": {"state": {"oper-status": "UP", "mtu": 9214}}}],
  "deletes": ["state/description"]
})");
  ASSERT_EQ(c.notifications.size(), 1u);
  const auto& n = c.notifications[0];
  EXPECT_EQ(n.prefix().target(), "leaf1");
  EXPECT_EQ(n.delete__size(), 1);
  testing::RecordingVisitor v;
  GnmiDecoder d;
  d.Decode(n, v);
  EXPECT_EQ(v.At("/interfaces/interface[name=Ethernet3]/state/oper-status").size(), 1u);
  EXPECT_EQ(std::get<uint64_t>(v.At("/interfaces/interface[name=Ethernet3]/state/mtu")[0].value),
            9214u);
  auto del = v.At("/interfaces/interface[name=Ethernet3]/state/description");
  ASSERT_EQ(del.size(), 1u);
  EXPECT_TRUE(del[0].deleted);
}

TEST(GnmiTextFormats, GnmicEventTagsBecomeKeysOfTheNamedElem) {
  GnmiCapture c = MustRead(R"([{"name": "s", "timestamp": 5,
  "tags": {"interface_name": "Ethernet1", "queue_name": "3", "source": "x", "unknown_tag": "y"},
  "values": {"/qos/interfaces/interface/output/queues/queue/state/ecn-marked-pkts": 44}}])",
                           GnmiTextFormat::kGnmicEvent);
  ASSERT_EQ(c.notifications.size(), 1u);
  EXPECT_EQ(GnmiPathString(c.notifications[0].update(0).path()),
            "/qos/interfaces/interface[name=Ethernet1]/output/queues/queue[name=3]/state/"
            "ecn-marked-pkts");
}

TEST(GnmiTextFormats, GnmiCliUntimedLeavesAreOneNotification) {
  GnmiCapture c = MustRead(R"({"COUNTERS": {"Ethernet0": {"A": "1", "B": "2"}}})",
                           GnmiTextFormat::kGnmiCli);
  ASSERT_EQ(c.notifications.size(), 1u);
  EXPECT_EQ(c.notifications[0].update_size(), 2);
  EXPECT_EQ(c.notifications[0].timestamp(), 0);
}

TEST(GnmiTextFormats, MixedDocumentReportsFailuresWithLinesAndGoesOn) {
  std::string doc =
      "# notes\n"                                              // 1
      "```\n"                                                  // 2
      "{\"update\": {\"timestamp\": \"1\", \"bogus\": 2}}\n"   // 3: protojson, unknown field
      "```\n"                                                  // 4
      "update: { timestamp: 2 update: { nonsense: 1 } }\n"     // 5: prototext, bad field
      "{\"syncResponse\": true}\n"                              // 6: fine
      "{\"source\": \"a\", \"timestamp\": 7, \"updates\": [{\"Path\": \"a[\", \"values\": {\"a\": 1}}]}\n"
      "{\"sync\n";                                             // 8: never closes
  absl::StatusOr<GnmiCapture> c = ReadGnmiCapture(doc, "doc.md");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->sync_responses, 1u);
  ASSERT_EQ(c->errors.size(), 4u) << ::testing::PrintToString(c->errors);
  EXPECT_THAT(c->errors[0], HasSubstr("doc.md:3: protojson"));
  EXPECT_THAT(c->errors[1], HasSubstr("doc.md:5: prototext"));
  EXPECT_THAT(c->errors[2], HasSubstr("doc.md:7: gnmic-json"));
  EXPECT_THAT(c->errors[3], HasSubstr("doc.md:8: JSON that never closes"));
}

TEST(GnmiTextFormats, NothingFoundIsAnError) {
  absl::StatusOr<GnmiCapture> c = ReadGnmiCapture("just prose, [a link](x) {not json}", "p.md");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(std::string(c.status().message()), HasSubstr("p.md: no gNMI message found"));
  absl::StatusOr<GnmiCapture> empty = ReadGnmiCapture("", "e.txt", GnmiTextFormat::kProtoText);
  EXPECT_FALSE(empty.ok());
}

// Every prefix of every sample, and the samples with bytes flipped: no crash, and a result
// that is either an error status or a capture (what it holds is not asserted: cut input may
// still read).
TEST(GnmiTextFormats, TruncatedAndGarbledSamplesDoNotCrash) {
  const char* samples[] = {
      "gnmi_notif_01_gnmic_output_formats_nokia_sros_version.md",
      "gnmi_notif_02_sonic_countersdb_pfc_get_and_subscribe_stream_poll.md",
      "gnmi_notif_04_sonic_openconfig_interfaces_get_set_subscribe.md",
      "gnmi_notif_07_srlinux_event_format_interface_statistics.json",
      "gnmi_notif_09_arista_eos_gnmic_debug_prototext_counters.txt",
  };
  std::mt19937 rng(42);
  size_t runs = 0, failures = 0;
  for (const char* name : samples) {
    std::string text = ReadFixture(name);
    for (size_t cut = 0; cut < text.size(); cut += 7) {
      auto c = ReadGnmiCapture(std::string_view(text).substr(0, cut), name);
      ++runs;
      if (!c.ok()) ++failures;
      GnmiDecoder d;
      testing::RecordingVisitor v;
      if (c.ok()) {
        for (const auto& n : c->notifications) d.Decode(n, v);
      }
    }
    for (int round = 0; round < 50; ++round) {
      std::string garbled = text;
      for (int k = 0; k < 8; ++k) garbled[rng() % garbled.size()] = static_cast<char>(rng());
      auto c = ReadGnmiCapture(garbled, name);
      ++runs;
      if (c.ok()) {
        GnmiDecoder d;
        testing::RecordingVisitor v;
        for (const auto& n : c->notifications) d.Decode(n, v);
      }
    }
  }
  EXPECT_GT(failures, 0u);  // the shortest prefixes hold nothing
  EXPECT_GT(runs, failures);
}

}  // namespace
}  // namespace railwatch
