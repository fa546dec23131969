// GnmiDecoder on inline notifications (every TypedValue form, deletes, prefixes, JSON rules)
// and on the SONiC COUNTERS_DB test data as json_ietf_val blobs.

#include "gnmi/decode.h"

#include "gmock/gmock.h"
#include "gnmi_test_util.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

// Targets still send the fields gNMI deprecated (float_val, decimal_val, Path.element,
// Update.value), and the decoder reads them (gnmi/decode.cc): these tests write them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace railwatch {
namespace decode_test {

using ::testing::ElementsAre;
using testing::ReadFixture;
using testing::RecordingVisitor;

::gnmi::Notification FromText(const std::string& text) {
  ::gnmi::Notification n;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &n)) << text;
  return n;
}

::gnmi::Path P(const std::string& text) {
  absl::StatusOr<::gnmi::Path> p = ParseGnmiPath(text);
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : ::gnmi::Path();
}

RecordingVisitor DecodeOne(const ::gnmi::Notification& n, GnmiDecodeStats* stats = nullptr) {
  GnmiDecoder decoder;
  RecordingVisitor v;
  decoder.Decode(n, v);
  if (stats != nullptr) *stats = decoder.stats();
  return v;
}

TEST(GnmiDecode, EveryScalarTypedValueForm) {
  ::gnmi::Notification n;
  n.set_timestamp(1700000000123456789);
  auto add = [&n](const std::string& leaf) {
    ::gnmi::Update* u = n.add_update();
    *u->mutable_path() = P("/x/" + leaf);
    return u->mutable_val();
  };
  add("s")->set_string_val("UP");
  add("a")->set_ascii_val("ascii");
  add("b")->set_bytes_val(std::string("\x01\x00z", 3));
  add("i")->set_int_val(-42);
  add("u")->set_uint_val(18446744073709551615ull);
  add("t")->set_bool_val(true);
  add("d")->set_double_val(2.5);
  add("f")->set_float_val(0.25f);
  ::gnmi::Decimal64* dec = add("dec")->mutable_decimal_val();
  dec->set_digits(12345);
  dec->set_precision(2);

  RecordingVisitor v = DecodeOne(n);
  ASSERT_EQ(v.leaves.size(), 9u);
  EXPECT_EQ(std::get<std::string>(v.At("/x/s")[0].value), "UP");
  EXPECT_EQ(std::get<std::string>(v.At("/x/a")[0].value), "ascii");
  EXPECT_EQ(std::get<std::string>(v.At("/x/b")[0].value), std::string("\x01\x00z", 3));
  EXPECT_EQ(std::get<int64_t>(v.At("/x/i")[0].value), -42);
  EXPECT_EQ(std::get<uint64_t>(v.At("/x/u")[0].value), 18446744073709551615ull);
  EXPECT_EQ(std::get<bool>(v.At("/x/t")[0].value), true);
  EXPECT_DOUBLE_EQ(std::get<double>(v.At("/x/d")[0].value), 2.5);
  EXPECT_DOUBLE_EQ(std::get<double>(v.At("/x/f")[0].value), 0.25);
  EXPECT_DOUBLE_EQ(std::get<double>(v.At("/x/dec")[0].value), 123.45);
  for (const auto& l : v.leaves) {
    EXPECT_EQ(l.time, 1700000000123456789);
    EXPECT_FALSE(l.deleted);
  }
}

TEST(GnmiDecode, LeafListIsOneLeafPerElement) {
  auto n = FromText(R"pb(
    update {
      path { elem { name: "system" } elem { name: "dns" } elem { name: "servers" } }
      val { leaflist_val { element { string_val: "10.0.0.1" } element { uint_val: 7 } } }
    })pb");
  RecordingVisitor v = DecodeOne(n);
  auto at = v.At("/system/dns/servers");
  ASSERT_EQ(at.size(), 2u);
  EXPECT_EQ(std::get<std::string>(at[0].value), "10.0.0.1");
  EXPECT_EQ(std::get<uint64_t>(at[1].value), 7u);
}

TEST(GnmiDecode, PrefixAndPathMergeWithOriginTargetAndSortedKeys) {
  auto n = FromText(R"pb(
    timestamp: 5
    prefix {
      origin: "openconfig"
      target: "leaf-7"
      elem { name: "openconfig-interfaces:interfaces" }
      elem { name: "interface" key { key: "name" value: "Ethernet1" } }
    }
    update {
      path {
        elem { name: "state" }
        elem { name: "queue" key { key: "z" value: "1" } key { key: "a" value: "2" } }
        elem { name: "in-octets" }
      }
      val { uint_val: 9 }
    }
    update {
      path { target: "other" origin: "eos_native" elem { name: "x" } }
      val { uint_val: 1 }
    })pb");
  RecordingVisitor v = DecodeOne(n);
  ASSERT_EQ(v.leaves.size(), 2u);
  EXPECT_EQ(v.leaves[0].path, "/interfaces/interface[name=Ethernet1]/state/queue[a=2][z=1]/in-octets");
  EXPECT_EQ(v.leaves[0].origin, "openconfig");
  EXPECT_EQ(v.leaves[0].target, "leaf-7");
  EXPECT_EQ(v.leaves[1].path, "/interfaces/interface[name=Ethernet1]/x");
  EXPECT_EQ(v.leaves[1].origin, "eos_native");
  EXPECT_EQ(v.leaves[1].target, "other");
}

TEST(GnmiDecode, DeletesAreLeavesWithoutValue) {
  auto n = FromText(R"pb(
    timestamp: 77
    prefix { elem { name: "interfaces" } }
    delete { elem { name: "interface" key { key: "name" value: "Ethernet9" } } }
  )pb");
  GnmiDecodeStats stats;
  RecordingVisitor v = DecodeOne(n, &stats);
  ASSERT_EQ(v.leaves.size(), 1u);
  EXPECT_TRUE(v.leaves[0].deleted);
  EXPECT_TRUE(std::holds_alternative<std::monostate>(v.leaves[0].value));
  EXPECT_EQ(v.leaves[0].path, "/interfaces/interface[name=Ethernet9]");
  EXPECT_EQ(v.leaves[0].time, 77);
  EXPECT_EQ(stats.deletes, 1u);
  EXPECT_EQ(stats.leaves, 0u);
}

TEST(GnmiDecode, DeprecatedElementPathAndValue) {
  ::gnmi::Notification n;
  ::gnmi::Update* u = n.add_update();
  u->mutable_path()->add_element("interfaces");
  u->mutable_path()->add_element("interface[name=Ethernet2]");
  u->mutable_path()->add_element("mtu");
  u->mutable_value()->set_value("9100");
  u->mutable_value()->set_type(::gnmi::JSON);
  ::gnmi::Update* u2 = n.add_update();
  u2->mutable_path()->add_element("descr");
  u2->mutable_value()->set_value("uplink");
  u2->mutable_value()->set_type(::gnmi::BYTES);
  RecordingVisitor v = DecodeOne(n);
  ASSERT_EQ(v.leaves.size(), 2u);
  EXPECT_EQ(v.leaves[0].path, "/interfaces/interface[name=Ethernet2]/mtu");
  EXPECT_EQ(std::get<uint64_t>(v.leaves[0].value), 9100u);
  EXPECT_EQ(std::get<std::string>(v.leaves[1].value), "uplink");
}

TEST(GnmiDecode, SonicPortCountersBlob) {
  ::gnmi::Notification n;
  n.set_timestamp(1);
  n.mutable_prefix()->set_target("COUNTERS_DB");
  ::gnmi::Update* u = n.add_update();
  *u->mutable_path() = P("/COUNTERS/Ethernet68");
  u->mutable_val()->set_json_ietf_val(
      ReadFixture("sonic_testdata_COUNTERS_Ethernet68_port_counters_incl_PFC.json"));
  GnmiDecodeStats stats;
  RecordingVisitor v = DecodeOne(n, &stats);
  EXPECT_EQ(stats.errors, 0u);
  EXPECT_GT(v.leaves.size(), 100u);
  auto pfc7 = v.At("/COUNTERS/Ethernet68/SAI_PORT_STAT_PFC_7_RX_PKTS");
  ASSERT_EQ(pfc7.size(), 1u);
  EXPECT_EQ(std::get<std::string>(pfc7[0].value), "2");  // strings stay strings
  EXPECT_EQ(GnmiScalarAsUint(pfc7[0].value), 2u);
  EXPECT_EQ(pfc7[0].target, "COUNTERS_DB");
  for (int p = 0; p < 8; ++p) {
    EXPECT_EQ(v.At("/COUNTERS/Ethernet68/SAI_PORT_STAT_PFC_" + std::to_string(p) + "_TX_PKTS")
                  .size(),
              1u);
  }
}

TEST(GnmiDecode, SonicPfcwdBlobKeepsQueueKeysWhole) {
  ::gnmi::Notification n;
  ::gnmi::Update* u = n.add_update();
  *u->mutable_path() = P("/COUNTERS/Ethernet68/Pfcwd");
  u->mutable_val()->set_json_ietf_val(ReadFixture("sonic_testdata_COUNTERS_Ethernet68_Pfcwd.json"));
  RecordingVisitor v = DecodeOne(n);
  EXPECT_EQ(v.leaves.size(), 30u);
  auto status = v.At("/COUNTERS/Ethernet68/Pfcwd/Ethernet68:3/PFC_WD_STATUS");
  ASSERT_EQ(status.size(), 1u);
  EXPECT_EQ(std::get<std::string>(status[0].value), "operational");
  auto detect = v.At("/COUNTERS/Ethernet68/Pfcwd/Ethernet68:4/PFC_WD_DETECTION_TIME");
  ASSERT_EQ(detect.size(), 1u);
  EXPECT_EQ(GnmiScalarAsUint(detect[0].value), 200000u);
}

TEST(GnmiDecode, WildcardLastElemIsFilledByMatchingMembers) {
  ::gnmi::Notification n;
  ::gnmi::Update* u = n.add_update();
  *u->mutable_path() = P("/COUNTERS/Ethernet*");
  u->mutable_val()->set_json_ietf_val(
      R"({"Ethernet0":{"SAI_PORT_STAT_PFC_3_RX_PKTS":"7"},"Ethernet4":{"SAI_PORT_STAT_PFC_3_RX_PKTS":"9"},"other":"1"})");
  RecordingVisitor v = DecodeOne(n);
  ASSERT_EQ(v.leaves.size(), 3u);
  EXPECT_EQ(std::get<std::string>(v.At("/COUNTERS/Ethernet0/SAI_PORT_STAT_PFC_3_RX_PKTS")[0].value), "7");
  EXPECT_EQ(std::get<std::string>(v.At("/COUNTERS/Ethernet4/SAI_PORT_STAT_PFC_3_RX_PKTS")[0].value), "9");
  EXPECT_EQ(v.At("/COUNTERS/Ethernet*/other").size(), 1u);  // does not match: appended
}

TEST(GnmiDecode, OpenConfigJsonIetfListsAndModulePrefixes) {
  ::gnmi::Notification n;
  ::gnmi::Update* u = n.add_update();
  *u->mutable_path() = P("/");
  u->mutable_val()->set_json_ietf_val(R"({
    "openconfig-interfaces:interfaces": {"interface": [
      {"name": "Ethernet1", "config": {"name": "Ethernet1", "mtu": 9100},
       "state": {"counters": {"in-octets": "123"}, "oper-status": "UP"},
       "subinterfaces": {"subinterface": [{"index": 0, "state": {"enabled": true}}]}},
      {"name": "Ethernet2", "state": {"oper-status": "DOWN"}}]},
    "openconfig-qos:qos": {"interfaces": {"interface": [{"interface-id": "Ethernet1",
       "output": {"queues": {"queue": [{"name": "3", "state": {"ecn-marked-pkts": "44"}}]}}}]}},
    "leaves": [null, 1.5, -2]})");
  GnmiDecodeStats stats;
  RecordingVisitor v = DecodeOne(n, &stats);
  EXPECT_EQ(stats.errors, 0u);
  EXPECT_EQ(std::get<std::string>(
                v.At("/interfaces/interface[name=Ethernet1]/state/counters/in-octets")[0].value),
            "123");
  EXPECT_EQ(std::get<uint64_t>(v.At("/interfaces/interface[name=Ethernet1]/config/mtu")[0].value),
            9100u);
  EXPECT_EQ(std::get<std::string>(v.At("/interfaces/interface[name=Ethernet2]/state/oper-status")[0].value),
            "DOWN");
  EXPECT_EQ(v.At("/interfaces/interface[name=Ethernet1]/name").size(), 1u);  // key leaf kept
  EXPECT_EQ(std::get<bool>(v.At("/interfaces/interface[name=Ethernet1]/subinterfaces/"
                                "subinterface[index=0]/state/enabled")[0]
                               .value),
            true);
  EXPECT_EQ(v.At("/qos/interfaces/interface[interface-id=Ethernet1]/output/queues/queue[name=3]/"
                 "state/ecn-marked-pkts")
                .size(),
            1u);
  auto leaflist = v.At("/leaves");
  ASSERT_EQ(leaflist.size(), 2u);  // null holds nothing
  EXPECT_DOUBLE_EQ(std::get<double>(leaflist[0].value), 1.5);
  EXPECT_EQ(std::get<int64_t>(leaflist[1].value), -2);
}

TEST(GnmiDecode, WrappedContainerIsUnwrappedToThePathsLastElem) {
  ::gnmi::Notification n;
  ::gnmi::Update* u = n.add_update();
  *u->mutable_path() = P("/openconfig-interfaces:interfaces/interface[name=Ethernet0]/state/oper-status");
  u->mutable_val()->set_json_ietf_val(R"({"openconfig-interfaces:oper-status":"DOWN"})");
  RecordingVisitor v = DecodeOne(n);
  ASSERT_EQ(v.leaves.size(), 1u);
  EXPECT_EQ(v.leaves[0].path, "/interfaces/interface[name=Ethernet0]/state/oper-status");
  EXPECT_EQ(std::get<std::string>(v.leaves[0].value), "DOWN");
}

TEST(GnmiDecode, BadBlobsAreCountedAndTheRestGoesOn) {
  ::gnmi::Notification n;
  n.add_update()->mutable_path()->add_elem()->set_name("no-value");
  ::gnmi::Update* bad = n.add_update();
  bad->mutable_path()->add_elem()->set_name("bad");
  bad->mutable_val()->set_json_val("{\"a\": ");
  ::gnmi::Update* any = n.add_update();
  any->mutable_path()->add_elem()->set_name("any");
  any->mutable_val()->mutable_any_val();
  ::gnmi::Update* good = n.add_update();
  good->mutable_path()->add_elem()->set_name("good");
  good->mutable_val()->set_json_val("{\"a\": 1}");
  GnmiDecodeStats stats;
  RecordingVisitor v = DecodeOne(n, &stats);
  EXPECT_EQ(stats.errors, 3u);
  ASSERT_EQ(v.leaves.size(), 1u);
  EXPECT_EQ(v.leaves[0].path, "/good/a");
}

TEST(GnmiDecode, ModulePrefixRule) {
  EXPECT_EQ(StripGnmiModulePrefix("openconfig-interfaces:interfaces"), "interfaces");
  EXPECT_EQ(StripGnmiModulePrefix("Ethernet68:3"), "Ethernet68:3");
  EXPECT_EQ(StripGnmiModulePrefix("etp10:3:periodic"), "etp10:3:periodic");
  EXPECT_EQ(StripGnmiModulePrefix("plain"), "plain");
}

TEST(GnmiPath, StringFormEscapesAndRoundTrips) {
  std::vector<GnmiPathElem> elems = {
      {"interfaces", {}},
      {"interface", {{"name", "ethernet-1/1"}}},
      {"a/b", {{"b", "[q]"}, {"k", "x]y\\z"}}},
  };
  std::string s = GnmiPathString(elems);
  EXPECT_EQ(s, "/interfaces/interface[name=ethernet-1/1]/a\\/b[b=[q\\]][k=x\\]y\\\\z]");
  auto parsed = ParseGnmiPath(s);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->elem_size(), 3);
  EXPECT_EQ(parsed->elem(1).key().at("name"), "ethernet-1/1");
  EXPECT_EQ(parsed->elem(2).name(), "a/b");
  EXPECT_EQ(parsed->elem(2).key().at("k"), "x]y\\z");
  EXPECT_EQ(parsed->elem(2).key().at("b"), "[q]");
  // Path -> string sorts keys, so the round trip gives the canonical form back.
  auto again = ParseGnmiPath(GnmiPathString(*parsed));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(GnmiPathString(*again), GnmiPathString(*parsed));
}

TEST(GnmiPath, OriginWildcardsAndRelativePaths) {
  auto p = ParseGnmiPath("openconfig:/interfaces/interface[name=*]/.../in-octets");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->origin(), "openconfig");
  ASSERT_EQ(p->elem_size(), 4);
  EXPECT_EQ(p->elem(1).key().at("name"), "*");
  EXPECT_EQ(p->elem(2).name(), "...");
  EXPECT_EQ(GnmiPathString(*p), "openconfig:/interfaces/interface[name=*]/.../in-octets");

  auto rel = ParseGnmiPath("openconfig-interfaces:interfaces/interface");
  ASSERT_TRUE(rel.ok());
  EXPECT_EQ(rel->origin(), "");
  EXPECT_EQ(rel->elem(0).name(), "openconfig-interfaces:interfaces");
  auto root = ParseGnmiPath("/");
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root->elem_size(), 0);
}

TEST(GnmiPath, ErrorsNameTheColumn) {
  auto unclosed = ParseGnmiPath("/a/b[name=x");
  ASSERT_FALSE(unclosed.ok());
  EXPECT_THAT(std::string(unclosed.status().message()), ::testing::HasSubstr("column 5"));
  auto no_eq = ParseGnmiPath("/a[name]/c");
  ASSERT_FALSE(no_eq.ok());
  EXPECT_THAT(std::string(no_eq.status().message()), ::testing::HasSubstr("no '='"));
  auto empty = ParseGnmiPath("/a//c");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(std::string(empty.status().message()), ::testing::HasSubstr("column 4"));
}

TEST(GnmiScalar, AsNumbers) {
  EXPECT_EQ(GnmiScalarAsDouble(GnmiScalar(std::string("527"))), 527.0);
  EXPECT_EQ(GnmiScalarAsDouble(GnmiScalar(std::string("-3"))), -3.0);
  EXPECT_EQ(GnmiScalarAsDouble(GnmiScalar(std::string("1.5e3"))), 1500.0);
  EXPECT_EQ(GnmiScalarAsDouble(GnmiScalar(std::string("UP"))), std::nullopt);
  EXPECT_EQ(GnmiScalarAsDouble(GnmiScalar(true)), 1.0);
  EXPECT_EQ(GnmiScalarAsDouble(GnmiScalar()), std::nullopt);
  EXPECT_EQ(GnmiScalarAsUint(GnmiScalar(std::string("18446744073709551615"))),
            18446744073709551615ull);
  EXPECT_EQ(GnmiScalarAsUint(GnmiScalar(int64_t{-1})), std::nullopt);
  EXPECT_EQ(GnmiScalarAsUint(GnmiScalar(2.5)), std::nullopt);
  EXPECT_EQ(GnmiScalarAsUint(GnmiScalar(std::string("1.5e3"))), 1500u);
  EXPECT_EQ(GnmiScalarAsUint(GnmiScalar(uint64_t{7})), 7u);
}

}  // namespace
}  // namespace railwatch

#pragma GCC diagnostic pop
