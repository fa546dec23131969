// Path profiles: the shipped profiles load, a broken one reports every problem where it is,
// and leaves of each dialect (built by hand, and from the real-world samples through the
// decoder) map to the canonical series and labels.

#include "gnmi/profile.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/text.h"
#include "gmock/gmock.h"
#include "gnmi/path_pattern.h"
#include "gnmi/text_formats.h"
#include "gtest/gtest.h"
#include "yaml-cpp/yaml.h"

namespace railwatch {
namespace profile_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::string kProfilesDir = std::string(RAILWATCH_SOURCE_DIR) + "/profiles/gnmi";
const std::string kFixtures = std::string(RAILWATCH_FIXTURES_DIR) + "/gnmi/";

// A leaf as the decoder hands it, kept beyond the visitor call.
struct OwnedLeaf {
  std::vector<GnmiPathElem> elems;
  GnmiScalar value;
  GnmiLeaf View() const {
    GnmiLeaf l;
    l.elems = elems;
    l.value = value;
    return l;
  }
};

class Collect : public GnmiLeafVisitor {
 public:
  void OnLeaf(const GnmiLeaf& leaf) override { leaves.push_back({leaf.elems, leaf.value}); }
  std::vector<OwnedLeaf> leaves;
};

std::vector<OwnedLeaf> Decode(const ::gnmi::Notification& n) {
  GnmiDecoder decoder;
  Collect c;
  decoder.Decode(n, c);
  return c.leaves;
}

// One leaf at `path` ("/a/b[k=v]/c") with `value`, through the real decoder.
OwnedLeaf Leaf(std::string_view path, GnmiScalar value) {
  absl::StatusOr<::gnmi::Path> p = ParseGnmiPath(path);
  EXPECT_TRUE(p.ok()) << p.status();
  ::gnmi::Notification n;
  ::gnmi::Update* u = n.add_update();
  *u->mutable_path() = *p;
  if (auto* s = std::get_if<std::string>(&value)) u->mutable_val()->set_string_val(*s);
  if (auto* v = std::get_if<uint64_t>(&value)) u->mutable_val()->set_uint_val(*v);
  std::vector<OwnedLeaf> leaves = Decode(n);
  EXPECT_EQ(leaves.size(), 1u) << path;
  return leaves.empty() ? OwnedLeaf{} : leaves[0];
}

const GnmiProfile& Shipped(std::string_view name) {
  static const std::vector<GnmiProfile>* profiles = [] {
    absl::StatusOr<std::vector<GnmiProfile>> p = LoadGnmiProfiles(kProfilesDir);
    EXPECT_TRUE(p.ok()) << p.status();
    return new std::vector<GnmiProfile>(p.ok() ? std::move(*p) : std::vector<GnmiProfile>());
  }();
  for (const GnmiProfile& p : *profiles) {
    if (p.name() == name) return p;
  }
  ADD_FAILURE() << "no shipped profile " << name;
  static const GnmiProfile* empty = new GnmiProfile(
      std::move(*GnmiProfile::LoadString("name: empty\nmappings: []\n", "empty.yaml")));
  return *empty;
}

// "series{labels}" for a mapped leaf, "" when unmapped: one string to compare per case.
std::string MapToString(const GnmiProfile& profile, const OwnedLeaf& leaf) {
  GnmiMappedSeries out;
  if (!profile.Map(leaf.View(), out)) return "";
  if (out.metric == nullptr) return FormatSeries(absl::StrCat("join:", out.rule->join_label), out.labels);
  return FormatSeries(out.metric->name, out.labels);
}

std::optional<double> MapValue(const GnmiProfile& profile, const OwnedLeaf& leaf) {
  GnmiMappedSeries out;
  if (!profile.Map(leaf.View(), out)) return std::nullopt;
  return out.rule->Evaluate(leaf.value);
}

// ---- loading --------------------------------------------------------------------------

TEST(GnmiProfileLoad, EveryShippedProfileLoadsAndNamesOnlyCanonicalSeries) {
  absl::StatusOr<std::vector<GnmiProfile>> profiles = LoadGnmiProfiles(kProfilesDir);
  ASSERT_TRUE(profiles.ok()) << profiles.status();
  std::vector<std::string> names;
  for (const GnmiProfile& p : *profiles) {
    names.push_back(p.name());
    EXPECT_THAT(p.warnings(), IsEmpty()) << p.name();
    EXPECT_FALSE(p.description().empty()) << p.name();
    EXPECT_FALSE(p.subscriptions().empty()) << p.name();
    for (const GnmiSubscriptionSpec& s : p.subscriptions()) {
      EXPECT_GT(s.path.elem_size(), 0) << p.name() << " " << s.name;
    }
    ASSERT_FALSE(p.series().empty()) << p.name();
    for (const MetricSpec* m : p.series()) {
      ASSERT_NE(m, nullptr);
      EXPECT_EQ(FindMetric(m->name), m);
    }
  }
  EXPECT_THAT(names, ElementsAre("arista-eos", "cumulus", "openconfig", "sonic"));
}

TEST(GnmiProfileLoad, SubscriptionsCarryTargetModeAndIntervals) {
  const GnmiProfile& sonic = Shipped("sonic");
  EXPECT_EQ(sonic.encoding(), ::gnmi::JSON_IETF);
  ASSERT_GE(sonic.subscriptions().size(), 3u);
  const GnmiSubscriptionSpec& ports = sonic.subscriptions()[0];
  EXPECT_EQ(ports.name, "port-counters");
  EXPECT_EQ(ports.path.target(), "COUNTERS_DB");
  ASSERT_EQ(ports.path.elem_size(), 2);
  EXPECT_EQ(ports.path.elem(1).name(), "Ethernet*");
  EXPECT_EQ(ports.mode, ::gnmi::SAMPLE);

  // cumulus includes openconfig; its own subscriptions replace those of the same name.
  const GnmiProfile& cumulus = Shipped("cumulus");
  int interface_counters = 0;
  bool has_oper_status = false;
  for (const GnmiSubscriptionSpec& s : cumulus.subscriptions()) {
    if (s.name == "interface-counters") {
      ++interface_counters;
      EXPECT_EQ(s.sample_interval, absl::Seconds(10));
      EXPECT_EQ(s.path.elem(1).key().at("name"), "*");
    }
    if (s.name == "oper-status") {
      has_oper_status = true;
      EXPECT_EQ(s.mode, ::gnmi::ON_CHANGE);
    }
  }
  EXPECT_EQ(interface_counters, 1);
  EXPECT_TRUE(has_oper_status);
}

TEST(GnmiProfileLoad, ReportsEveryProblemWithFileLineColumn) {
  const std::string yaml =
      "name: Broken_Name\n"                                        // 1
      "encoding: xml\n"                                            // 2
      "colour: blue\n"                                             // 3
      "subscriptions:\n"                                           // 4
      "  - {name: a, path: \"/x/{y}\", mode: sometimes}\n"         // 5
      "mappings:\n"                                                // 6
      "  - path: \"/interfaces/interface[name={interface]/x\"\n"   // 7
      "    series: fabric_switch_interface_receive_bytes_total\n"  // 8
      "  - path: /a/b\n"                                           // 9
      "    series: fabric_no_such_series_total\n"                  // 10
      "  - path: /a/{switch}\n"                                    // 11
      "    series: fabric_switch_interface_oper_up\n"              // 12
      "    values: {UP: one}\n"                                    // 13
      "  - path: /a/c\n"                                           // 14
      "    series: fabric_switch_queue_dropped_packets_total\n"    // 15
      "    value_label: neighbor\n"                                // 16
      "    colour: red\n";                                         // 17
  absl::StatusOr<GnmiProfile> p = GnmiProfile::LoadString(yaml, "broken.yaml");
  ASSERT_FALSE(p.ok());
  const std::string msg(p.status().message());
  std::vector<std::string> lines = absl::StrSplit(msg, '\n');
  EXPECT_GE(lines.size(), 10u) << msg;
  for (const std::string& line : lines) {
    EXPECT_TRUE(line.starts_with("broken.yaml:")) << line;
  }
  EXPECT_THAT(msg, HasSubstr("broken.yaml:1:7: error[bad-name]"));
  EXPECT_THAT(msg, HasSubstr("broken.yaml:2:11: error[bad-encoding]"));
  EXPECT_THAT(msg, HasSubstr("broken.yaml:3:1: warning[unknown-key]: unknown key `colour`"));
  EXPECT_THAT(msg, HasSubstr("broken.yaml:5:21: error[bad-path]: a subscription path"));
  EXPECT_THAT(msg, HasSubstr("broken.yaml:5:37: error[bad-mode]"));
  // The '{' of "{interface]": the scalar's quote is column 11, the text starts at 12, and
  // the '{' is 27 characters into it.
  EXPECT_THAT(msg, HasSubstr("broken.yaml:7:39: error[bad-path]: '{' not closed"));
  EXPECT_THAT(msg, HasSubstr("broken.yaml:10:13: error[unknown-series]: "
                             "`fabric_no_such_series_total` is not a canonical series"));
  EXPECT_THAT(msg, HasSubstr("broken.yaml:11:11: error[bad-label]: label `switch` is set by "
                             "the agent"));
  EXPECT_THAT(msg, HasSubstr("broken.yaml:13:18: error[bad-value]: UP `one` is not a number"));
  EXPECT_THAT(msg, HasSubstr("broken.yaml:16:18: error[bad-value-label]"));
  EXPECT_THAT(msg, HasSubstr("broken.yaml:17:5: warning[unknown-key]: unknown key `colour`"));
}

TEST(GnmiProfileLoad, BadYamlAndMissingKeysAreReported) {
  absl::StatusOr<GnmiProfile> p = GnmiProfile::LoadString("name: [unclosed\n", "bad.yaml");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("bad.yaml:"));
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("error[yaml-syntax]"));

  p = GnmiProfile::LoadString("description: x\n", "empty.yaml");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("empty.yaml:1:1: error[missing-key]: `name` is required"));
  EXPECT_THAT(std::string(p.status().message()), HasSubstr("empty.yaml:1:1: error[missing-key]: `mappings` is required"));
}

TEST(GnmiProfileLoad, IncludeOfAMissingProfileIsAnError) {
  absl::StatusOr<GnmiProfile> p = GnmiProfile::LoadString(
      "name: x\ninclude: no-such-profile\nmappings: []\n", kProfilesDir + "/x.yaml");
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()), HasSubstr(":2:10: error[bad-include]"));
}

TEST(GnmiProfileLoad, ADirectoryWithABrokenFileNamesItAndItsProblems) {
  const std::string dir = ::testing::TempDir() + "/gnmi_profiles_broken";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(kProfilesDir + "/openconfig.yaml", dir + "/openconfig.yaml");
  { std::ofstream(dir + "/bad.yaml") << "name: bad\nmappings:\n  - {path: /a, series: nope}\n"; }
  absl::StatusOr<std::vector<GnmiProfile>> p = LoadGnmiProfiles(dir);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(std::string(p.status().message()),
              HasSubstr(dir + "/bad.yaml:3:24: error[unknown-series]"));
  EXPECT_FALSE(LoadGnmiProfiles(dir + "/no-such-dir").ok());
  std::filesystem::remove_all(dir);
}

TEST(GnmiProfileLoad, DocsListEveryShippedSubscriptionAndMapping) {
  absl::StatusOr<std::string> doc = ReadFile(std::string(RAILWATCH_SOURCE_DIR) + "/docs/GNMI.md");
  ASSERT_TRUE(doc.ok()) << doc.status();
  for (const std::filesystem::directory_entry& e :
       std::filesystem::directory_iterator(kProfilesDir)) {
    const YAML::Node root = YAML::LoadFile(e.path().string());
    for (const char* section : {"subscriptions", "mappings"}) {
      for (const YAML::Node& item : root[section]) {
        const std::string path = item["path"].Scalar();
        EXPECT_THAT(*doc, HasSubstr(absl::StrCat("`", path, "`")))
            << e.path().filename() << ": docs/GNMI.md does not list " << path;
      }
    }
  }
}

// ---- patterns -------------------------------------------------------------------------

std::string MatchPattern(std::string_view pattern, std::string_view path) {
  absl::StatusOr<GnmiPathPattern> p = GnmiPathPattern::Parse(pattern);
  EXPECT_TRUE(p.ok()) << pattern << ": " << p.status();
  if (!p.ok()) return "bad pattern";
  Labels labels;
  if (!p->Match(Leaf(path, uint64_t{1}).elems, labels)) return "no match";
  return FormatLabels(labels);
}

TEST(GnmiPathPattern, CapturesLiteralsAndWildcards) {
  EXPECT_EQ(MatchPattern("/a/{x}/c", "/a/b/c"), "x=\"b\"");
  EXPECT_EQ(MatchPattern("/a/{x}/c", "/a/b/d"), "no match");
  EXPECT_EQ(MatchPattern("/PFC_{p:num}_RX", "/PFC_3_RX"), "p=\"3\"");
  EXPECT_EQ(MatchPattern("/PFC_{p:num}_RX", "/PFC_3_ON2OFF_RX"), "no match");
  EXPECT_EQ(MatchPattern("/q/{i}:{q:num}", "/q/Ethernet68:3"), "i=\"Ethernet68\",q=\"3\"");
  EXPECT_EQ(MatchPattern("/q/{i}:{q:num}", "/q/Ethernet68:0:periodic"), "no match");
  EXPECT_EQ(MatchPattern("/q/{_}:{q:num}", "/q/a:b:12"), "q=\"12\"");
  EXPECT_EQ(MatchPattern("/a/*/c", "/a/b[k=v]/c"), "");
  EXPECT_EQ(MatchPattern("/a/**/c", "/a/c"), "");
  EXPECT_EQ(MatchPattern("/a/**/{x}/c", "/a/b/d/e/c"), "x=\"e\"");
  EXPECT_EQ(MatchPattern("/a/**", "/b"), "no match");
}

TEST(GnmiPathPattern, KeysMustAllBeNamed) {
  EXPECT_EQ(MatchPattern("/i[name={n}]/x", "/i[name=Ethernet1]/x"), "n=\"Ethernet1\"");
  // A key the pattern does not name would fold two leaves into one series.
  EXPECT_EQ(MatchPattern("/i[name={n}]/x", "/i[name=E1][unit=0]/x"), "no match");
  EXPECT_EQ(MatchPattern("/i/x", "/i[name=E1]/x"), "no match");
  // Keys in any order; captures come out in key-name order.
  EXPECT_EQ(MatchPattern("/i[unit={u}][name={n}]/x", "/i[name=E1][unit=0]/x"), "n=\"E1\",u=\"0\"");
  EXPECT_EQ(MatchPattern("/t[*={q}]/x", "/t[queue=3]/x"), "q=\"3\"");
  EXPECT_EQ(MatchPattern("/t[*={q}]/x", "/t[id=3]/x"), "q=\"3\"");
  EXPECT_EQ(MatchPattern("/t[name=*]/x", "/t[name=3]/x"), "");
  EXPECT_EQ(MatchPattern("/t[name=a\\]b]/x", "/t[name=a\\]b]/x"), "");
}

TEST(GnmiPathPattern, ErrorsNameTheColumn) {
  struct Case {
    std::string pattern;
    size_t offset;
    std::string message;
  } cases[] = {
      {"", 0, "empty path"},
      {"/a//b", 3, "empty element"},
      {"/a/{x", 3, "not closed"},
      {"/a/{x:hex}", 3, "unknown capture type"},
      {"/a/{}", 3, "needs a label name"},
      {"/a/{x}{y}", 6, "side by side"},
      {"/a/{x}/{x}", 7, "captured twice"},
      {"/a[k]", 2, "[name=value]"},
      {"/*[k=v]", 2, "wildcard element has no keys"},
      {"/a[k=v]x", 7, "expected '/'"},
      {"/a}", 2, "'}' without '{'"},
  };
  for (const Case& c : cases) {
    GnmiPathPattern::Error err;
    EXPECT_FALSE(GnmiPathPattern::Parse(c.pattern, &err).ok()) << c.pattern;
    EXPECT_EQ(err.offset, c.offset) << c.pattern;
    EXPECT_THAT(err.message, HasSubstr(c.message)) << c.pattern;
  }
}

// ---- dialects, hand-built leaves -----------------------------------------------------

TEST(GnmiProfileMap, OpenConfigInterfaceCountersPauseAndQueues) {
  const GnmiProfile& oc = Shipped("openconfig");
  EXPECT_EQ(MapToString(oc, Leaf("/interfaces/interface[name=Ethernet1]/state/counters/in-octets",
                                 uint64_t{5})),
            "fabric_switch_interface_receive_bytes_total{interface=\"Ethernet1\"}");
  EXPECT_EQ(MapToString(oc, Leaf("/interfaces/interface[name=Ethernet1]/state/counters/"
                                 "out-discards",
                                 uint64_t{5})),
            "fabric_switch_interface_transmit_discards_total{interface=\"Ethernet1\"}");
  EXPECT_EQ(MapToString(oc, Leaf("/interfaces/interface[name=Ethernet1]/ethernet/state/counters/"
                                 "in-mac-pause-frames",
                                 uint64_t{5})),
            "fabric_link_pause_frames_total{direction=\"rx\",interface=\"Ethernet1\"}");
  EXPECT_EQ(MapToString(oc, Leaf("/qos/interfaces/interface[interface-id=Ethernet7]/output/"
                                 "queues/queue[name=UC3]/state/ecn-marked-pkts",
                                 uint64_t{5})),
            "fabric_switch_queue_ecn_marked_packets_total{interface=\"Ethernet7\",queue=\"UC3\"}");
  // Leaves no mapping names are unmapped, not errors.
  EXPECT_EQ(MapToString(oc, Leaf("/interfaces/interface[name=Ethernet1]/state/counters/"
                                 "in-broadcast-pkts",
                                 uint64_t{5})),
            "");
  EXPECT_EQ(MapToString(oc, Leaf("/system/state/hostname", std::string("leaf1"))), "");
}

TEST(GnmiProfileMap, OperStatusValuesAndEvent) {
  const GnmiProfile& oc = Shipped("openconfig");
  const std::string path = "/interfaces/interface[name=Ethernet2]/state/oper-status";
  GnmiMappedSeries out;
  ASSERT_TRUE(oc.Map(Leaf(path, std::string("UP")).View(), out));
  EXPECT_EQ(out.metric->name, "fabric_switch_interface_oper_up");
  EXPECT_EQ(out.rule->kind, MetricKind::kGauge);
  EXPECT_EQ(out.rule->event_kind, "switch.oper_status");
  EXPECT_EQ(out.rule->Evaluate(std::string("UP")), 1.0);
  EXPECT_EQ(out.rule->Evaluate(std::string("DOWN")), 0.0);
  EXPECT_EQ(out.rule->Evaluate(std::string("LOWER_LAYER_DOWN")), 0.0);
  EXPECT_EQ(out.rule->Evaluate(std::string("SIDEWAYS")), std::nullopt);
  EXPECT_EQ(out.rule->Evaluate(GnmiScalar{}), std::nullopt);  // deleted
}

TEST(GnmiProfileMap, CounterValuesFromNumbersAndNumericStrings) {
  GnmiValueRule rule;
  EXPECT_EQ(rule.Evaluate(uint64_t{527}), 527.0);
  EXPECT_EQ(rule.Evaluate(std::string("527")), 527.0);
  EXPECT_EQ(rule.Evaluate(std::string("operational")), std::nullopt);
  rule.scale = 4;
  EXPECT_EQ(rule.Evaluate(std::string("2")), 8.0);
}

TEST(GnmiProfileMap, LldpNeighbourLeavesAreAttributes) {
  const GnmiProfile& oc = Shipped("openconfig");
  const std::string base =
      "/lldp/interfaces/interface[name=Ethernet4]/neighbors/neighbor[id=1]/state/";
  GnmiMappedSeries system, port;
  ASSERT_TRUE(oc.Map(Leaf(base + "system-name", std::string("gpu-node-003")).View(), system));
  ASSERT_TRUE(oc.Map(Leaf(base + "port-id", std::string("enp12s0np0")).View(), port));
  EXPECT_EQ(system.metric, port.metric);
  EXPECT_EQ(system.metric->name, "fabric_lldp_neighbor_info");
  EXPECT_EQ(system.labels, port.labels);  // one series: the collector merges the attributes
  EXPECT_EQ(FormatLabels(system.labels), "interface=\"Ethernet4\"");
  EXPECT_EQ(system.rule->value_label, "neighbor_system");
  EXPECT_EQ(port.rule->value_label, "neighbor_port");
  EXPECT_EQ(system.rule->Evaluate(std::string("gpu-node-003")), 1.0);
  EXPECT_EQ(system.rule->Evaluate(std::string("")), std::nullopt);
  EXPECT_EQ(MapToString(oc, Leaf(base + "ttl", uint64_t{120})), "");
}

TEST(GnmiProfileMap, SonicCountersQueuesAndWatchdog) {
  const GnmiProfile& sonic = Shipped("sonic");
  EXPECT_EQ(
      MapToString(sonic, Leaf("/COUNTERS/Ethernet9/SAI_PORT_STAT_PFC_7_RX_PKTS", std::string("0"))),
      "fabric_pfc_pause_frames_total{direction=\"rx\",interface=\"Ethernet9\","
      "priority=\"7\"}");
  EXPECT_EQ(
      MapToString(sonic, Leaf("/COUNTERS/Ethernet9/SAI_PORT_STAT_PFC_3_TX_PKTS", std::string("0"))),
      "fabric_pfc_pause_frames_total{direction=\"tx\",interface=\"Ethernet9\","
      "priority=\"3\"}");
  EXPECT_EQ(MapToString(sonic, Leaf("/COUNTERS/Ethernet9/SAI_PORT_STAT_PFC_3_ON2OFF_RX_PKTS",
                                    std::string("0"))),
            "");
  EXPECT_EQ(MapToString(sonic, Leaf("/COUNTERS/Ethernet*/SAI_PORT_STAT_IF_IN_OCTETS/Ethernet0/"
                                    "SAI_PORT_STAT_IF_IN_OCTETS",
                                    std::string("0"))),
            "fabric_switch_interface_receive_bytes_total{interface=\"Ethernet0\"}");
  EXPECT_EQ(MapToString(sonic, Leaf("/COUNTERS/Ethernet*/Queues/etp10:3/SAI_QUEUE_STAT_PACKETS",
                                    std::string("527"))),
            "fabric_switch_queue_transmit_packets_total{interface=\"etp10\",queue=\"3\"}");
  EXPECT_EQ(MapToString(sonic, Leaf("/COUNTERS/Ethernet*/Queues/etp10:3:periodic/"
                                    "SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES",
                                    std::string("0"))),
            "");
  EXPECT_EQ(MapToString(sonic, Leaf("/COUNTERS/Ethernet68/Pfcwd/Ethernet68:4/"
                                    "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED",
                                    std::string("2"))),
            "fabric_switch_pfc_watchdog_storms_detected_total{interface=\"Ethernet68\","
            "queue=\"4\"}");
  const OwnedLeaf status =
      Leaf("/COUNTERS/Ethernet68/Queues/Ethernet68:3/PFC_WD_STATUS", std::string("stormed"));
  EXPECT_EQ(MapToString(sonic, status),
            "fabric_switch_pfc_watchdog_stormed{interface=\"Ethernet68\",queue=\"3\"}");
  EXPECT_EQ(MapValue(sonic, status), 1.0);
  EXPECT_EQ(MapValue(sonic, Leaf("/COUNTERS/Ethernet68/Queues/Ethernet68:3/PFC_WD_STATUS",
                                 std::string("operational"))),
            0.0);
}

TEST(GnmiProfileMap, AristaPfcPrioritiesAndWatchdog) {
  const GnmiProfile& arista = Shipped("arista-eos");
  EXPECT_EQ(MapToString(arista, Leaf("/interfaces/interface[name=Ethernet3]/ethernet/pfc/"
                                     "priorities/priority[index=3]/state/out-frames",
                                     uint64_t{9})),
            "fabric_pfc_pause_frames_total{direction=\"tx\",interface=\"Ethernet3\","
            "priority=\"3\"}");
  for (const char* key : {"queue", "name", "id"}) {
    EXPECT_EQ(MapToString(arista, Leaf(absl::StrCat("/interfaces/interface[name=Ethernet3]/"
                                                    "ethernet/pfc/watchdog/tx-queues/tx-queue[",
                                                    key, "=3]/state/stuck-count"),
                                       uint64_t{1})),
              "fabric_switch_pfc_watchdog_storms_detected_total{interface=\"Ethernet3\","
              "queue=\"3\"}")
        << key;
  }
  // OpenConfig paths come from the included profile.
  EXPECT_EQ(MapToString(arista, Leaf("/interfaces/interface[name=Ethernet3]/state/counters/"
                                     "in-octets",
                                     uint64_t{9})),
            "fabric_switch_interface_receive_bytes_total{interface=\"Ethernet3\"}");
}

TEST(GnmiProfileMap, CumulusSwitchPriorityPausesAndQueueDrops) {
  const GnmiProfile& cumulus = Shipped("cumulus");
  EXPECT_EQ(MapToString(cumulus, Leaf("/qos/interfaces/interface[interface-id=swp1]/state/"
                                      "switch-priority[priority=3]/counters/out-pause-pkts",
                                      uint64_t{4})),
            "fabric_pfc_pause_frames_total{direction=\"tx\",interface=\"swp1\",priority=\"3\"}");
  EXPECT_EQ(MapToString(cumulus, Leaf("/qos/interfaces/interface[interface-id=swp1]/output/"
                                      "queues/queue[name=3]/state/wred-dropped-pkts",
                                      uint64_t{4})),
            "fabric_switch_queue_dropped_packets_total{interface=\"swp1\",queue=\"3\"}");
  EXPECT_EQ(MapToString(cumulus, Leaf("/interfaces/interface[name=swp1]/state/oper-status",
                                      std::string("DOWN"))),
            "fabric_switch_interface_oper_up{interface=\"swp1\"}");
}

// ---- real-world samples, through the decoder ------------------------------------------

// Every mapped leaf of `notifications` as "series{labels} value".
std::vector<std::string> MapAll(const GnmiProfile& profile,
                                const std::vector<::gnmi::Notification>& notifications,
                                int* unmapped = nullptr) {
  std::vector<std::string> out;
  for (const ::gnmi::Notification& n : notifications) {
    for (const OwnedLeaf& leaf : Decode(n)) {
      GnmiMappedSeries m;
      if (!profile.Map(leaf.View(), m)) {
        if (unmapped != nullptr) ++*unmapped;
        continue;
      }
      std::optional<double> v = m.rule->Evaluate(leaf.value);
      const std::string name =
          m.metric != nullptr ? std::string(m.metric->name) : absl::StrCat("join:", m.rule->join_label);
      out.push_back(absl::StrCat(FormatSeries(name, m.labels), " ",
                                 v.has_value() ? absl::StrCat(*v) : "none"));
    }
  }
  return out;
}

::gnmi::Notification JsonIetf(std::string_view target, std::string_view path,
                              const std::string& json) {
  ::gnmi::Notification n;
  n.mutable_prefix()->set_target(std::string(target));
  ::gnmi::Update* u = n.add_update();
  *u->mutable_path() = *ParseGnmiPath(path);
  u->mutable_val()->set_json_ietf_val(json);
  return n;
}

// The notifications of a captured sample in tests/fixtures/gnmi/, through ReadGnmiCapture.
std::vector<::gnmi::Notification> Capture(const std::string& file) {
  absl::StatusOr<std::string> text = ReadFile(kFixtures + file);
  EXPECT_TRUE(text.ok()) << text.status();
  if (!text.ok()) return {};
  absl::StatusOr<GnmiCapture> capture = ReadGnmiCapture(*text, file);
  EXPECT_TRUE(capture.ok()) << capture.status();
  if (!capture.ok()) return {};
  EXPECT_THAT(capture->errors, IsEmpty()) << file;
  return std::move(capture->notifications);
}

TEST(GnmiProfileSamples, SonicEthernet68PortCounters) {
  absl::StatusOr<std::string> json =
      ReadFile(kFixtures + "sonic_testdata_COUNTERS_Ethernet68_port_counters_incl_PFC.json");
  ASSERT_TRUE(json.ok()) << json.status();
  int unmapped = 0;
  std::vector<std::string> mapped =
      MapAll(Shipped("sonic"), {JsonIetf("COUNTERS_DB", "/COUNTERS/Ethernet68", *json)}, &unmapped);
  // 6 interface counters and 16 PFC counters (8 priorities x rx/tx); the sample has no
  // SAI_PORT_STAT_PAUSE_*.
  EXPECT_EQ(mapped.size(), 22u);
  EXPECT_GT(unmapped, 50);
  EXPECT_THAT(mapped,
              ::testing::Contains("fabric_pfc_pause_frames_total{direction=\"rx\",interface="
                                  "\"Ethernet68\",priority=\"7\"} 2"));
  EXPECT_THAT(mapped, ::testing::Contains("fabric_switch_interface_receive_bytes_total{interface="
                                          "\"Ethernet68\"} 0"));
}

TEST(GnmiProfileSamples, SonicEthernet68Pfcwd) {
  absl::StatusOr<std::string> json =
      ReadFile(kFixtures + "sonic_testdata_COUNTERS_Ethernet68_Pfcwd.json");
  ASSERT_TRUE(json.ok()) << json.status();
  std::vector<std::string> mapped =
      MapAll(Shipped("sonic"), {JsonIetf("COUNTERS_DB", "/COUNTERS/Ethernet68/Pfcwd", *json)});
  std::sort(mapped.begin(), mapped.end());
  EXPECT_THAT(
      mapped,
      ElementsAre(
          "fabric_switch_pfc_watchdog_stormed{interface=\"Ethernet68\",queue=\"3\"} 0",
          "fabric_switch_pfc_watchdog_stormed{interface=\"Ethernet68\",queue=\"4\"} 0",
          "fabric_switch_pfc_watchdog_storms_detected_total{interface=\"Ethernet68\",queue=\"3\"} "
          "0",
          "fabric_switch_pfc_watchdog_storms_detected_total{interface=\"Ethernet68\",queue=\"4\"} "
          "0",
          "fabric_switch_pfc_watchdog_storms_restored_total{interface=\"Ethernet68\",queue=\"3\"} "
          "0",
          "fabric_switch_pfc_watchdog_storms_restored_total{interface=\"Ethernet68\",queue=\"4\"} "
          "0"));
  // Its SAI_QUEUE_STAT_* fields are not mapped from the Pfcwd path: the Queues subscription
  // supplies them, and one series must not be fed from two leaves.
}

TEST(GnmiProfileSamples, SonicQueuesGetResponses) {
  const std::vector<::gnmi::Notification> notifications =
      Capture("gnmi_notif_03_sonic_countersdb_queues_pfcwd_json_ietf.md");
  ASSERT_FALSE(notifications.empty());
  std::vector<std::string> mapped = MapAll(Shipped("sonic"), notifications);
  EXPECT_THAT(mapped, ::testing::Contains("fabric_switch_queue_transmit_packets_total{"
                                          "interface=\"etp10\",queue=\"7\"} 527"));
  EXPECT_THAT(mapped, ::testing::Contains("fabric_switch_queue_transmit_bytes_total{"
                                          "interface=\"etp10\",queue=\"7\"} 656106"));
  EXPECT_THAT(mapped, ::testing::Contains("fabric_switch_pfc_watchdog_stormed{"
                                          "interface=\"etp11a\",queue=\"4\"} 0"));
  EXPECT_THAT(mapped, ::testing::Contains("fabric_switch_queue_dropped_packets_total{"
                                          "interface=\"Ethernet68\",queue=\"0\"} 0"));
  for (const std::string& m : mapped) {
    EXPECT_THAT(m, ::testing::Not(HasSubstr("periodic"))) << m;
    EXPECT_THAT(m, ::testing::Not(HasSubstr(" none"))) << m;
  }
}

TEST(GnmiProfileSamples, SonicGetOfOnePortAndOneCounter) {
  const std::vector<::gnmi::Notification> notifications =
      Capture("gnmi_notif_02_sonic_countersdb_pfc_get_and_subscribe_stream_poll.md");
  ASSERT_FALSE(notifications.empty());
  std::vector<std::string> mapped = MapAll(Shipped("sonic"), notifications);
  EXPECT_THAT(mapped, ::testing::Contains("fabric_pfc_pause_frames_total{direction=\"rx\","
                                          "interface=\"Ethernet9\",priority=\"7\"} 0"));
  EXPECT_THAT(mapped, ::testing::Contains("fabric_pfc_pause_frames_total{direction=\"tx\","
                                          "interface=\"Ethernet9\",priority=\"0\"} 0"));
}

TEST(GnmiProfileSamples, AristaDebugLogInterfaceCounters) {
  const std::vector<::gnmi::Notification> notifications =
      Capture("gnmi_notif_09_arista_eos_gnmic_debug_prototext_counters.txt");
  ASSERT_FALSE(notifications.empty());
  int unmapped = 0;
  std::vector<std::string> mapped = MapAll(Shipped("arista-eos"), notifications, &unmapped);
  // in-discards is mapped; in-broadcast-pkts has no canonical series.
  EXPECT_THAT(mapped, ElementsAre("fabric_switch_interface_receive_discards_total{"
                                  "interface=\"Ethernet1\"} 0"));
  EXPECT_EQ(unmapped, 1);
}

TEST(GnmiProfileSamples, SrLinuxNativePathsMapToNothing) {
  const std::vector<::gnmi::Notification> notifications =
      Capture("gnmi_notif_07_srlinux_event_format_interface_statistics.json");
  ASSERT_FALSE(notifications.empty());
  for (std::string_view name : {"openconfig", "sonic", "arista-eos", "cumulus"}) {
    int unmapped = 0;
    EXPECT_THAT(MapAll(Shipped(name), notifications, &unmapped), IsEmpty()) << name;
    EXPECT_GE(unmapped, 18) << name;
  }
}

}  // namespace
}  // namespace railwatch
