#include "collectors/ethtool_dump.h"

#include <map>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "common/text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/ttar.h"

namespace railwatch {
namespace ethtool_dump_test {

using ::railwatch::testing::FixturePath;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

EthtoolStatsText ParseFixture(const std::string& name) {
  absl::StatusOr<std::string> text = ReadFile(FixturePath("ethtool/" + name));
  EXPECT_TRUE(text.ok()) << text.status();
  return ParseEthtoolStats(text.ok() ? *text : "");
}

// name -> value; also checks that no name appears twice.
std::map<std::string, uint64_t> AsMap(const EthtoolStatsText& stats) {
  std::map<std::string, uint64_t> out;
  EXPECT_EQ(stats.names.size(), stats.values.size());
  for (size_t i = 0; i < stats.names.size(); ++i) {
    EXPECT_TRUE(out.emplace(stats.names[i], stats.values[i]).second)
        << "duplicate " << stats.names[i];
  }
  return out;
}

size_t LinesWithValue(const std::string& fixture) {
  absl::StatusOr<std::string> text = ReadFile(FixturePath("ethtool/" + fixture));
  size_t n = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    absl::string_view trimmed = absl::StripAsciiWhitespace(line);
    if (!trimmed.empty() && absl::ascii_isdigit(static_cast<unsigned char>(trimmed.back()))) ++n;
  }
  return n;
}

TEST(EthtoolDump, BnxtWithHeaderFiveSpacesAndPerRingNames) {
  const std::string fixture = "ethtool_S_bnxt_en_showmax_bnxten418_sfp_10gwtf1.txt";
  EthtoolStatsText stats = ParseFixture(fixture);
  EXPECT_THAT(stats.problems, IsEmpty());
  // Every line but the "NIC statistics:" caption is a statistic.
  EXPECT_THAT(stats.names, SizeIs(LinesWithValue(fixture)));
  std::map<std::string, uint64_t> m = AsMap(stats);
  EXPECT_EQ(m.count("NIC statistics"), 0u);
  // Per-ring statistics keep their ring in the name, as the kernel's strings do.
  EXPECT_EQ(stats.names.front(), "[0]: rx_ucast_packets");
  EXPECT_EQ(m.at("[0]: rx_ucast_packets"), 19121609u);
  EXPECT_EQ(m.at("[1]: rx_ucast_packets"), 20668796u);
  EXPECT_EQ(m.at("link_down_events"), 4u);
  EXPECT_EQ(m.at("rx_buffer_passed_threshold"), 417u);
  EXPECT_EQ(m.at("continuous_roce_pause_events"), 0u);
  EXPECT_EQ(m.at("rx_pfc_ena_frames_pri7"), 0u);
  EXPECT_EQ(m.at("pfc_pri3_tx_duration_us"), 0u);
  EXPECT_EQ(m.at("tx_bytes"), 270725761359u);
}

TEST(EthtoolDump, BnxtIndentedWithTabsAndNoFinalNewline) {
  const std::string fixture = "ethtool_S_bnxt_en_go_ethtool_metrics_tab_indented.txt";
  EthtoolStatsText stats = ParseFixture(fixture);
  EXPECT_THAT(stats.problems, IsEmpty());
  EXPECT_THAT(stats.names, SizeIs(LinesWithValue(fixture)));
  std::map<std::string, uint64_t> m = AsMap(stats);
  EXPECT_EQ(m.at("tx_err"), 12u);
  EXPECT_EQ(m.at("rx_total_discard_pkts"), 13u);
  EXPECT_EQ(m.at("tx_total_discard_pkts"), 14u);
  EXPECT_EQ(m.at("tx_total_collisions"), 7u);
  EXPECT_EQ(m.at("link_down_events"), 2u);
  EXPECT_EQ(m.at("[0]: rx_ucast_packets"), 276347403u);
  // The file ends without a newline after this one.
  EXPECT_EQ(stats.names.back(), "tx_packets_pri7");
}

TEST(EthtoolDump, Mlx5WithoutHeaderOrIndentation) {
  const std::string fixture = "ethtool_S_mlx5_core_cx4_ethq_testfile_noindent.txt";
  EthtoolStatsText stats = ParseFixture(fixture);
  EXPECT_THAT(stats.problems, IsEmpty());
  EXPECT_THAT(stats.names, SizeIs(LinesWithValue(fixture)));
  std::map<std::string, uint64_t> m = AsMap(stats);
  EXPECT_EQ(stats.names.front(), "rx_packets");
  EXPECT_EQ(m.at("rx_packets"), 845320277u);
  EXPECT_EQ(m.at("rx_prio0_bytes"), 2202570777997u);
  EXPECT_EQ(m.at("tx_prio0_packets"), 896117891u);
  EXPECT_EQ(m.at("rx_global_pause"), 0u);
  EXPECT_EQ(m.at("tx15_xmit_more"), 5530u);
  // PFC is off on this port: mlx5 printed no per-priority pause counter at all.
  EXPECT_EQ(m.count("rx_prio0_pause"), 0u);
}

TEST(EthtoolDump, ColonsInNamesCaptionsCrlfAndBadLines) {
  EthtoolStatsText stats = ParseEthtoolStats(
      "NIC statistics:\r\n"
      "     rxq0: rx_bytes: 5\r\n"
      "Standard stats for eth0:\n"
      "eth-mac-FramesTransmittedOK: 18446744073709551615\n"
      "\n"
      "     name with spaces : 7   \n"
      "not a statistic\n"
      "     rx_oops: -1\n"
      "     rx_half: 12abc\n"
      "     : 3\n"
      "\ttx_last: 9");
  EXPECT_THAT(stats.names, ElementsAre("rxq0: rx_bytes", "eth-mac-FramesTransmittedOK",
                                       "name with spaces", "tx_last"));
  EXPECT_THAT(stats.values, ElementsAre(5u, 18446744073709551615u, 7u, 9u));
  ASSERT_THAT(stats.problems, SizeIs(4));
  EXPECT_THAT(stats.problems[0], HasSubstr("line 7"));
  EXPECT_THAT(stats.problems[1], HasSubstr("line 8"));
  EXPECT_THAT(stats.problems[2], HasSubstr("line 9"));
  EXPECT_THAT(stats.problems[3], HasSubstr("line 10"));
}

TEST(EthtoolDump, ValueTooLargeForUint64IsAProblemNotAWrap) {
  EthtoolStatsText stats = ParseEthtoolStats("big: 18446744073709551616\n");
  EXPECT_THAT(stats.names, IsEmpty());
  EXPECT_THAT(stats.problems, SizeIs(1));
}

TEST(DumpEthtoolBackend, ServesUpdatesCountChangesAndRemoval) {
  DumpEthtoolBackend backend;
  backend.Set("eth0", "mlx5_core", "NIC statistics:\n     rx_discards_phy: 1\n");
  absl::StatusOr<std::unique_ptr<EthtoolDevice>> dev = backend.Open("eth0");
  ASSERT_TRUE(dev.ok()) << dev.status();
  EXPECT_EQ((*dev)->driver(), "mlx5_core");
  absl::StatusOr<std::span<const uint64_t>> v = (*dev)->Read();
  ASSERT_TRUE(v.ok());
  EXPECT_THAT(*v, ElementsAre(1u));

  backend.Set("eth0", "mlx5_core", "rx_discards_phy: 2\n");
  v = (*dev)->Read();
  ASSERT_TRUE(v.ok());
  EXPECT_THAT(*v, ElementsAre(2u));

  backend.Set("eth0", "mlx5_core", "rx_discards_phy: 2\nrx_prio3_pause: 4\n");
  EXPECT_TRUE(absl::IsFailedPrecondition((*dev)->Read().status()));

  backend.Remove("eth0");
  EXPECT_TRUE(absl::IsNotFound((*dev)->Read().status()));
  EXPECT_TRUE(absl::IsNotFound(backend.Open("eth0").status()));

  backend.Set("bond0", "bonding", "NIC statistics:\n");
  EXPECT_TRUE(absl::IsUnimplemented(backend.Open("bond0").status()));
}

}  // namespace
}  // namespace railwatch
