// Every real-world gNMI sample (tests/fixtures/gnmi, copied verbatim from the shared
// collection) read with ReadGnmiCapture in auto mode and decoded; the facts asserted are those
// of CATALOGUE.md section H.

#include "gmock/gmock.h"
#include "gnmi_test_util.h"
#include "gtest/gtest.h"

namespace railwatch {
namespace samples_test {

using testing::DecodeFixture;
using testing::DecodedFixture;
using testing::RecordedLeaf;

std::string Str(const RecordedLeaf& l) {
  const std::string* s = std::get_if<std::string>(&l.value);
  return s == nullptr ? "<not a string>" : *s;
}

TEST(GnmiSamples, SrosFourFormatsOfOneResponse) {
  DecodedFixture f = DecodeFixture("gnmi_notif_01_gnmic_output_formats_nokia_sros_version.md");
  EXPECT_THAT(f.capture.errors, ::testing::IsEmpty());
  // protojson, prototext, gnmic json, gnmic event: each one notification with one leaf.
  ASSERT_EQ(f.capture.notifications.size(), 4u);
  auto at = f.leaves.At("/state/system/version/version-string");
  ASSERT_EQ(at.size(), 4u);
  EXPECT_EQ(at[0].time, 1595584408456503938);  // protojson: int64 as a string
  EXPECT_EQ(at[1].time, 1595584168675434221);  // prototext
  EXPECT_EQ(at[2].time, 1595584326775141151);  // gnmic json
  EXPECT_EQ(at[3].time, 1595584587725708234);  // gnmic event
  for (const auto& l : at) {
    EXPECT_THAT(Str(l), ::testing::StartsWith("TiMOS-B-20.5.R1 both/x86_64 Nokia 7750 SR"));
    EXPECT_THAT(Str(l), ::testing::HasSubstr("\r\nAll rights reserved."));
  }
}

TEST(GnmiSamples, SonicCountersDbGetAndGnmiCliStreamAndPoll) {
  DecodedFixture f =
      DecodeFixture("gnmi_notif_02_sonic_countersdb_pfc_get_and_subscribe_stream_poll.md");
  EXPECT_THAT(f.capture.errors, ::testing::IsEmpty());
  EXPECT_EQ(f.stats.errors, 0u);
  // Get of the whole port (a json_ietf_val blob), then of one counter (string_val "0").
  auto pfc7 = f.leaves.At("/COUNTERS/Ethernet9/SAI_PORT_STAT_PFC_7_RX_PKTS");
  ASSERT_EQ(pfc7.size(), 6u);  // blob, single Get, 2 streamed, 2 polled
  EXPECT_EQ(pfc7[0].time, 1516668828794942666);
  EXPECT_EQ(pfc7[0].target, "COUNTERS_DB");
  EXPECT_EQ(Str(pfc7[0]), "0");
  EXPECT_EQ(pfc7[1].time, 1516669320434130423);
  EXPECT_EQ(Str(pfc7[1]), "0");
  // gnmi_cli stream: RFC 3339 times, values "0" then "1".
  EXPECT_EQ(pfc7[2].time, 1516670140117234683);  // 2018-01-23T01:15:40.117234683Z
  EXPECT_EQ(Str(pfc7[3]), "1");
  EXPECT_EQ(pfc7[3].time, 1516670150124350782);
  // gnmi_cli poll: 2018-03-01-18:40:45.775251073 (UTC).
  EXPECT_EQ(pfc7[4].time, 1519929645775251073);
  EXPECT_EQ(pfc7[5].time, 1519929655776494910);
  EXPECT_EQ(f.leaves.At("/COUNTERS/Ethernet9/SAI_PORT_STAT_PFC_3_ON2OFF_RX_PKTS").size(), 1u);
}

TEST(GnmiSamples, SonicQueuesWithPfcWatchdogFields) {
  DecodedFixture f = DecodeFixture("gnmi_notif_03_sonic_countersdb_queues_pfcwd_json_ietf.md");
  EXPECT_THAT(f.capture.errors, ::testing::IsEmpty());
  // The first block is an excerpt cut before its path: nothing to read there. Then the Queues
  // Get of Ethernet68, then of Ethernet* (an elided excerpt, joined).
  ASSERT_EQ(f.capture.notifications.size(), 2u);
  EXPECT_EQ(f.capture.notifications[0].timestamp(), 1748556404127308274);
  auto q0 = f.leaves.At("/COUNTERS/Ethernet68/Queues/Ethernet68:0/SAI_QUEUE_STAT_PACKETS");
  ASSERT_EQ(q0.size(), 1u);
  EXPECT_EQ(q0[0].time, 1748556404127308274);
  const std::string base = "/COUNTERS/Ethernet*/Queues/";
  auto wd = f.leaves.At(base + "etp10:3/PFC_WD_STATUS");
  ASSERT_EQ(wd.size(), 1u);
  EXPECT_EQ(Str(wd[0]), "operational");
  EXPECT_EQ(wd[0].time, 1748556657384573964);
  EXPECT_EQ(Str(f.leaves.At(base + "etp10:3/PFC_WD_ACTION")[0]), "drop");
  EXPECT_EQ(GnmiScalarAsUint(f.leaves.At(base + "etp10:3/PFC_WD_DETECTION_TIME")[0].value),
            400000u);
  EXPECT_EQ(f.leaves.At(base + "etp10:3/PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED").size(), 1u);
  auto packets = f.leaves.At(base + "etp10:7/SAI_QUEUE_STAT_PACKETS");
  ASSERT_EQ(packets.size(), 1u);
  EXPECT_EQ(GnmiScalarAsUint(packets[0].value), 527u);
  // After the elision: the last port of the excerpt.
  EXPECT_EQ(f.leaves.At(base + "etp9:9:periodic/SAI_QUEUE_STAT_SHARED_WATERMARK_BYTES").size(),
            1u);
}

TEST(GnmiSamples, SonicOpenConfigGetAndGnmiCliSubscribe) {
  DecodedFixture f =
      DecodeFixture("gnmi_notif_04_sonic_openconfig_interfaces_get_set_subscribe.md");
  EXPECT_THAT(f.capture.errors, ::testing::IsEmpty());
  // The Get's {"openconfig-interfaces:config": {...}} is the content of .../config.
  auto mtu = f.leaves.At("/interfaces/interface[name=Ethernet0]/config/mtu");
  ASSERT_EQ(mtu.size(), 1u);
  EXPECT_EQ(std::get<uint64_t>(mtu[0].value), 9108u);
  EXPECT_EQ(mtu[0].target, "OC-YANG");
  EXPECT_EQ(mtu[0].time, 1607105561153639237);
  EXPECT_EQ(std::get<bool>(f.leaves.At("/interfaces/interface[name=Ethernet0]/config/enabled")[0].value),
            true);
  // gnmi_cli's display: keys come back as elems, the JSON string inside JSON is decoded.
  auto oper = f.leaves.At("/OC-YANG/interfaces/interface/Ethernet0/state/oper-status");
  ASSERT_EQ(oper.size(), 1u);
  EXPECT_EQ(Str(oper[0]), "DOWN");
  // The Set request's update is not telemetry.
  EXPECT_EQ(f.capture.notifications.size(), 2u);
}

TEST(GnmiSamples, AristaGnmicGetAndSet) {
  DecodedFixture f = DecodeFixture("gnmi_notif_05_arista_veos_gnmic_get_set_responses.md");
  EXPECT_THAT(f.capture.errors, ::testing::IsEmpty());
  auto ip = f.leaves.At(
      "/interfaces/interface[name=Ethernet1]/subinterfaces/subinterface[index=0]/ipv4/addresses/"
      "address[ip=10.2.0.21]/config/ip");
  ASSERT_EQ(ip.size(), 1u);
  EXPECT_EQ(Str(ip[0]), "10.2.0.21");
  EXPECT_EQ(ip[0].time, 0);  // a Get: "time" is the zero time
  auto descr = f.leaves.At("/interfaces/interface[name=Ethernet1]/config/description");
  ASSERT_EQ(descr.size(), 2u);
  EXPECT_EQ(Str(descr[0]), "");
  EXPECT_EQ(Str(descr[1]), "gnmic-example");
  EXPECT_EQ(f.capture.notifications.size(), 3u);  // the Set replies carry no values
}

TEST(GnmiSamples, AristaOnChangeBgpAs) {
  DecodedFixture f = DecodeFixture("gnmi_notif_06_arista_veos_gnmic_subscribe_on_change_bgp.md");
  auto as = f.leaves.At(
      "/network-instances/network-instance[name=default]/protocols/"
      "protocol[identifier=BGP][name=BGP]/bgp/global/config/as");
  ASSERT_EQ(as.size(), 1u);
  EXPECT_EQ(std::get<uint64_t>(as[0].value), 2u);
  EXPECT_EQ(as[0].time, 1595753683536455210);
}

TEST(GnmiSamples, SrLinuxEventsRebuildTheInterfaceKey) {
  DecodedFixture f = DecodeFixture("gnmi_notif_07_srlinux_event_format_interface_statistics.json");
  EXPECT_EQ(f.capture.notifications.size(), 18u);
  const std::string base = "/interface[name=mgmt0]/statistics/";
  auto octets = f.leaves.At(base + "in-octets");
  ASSERT_EQ(octets.size(), 1u);
  EXPECT_EQ(std::get<uint64_t>(octets[0].value), 35284165u);
  EXPECT_EQ(octets[0].time, 1710890476202665500);
  EXPECT_EQ(std::get<uint64_t>(f.leaves.At(base + "in-packets")[0].value), 351770u);
  EXPECT_EQ(std::get<uint64_t>(f.leaves.At(base + "in-discarded-packets")[0].value), 6377u);
  EXPECT_EQ(std::get<uint64_t>(f.leaves.At(base + "in-error-packets")[0].value), 128u);
  EXPECT_EQ(std::get<uint64_t>(f.leaves.At(base + "out-octets")[0].value), 219527024u);
  EXPECT_EQ(std::get<uint64_t>(f.leaves.At(base + "carrier-transitions")[0].value), 1u);
}

TEST(GnmiSamples, AristaDebugLogWithAWrappedPathLiteral) {
  DecodedFixture f = DecodeFixture("gnmi_notif_09_arista_eos_gnmic_debug_prototext_counters.txt");
  EXPECT_THAT(f.capture.errors, ::testing::IsEmpty());
  EXPECT_EQ(f.capture.sync_responses, 1u);
  auto bcast = f.leaves.At("/interfaces/interface[name=Ethernet1]/state/counters/in-broadcast-pkts");
  ASSERT_EQ(bcast.size(), 1u);
  EXPECT_EQ(std::get<uint64_t>(bcast[0].value), 0u);
  EXPECT_EQ(bcast[0].time, 1622294379543245739);
  auto discards = f.leaves.At("/interfaces/interface[name=Ethernet1]/state/counters/in-discards");
  ASSERT_EQ(discards.size(), 1u);
  EXPECT_EQ(discards[0].time, 1622294379543262482);
}

TEST(GnmiSamples, ExplicitFormatReadsOnlyItsOwnMessages) {
  for (auto [format, time] : {std::pair{GnmiTextFormat::kProtoJson, 1595584408456503938},
                              std::pair{GnmiTextFormat::kProtoText, 1595584168675434221},
                              std::pair{GnmiTextFormat::kGnmicJson, 1595584326775141151},
                              std::pair{GnmiTextFormat::kGnmicEvent, 1595584587725708234}}) {
    DecodedFixture f =
        DecodeFixture("gnmi_notif_01_gnmic_output_formats_nokia_sros_version.md", format);
    ASSERT_EQ(f.capture.notifications.size(), 1u) << GnmiTextFormatName(format);
    EXPECT_EQ(f.capture.notifications[0].timestamp(), time) << GnmiTextFormatName(format);
  }
}

}  // namespace
}  // namespace railwatch
