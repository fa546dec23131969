// Switch optics and FEC in the shipped path profiles (docs/LINK_HEALTH.md, "Switch optics and
// FEC"): the leaves each dialect serves, built by hand and, for SONiC's JSON blobs, through the
// decoder, map to the canonical fabric_optics_* and fabric_switch_interface_fec_* series; and
// the pattern and profile features they need (lane offsets, identityref keys, joins, absent
// readings, attribute texts, optional groups).

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gnmi/path_pattern.h"
#include "gnmi/profile.h"
#include "gtest/gtest.h"

namespace railwatch {
namespace optics_profile_test {

using ::testing::HasSubstr;

const std::string kProfilesDir = std::string(RAILWATCH_SOURCE_DIR) + "/profiles/gnmi";

struct Leaf {
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
  std::vector<Leaf> leaves;
};

std::vector<Leaf> DecodeAll(const ::gnmi::Notification& n) {
  GnmiDecoder decoder;
  Collect c;
  decoder.Decode(n, c);
  EXPECT_EQ(decoder.stats().errors, 0u);
  return c.leaves;
}

// One leaf at `path` with `value`, through the decoder (a typed value, as OpenConfig targets
// send them).
Leaf At(std::string_view path, GnmiScalar value) {
  absl::StatusOr<::gnmi::Path> p = ParseGnmiPath(path);
  EXPECT_TRUE(p.ok()) << p.status();
  ::gnmi::Notification n;
  ::gnmi::Update* u = n.add_update();
  *u->mutable_path() = *p;
  if (const auto* s = std::get_if<std::string>(&value)) u->mutable_val()->set_string_val(*s);
  if (const auto* v = std::get_if<uint64_t>(&value)) u->mutable_val()->set_uint_val(*v);
  if (const auto* d = std::get_if<double>(&value)) u->mutable_val()->set_double_val(*d);
  std::vector<Leaf> leaves = DecodeAll(n);
  EXPECT_EQ(leaves.size(), 1u) << path;
  return leaves.empty() ? Leaf{} : leaves[0];
}

// The leaves of a SONiC json_ietf blob at `path` on `target`, as sonic-gnmi answers.
std::vector<Leaf> Blob(std::string_view target, std::string_view path, std::string_view json) {
  absl::StatusOr<::gnmi::Path> p = ParseGnmiPath(path);
  EXPECT_TRUE(p.ok()) << p.status();
  ::gnmi::Notification n;
  n.mutable_prefix()->set_target(std::string(target));
  ::gnmi::Update* u = n.add_update();
  *u->mutable_path() = *p;
  u->mutable_val()->set_json_ietf_val(std::string(json));
  return DecodeAll(n);
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
  return profiles->front();
}

// What a leaf maps to, as one string: "series{labels} = value", "join component{labels} =
// text", "series{labels} absent", or "" when unmapped.
std::string Mapped(const GnmiProfile& profile, const Leaf& leaf) {
  GnmiMappedSeries m;
  if (!profile.Map(leaf.View(), m)) return "";
  if (!m.rule->join_label.empty()) {
    return absl::StrCat("join ", m.rule->join_label, FormatSeries("", m.labels), " = ",
                        m.rule->Text(leaf.value));
  }
  const std::string series = FormatSeries(m.metric->name, m.labels);
  if (m.rule->IsAbsent(leaf.value)) return absl::StrCat(series, " absent");
  if (!m.rule->value_label.empty()) {
    return absl::StrCat(series, " ", m.rule->value_label, "=", m.rule->Text(leaf.value));
  }
  const std::optional<double> v = m.rule->Evaluate(leaf.value);
  return absl::StrCat(series, " = ", v.has_value() ? absl::StrCat(*v) : "none");
}

std::vector<std::string> MappedAll(const GnmiProfile& profile, const std::vector<Leaf>& leaves) {
  std::vector<std::string> out;
  for (const Leaf& l : leaves) out.push_back(Mapped(profile, l));
  return out;
}

// ---- patterns and profile features ----------------------------------------------------------

std::string MatchPattern(std::string_view pattern, std::string_view path) {
  absl::StatusOr<GnmiPathPattern> p = GnmiPathPattern::Parse(pattern);
  EXPECT_TRUE(p.ok()) << pattern << ": " << p.status();
  if (!p.ok()) return "bad pattern";
  Labels labels;
  if (!p->Match(At(path, uint64_t{1}).elems, labels)) return "no match";
  return FormatLabels(labels);
}

TEST(GnmiOpticsPattern, NumericCapturesTakeAnOffset) {
  EXPECT_EQ(MatchPattern("/c/channel[index={lane:num+1}]/x", "/c/channel[index=0]/x"),
            "lane=\"1\"");
  EXPECT_EQ(MatchPattern("/c/channel[index={lane:num+1}]/x", "/c/channel[index=7]/x"),
            "lane=\"8\"");
  EXPECT_EQ(MatchPattern("/c/ch{lane:num-1}/x", "/c/ch12/x"), "lane=\"11\"");
  EXPECT_EQ(MatchPattern("/c/channel[index={lane:num+1}]/x", "/c/channel[index=a]/x"), "no match");
  GnmiPathPattern::Error error;
  EXPECT_FALSE(GnmiPathPattern::Parse("/a/{lane:num+}/b", &error).ok());
  EXPECT_EQ(error.offset, 3u);
  EXPECT_THAT(error.message, HasSubstr("{lane:num+1}"));
  EXPECT_FALSE(GnmiPathPattern::Parse("/a/{lane+1}/b").ok());
}

TEST(GnmiOpticsPattern, IdentityrefKeysMatchWithOrWithoutTheirModule) {
  const std::string pattern = "/t/threshold[severity=CRITICAL]/x";
  EXPECT_EQ(MatchPattern(pattern, "/t/threshold[severity=CRITICAL]/x"), "");
  EXPECT_EQ(MatchPattern(pattern, "/t/threshold[severity=openconfig-alarm-types:CRITICAL]/x"), "");
  EXPECT_EQ(MatchPattern(pattern, "/t/threshold[severity=openconfig-alarm-types:WARNING]/x"),
            "no match");
  // Only a YANG module prefix is dropped: text with a colon elsewhere stays whole.
  EXPECT_EQ(MatchPattern("/q[name=3]/x", "/q[name=Ethernet68:3]/x"), "no match");
  EXPECT_EQ(MatchPattern("/q[name={n}]/x", "/q[name=Ethernet68:3]/x"), "n=\"Ethernet68:3\"");
}

TEST(GnmiOpticsProfile, JoinsAbsentTextsAndGroupsLoad) {
  absl::StatusOr<GnmiProfile> p = GnmiProfile::LoadString(
      "name: t\n"
      "subscriptions:\n"
      "  - {name: a, path: /a, optional: optics}\n"
      "  - {name: b, path: /b, optional: true}\n"
      "  - {name: c, path: /c}\n"
      "mappings:\n"
      "  - {path: \"/i[name={interface}]/transceiver\", join: component}\n"
      "  - {path: \"/c[name={component}]/t\", series: fabric_optics_temperature_celsius, "
      "absent: [N/A, \"\"]}\n"
      "  - {path: \"/c[name={component}]/ff\", series: fabric_optics_module_info, "
      "value_label: form_factor, values: {QSFP56_DD: QSFP-DD}}\n",
      "t.yaml");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->join_labels(), std::vector<std::string>{"component"});
  ASSERT_EQ(p->subscriptions().size(), 3u);
  EXPECT_TRUE(p->subscriptions()[0].optional);
  EXPECT_EQ(p->subscriptions()[0].optional_group, "optics");
  EXPECT_TRUE(p->subscriptions()[1].optional);
  EXPECT_EQ(p->subscriptions()[1].optional_group, "");
  EXPECT_FALSE(p->subscriptions()[2].optional);
  // A join mapping names no series.
  EXPECT_EQ(p->series().size(), 2u);
  EXPECT_EQ(Mapped(*p, At("/i[name=Ethernet1]/transceiver", std::string("Ethernet1 transceiver"))),
            "join component{interface=\"Ethernet1\"} = Ethernet1 transceiver");
  EXPECT_EQ(Mapped(*p, At("/c[name=X]/t", std::string("N/A"))),
            "fabric_optics_temperature_celsius{component=\"X\"} absent");
  EXPECT_EQ(Mapped(*p, At("/c[name=X]/t", 41.5)),
            "fabric_optics_temperature_celsius{component=\"X\"} = 41.5");
  // Attribute texts: listed ones renamed (with or without the identity's module), others
  // without their module.
  EXPECT_EQ(Mapped(*p, At("/c[name=X]/ff", std::string("openconfig-transport-types:QSFP56_DD"))),
            "fabric_optics_module_info{component=\"X\"} form_factor=QSFP-DD");
  EXPECT_EQ(Mapped(*p, At("/c[name=X]/ff", std::string("openconfig-transport-types:OSFP"))),
            "fabric_optics_module_info{component=\"X\"} form_factor=OSFP");
}

TEST(GnmiOpticsProfile, BadJoinsAndGroupsAreReportedWhereTheyAre) {
  absl::StatusOr<GnmiProfile> p = GnmiProfile::LoadString(
      "name: t\n"                                          // 1
      "subscriptions:\n"                                   // 2
      "  - {name: a, path: /a, optional: Optics Group}\n"  // 3
      "mappings:\n"                                        // 4
      "  - {path: \"/i[name={interface}]/t\", join: component, series: "
      "fabric_optics_temperature_celsius}\n"                        // 5
      "  - {path: /i/t, join: component}\n"                         // 6
      "  - {path: \"/i[name={component}]/t\", join: component}\n",  // 7
      "t.yaml");
  ASSERT_FALSE(p.ok());
  const std::string msg(p.status().message());
  EXPECT_THAT(msg, HasSubstr("t.yaml:3:35: error[bad-value]: optional `Optics Group`"));
  EXPECT_THAT(msg, HasSubstr("t.yaml:5:63: error[bad-join]: a `join` mapping makes no series: "
                             "no `series`"));
  EXPECT_THAT(msg, HasSubstr("t.yaml:6:12: error[bad-join]: a `join` path captures"));
  EXPECT_THAT(msg, HasSubstr("t.yaml:7:44: error[bad-join]: label `component` is both joined "
                             "and captured"));
}

// ---- OpenConfig (openconfig, arista-eos, cumulus) -------------------------------------------

constexpr char kComponent[] = "/components/component[name=Ethernet3 transceiver]";

TEST(GnmiOpticsMap, OpenConfigTransceiverLeavesCaptureTheirComponent) {
  for (const char* dialect : {"openconfig", "arista-eos", "cumulus"}) {
    SCOPED_TRACE(dialect);
    const GnmiProfile& p = Shipped(dialect);
    EXPECT_EQ(p.join_labels(), std::vector<std::string>{"component"});
    EXPECT_EQ(Mapped(p, At("/interfaces/interface[name=Ethernet3]/state/transceiver",
                           std::string("Ethernet3 transceiver"))),
              "join component{interface=\"Ethernet3\"} = Ethernet3 transceiver");
    const std::string c = "component=\"Ethernet3 transceiver\"";
    EXPECT_EQ(Mapped(p, At(absl::StrCat(kComponent, "/state/temperature/instant"), 47.25)),
              absl::StrCat("fabric_optics_temperature_celsius{", c, "} = 47.25"));
    EXPECT_EQ(
        Mapped(p, At(absl::StrCat(kComponent, "/transceiver/state/supply-voltage/instant"), 3.29)),
        absl::StrCat("fabric_optics_supply_voltage_volts{", c, "} = 3.29"));
    // Channels count from 0 in the model; lanes from 1.
    const std::string channel =
        absl::StrCat(kComponent, "/transceiver/physical-channels/channel[index=0]/state/");
    EXPECT_EQ(Mapped(p, At(channel + "input-power/instant", -1.75)),
              absl::StrCat("fabric_optics_rx_power_dbm{", c, ",lane=\"1\"} = -1.75"));
    EXPECT_EQ(Mapped(p, At(channel + "output-power/instant", 1.5)),
              absl::StrCat("fabric_optics_tx_power_dbm{", c, ",lane=\"1\"} = 1.5"));
    EXPECT_EQ(Mapped(p, At(channel + "laser-bias-current/instant", 8.125)),
              absl::StrCat("fabric_optics_tx_bias_milliamperes{", c, ",lane=\"1\"} = 8.125"));
    // Identity: identityrefs named as the host agent names them.
    EXPECT_EQ(Mapped(p, At(absl::StrCat(kComponent, "/transceiver/state/form-factor"),
                           std::string("openconfig-transport-types:QSFP56_DD"))),
              absl::StrCat("fabric_optics_module_info{", c, "} form_factor=QSFP-DD"));
    EXPECT_EQ(Mapped(p, At(absl::StrCat(kComponent, "/transceiver/state/ethernet-pmd"),
                           std::string("openconfig-transport-types:ETH_400GBASE_DR4"))),
              absl::StrCat("fabric_optics_module_info{", c, "} media=400GBASE-DR4"));
    EXPECT_EQ(Mapped(p, At(absl::StrCat(kComponent, "/state/serial-no"), std::string("MT1"))),
              absl::StrCat("fabric_optics_module_info{", c, "} serial=MT1"));
    EXPECT_EQ(Mapped(p, At(absl::StrCat(kComponent, "/state/part-no"), std::string("MMS4X00"))),
              absl::StrCat("fabric_optics_module_info{", c, "} part_number=MMS4X00"));
    EXPECT_EQ(
        Mapped(p, At(absl::StrCat(kComponent, "/transceiver/state/vendor"), std::string("NVIDIA"))),
        absl::StrCat("fabric_optics_module_info{", c, "} vendor=NVIDIA"));
    // FEC at the port's PHY.
    EXPECT_EQ(Mapped(p, At("/interfaces/interface[name=Ethernet3]/ethernet/state/counters/"
                           "fec-corrected-blocks",
                           uint64_t{12})),
              "fabric_switch_interface_fec_corrected_blocks_total{interface=\"Ethernet3\"} = 12");
    EXPECT_EQ(Mapped(p, At("/interfaces/interface[name=Ethernet3]/ethernet/state/counters/"
                           "fec-uncorrectable-blocks",
                           uint64_t{0})),
              "fabric_switch_interface_fec_uncorrectable_blocks_total{interface=\"Ethernet3\"} "
              "= 0");
    EXPECT_EQ(Mapped(p, At("/interfaces/interface[name=Ethernet3]/ethernet/state/pre-fec-ber/"
                           "instant",
                           2.5e-7)),
              "fabric_switch_interface_pre_fec_bit_error_ratio{interface=\"Ethernet3\"} = "
              "2.5e-07");
    // Aggregate (transceiver-level) powers and laser temperature are not lanes: unmapped.
    EXPECT_EQ(
        Mapped(p, At(absl::StrCat(kComponent, "/transceiver/state/input-power/instant"), -1.0)),
        "");
  }
}

TEST(GnmiOpticsMap, OpenConfigThresholdsBySeverityAndBound) {
  const GnmiProfile& p = Shipped("openconfig");
  struct Case {
    std::string severity, leaf, want;
  } cases[] = {
      {"CRITICAL", "module-temperature-upper",
       "level=\"alarm_high\",quantity=\"temperature_celsius\""},
      {"WARNING", "module-temperature-upper",
       "level=\"warning_high\",quantity=\"temperature_celsius\""},
      {"WARNING", "module-temperature-lower",
       "level=\"warning_low\",quantity=\"temperature_celsius\""},
      {"openconfig-alarm-types:CRITICAL", "module-temperature-lower",
       "level=\"alarm_low\",quantity=\"temperature_celsius\""},
      {"CRITICAL", "supply-voltage-upper",
       "level=\"alarm_high\",quantity=\"supply_voltage_volts\""},
      {"WARNING", "laser-bias-current-upper",
       "level=\"warning_high\",quantity=\"tx_bias_milliamperes\""},
      {"openconfig-alarm-types:WARNING", "output-power-lower",
       "level=\"warning_low\",quantity=\"tx_power_dbm\""},
      {"CRITICAL", "input-power-lower", "level=\"alarm_low\",quantity=\"rx_power_dbm\""},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.severity + " " + k.leaf);
    EXPECT_EQ(Mapped(p, At(absl::StrCat(kComponent, "/transceiver/thresholds/threshold[severity=",
                                        k.severity, "]/state/", k.leaf),
                           -9.5)),
              absl::StrCat("fabric_optics_threshold{component=\"Ethernet3 transceiver\",", k.want,
                           "} = -9.5"));
  }
  // MAJOR and MINOR have no level of ours, nor does the laser's own temperature.
  EXPECT_EQ(Mapped(p, At(absl::StrCat(kComponent,
                                      "/transceiver/thresholds/threshold[severity="
                                      "MAJOR]/state/input-power-lower"),
                         -9.5)),
            "");
  EXPECT_EQ(Mapped(p, At(absl::StrCat(kComponent,
                                      "/transceiver/thresholds/threshold[severity="
                                      "CRITICAL]/state/laser-temperature-upper"),
                         70.0)),
            "");
}

// ---- SONiC ---------------------------------------------------------------------------------

TEST(GnmiOpticsMap, SonicDomThresholdsAndInfoFromStateDb) {
  const GnmiProfile& sonic = Shipped("sonic");
  EXPECT_TRUE(sonic.join_labels().empty());
  // xcvrd's hash for a 4-lane module under an 8-lane schema, as a wildcard subscription
  // answers it (the port as the blob's key).
  const std::vector<Leaf> dom = Blob(
      "STATE_DB", "/TRANSCEIVER_DOM_SENSOR/Ethernet*",
      R"({"Ethernet8": {"temperature": "45.1328", "voltage": "3.2890", "rx1power": "-1.8742",)"
      R"( "rx5power": "N/A", "tx2bias": "8.1010", "tx3power": "-inf", "laser_temperature": "N/A",)"
      R"( "last_update_time": "Sat Nov 28 16:00:00 2026", "tx_config_power": "1.0"}})");
  EXPECT_THAT(
      MappedAll(sonic, dom),
      ::testing::UnorderedElementsAre(
          "fabric_optics_temperature_celsius{interface=\"Ethernet8\"} = 45.1328",
          "fabric_optics_supply_voltage_volts{interface=\"Ethernet8\"} = 3.289",
          "fabric_optics_rx_power_dbm{interface=\"Ethernet8\",lane=\"1\"} = -1.8742",
          "fabric_optics_rx_power_dbm{interface=\"Ethernet8\",lane=\"5\"} absent",
          "fabric_optics_tx_bias_milliamperes{interface=\"Ethernet8\",lane=\"2\"} = 8.101",
          "fabric_optics_tx_power_dbm{interface=\"Ethernet8\",lane=\"3\"} = -40", "", "", ""));
  const std::vector<Leaf> thresholds =
      Blob("STATE_DB", "/TRANSCEIVER_DOM_THRESHOLD/Ethernet8",
           R"({"temphighalarm": "80.0", "rxpowerlowwarning": "-6.9", "vcclowalarm": "N/A",)"
           R"( "lasertemphighalarm": "75.0"})");
  EXPECT_THAT(MappedAll(sonic, thresholds),
              ::testing::UnorderedElementsAre(
                  "fabric_optics_threshold{interface=\"Ethernet8\",level=\"alarm_high\","
                  "quantity=\"temperature_celsius\"} = 80",
                  "fabric_optics_threshold{interface=\"Ethernet8\",level=\"warning_low\","
                  "quantity=\"rx_power_dbm\"} = -6.9",
                  "fabric_optics_threshold{interface=\"Ethernet8\",level=\"alarm_low\","
                  "quantity=\"supply_voltage_volts\"} absent",
                  ""));
  const std::vector<Leaf> info = Blob(
      "STATE_DB", "/TRANSCEIVER_INFO/Ethernet8",
      R"({"type": "QSFP-DD Double Density 8X Pluggable Transceiver", "manufacturer": "NVIDIA",)"
      R"( "model": "MMS4X00-NS400", "serial": "MT2423FT00007",)"
      R"j( "media_interface_code": "400GBASE-DR4 (Cl 124)", "vendor_rev": "A6"})j");
  EXPECT_THAT(MappedAll(sonic, info),
              ::testing::UnorderedElementsAre(
                  "fabric_optics_module_info{interface=\"Ethernet8\"} form_factor=QSFP-DD",
                  "fabric_optics_module_info{interface=\"Ethernet8\"} vendor=NVIDIA",
                  "fabric_optics_module_info{interface=\"Ethernet8\"} part_number=MMS4X00-NS400",
                  "fabric_optics_module_info{interface=\"Ethernet8\"} serial=MT2423FT00007",
                  "fabric_optics_module_info{interface=\"Ethernet8\"} media=400GBASE-DR4", ""));
}

TEST(GnmiOpticsMap, SonicFecCountersAndCodewordBins) {
  const GnmiProfile& sonic = Shipped("sonic");
  const std::vector<Leaf> counters =
      Blob("COUNTERS_DB", "/COUNTERS/Ethernet*",
           R"({"Ethernet0": {"SAI_PORT_STAT_IF_IN_FEC_CORRECTABLE_FRAMES": "136403",)"
           R"( "SAI_PORT_STAT_IF_IN_FEC_NOT_CORRECTABLE_FRAMES": "34",)"
           R"( "SAI_PORT_STAT_IF_IN_FEC_SYMBOL_ERRORS": "40",)"
           R"( "SAI_PORT_STAT_IF_IN_FEC_CORRECTED_BITS": "140000",)"
           R"( "SAI_PORT_STAT_IF_IN_FEC_CODEWORD_ERRORS_S0": "90000000",)"
           R"( "SAI_PORT_STAT_IF_IN_FEC_CODEWORD_ERRORS_S16": "34"}})");
  EXPECT_THAT(
      MappedAll(sonic, counters),
      ::testing::UnorderedElementsAre(
          "fabric_switch_interface_fec_corrected_blocks_total{interface=\"Ethernet0\"} = 136403",
          "fabric_switch_interface_fec_uncorrectable_blocks_total{interface=\"Ethernet0\"} = 34",
          "fabric_switch_interface_fec_symbol_errors_total{interface=\"Ethernet0\"} = 40",
          "fabric_switch_interface_fec_corrected_bit_errors_total{interface=\"Ethernet0\"} = "
          "140000",
          "fabric_switch_interface_fec_codewords_total{interface=\"Ethernet0\","
          "symbol_errors=\"0\"} = 9e+07",
          "fabric_switch_interface_fec_codewords_total{interface=\"Ethernet0\","
          "symbol_errors=\"16\"} = 34"));
}

}  // namespace optics_profile_test
}  // namespace railwatch
