// `railwatch gnmi decode` in-process: leaves printed, mapped through a shipped profile, JSON
// lines, stdin, and the exit codes for missing files, text without gNMI and bad flags.

#include "cli/gnmi_decode.h"

#include <sstream>

#include "cli/commands.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace railwatch {
namespace gnmi_decode_cli_test {

using ::testing::HasSubstr;

std::string Fixture(const std::string& name) {
  return std::string(RAILWATCH_FIXTURES_DIR) + "/gnmi/" + name;
}

struct CliRun {
  int code;
  std::string out, err;
};

CliRun Decode(GnmiDecodeCommand cmd, const std::string& stdin_text = "") {
  std::istringstream in(stdin_text);
  std::ostringstream out, err;
  int code = RunGnmiDecode(cmd, in, out, err);
  return {code, out.str(), err.str()};
}

TEST(GnmiDecodeCli, PrintsLeavesAndTheSeriesAProfileMapsThemTo) {
  GnmiDecodeCommand cmd;
  cmd.files = {Fixture("gnmi_notif_02_sonic_countersdb_pfc_get_and_subscribe_stream_poll.md")};
  cmd.profile = "sonic";
  cmd.profiles_dir = std::string(RAILWATCH_SOURCE_DIR) + "/profiles/gnmi";
  CliRun r = Decode(cmd);
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("COUNTERS_DB /COUNTERS/Ethernet9/SAI_PORT_STAT_PFC_7_RX_PKTS = \"0\" "
                               "@ 2018-01-23T00:53:48.794942666+00:00  -> "
                               "fabric_pfc_pause_frames_total{"));
  EXPECT_THAT(r.out, HasSubstr("priority=\"7\""));
  EXPECT_THAT(r.out, HasSubstr("-> unmapped"));
  EXPECT_THAT(r.out, HasSubstr("6 notifications"));
}

// An interface's transceiver leaf maps to no series: it says which interface the
// component's optics series belong to.
TEST(GnmiDecodeCli, AJoinLeafSaysWhichInterfaceItsComponentIs) {
  GnmiDecodeCommand cmd;
  cmd.files = {"-"};
  cmd.profile = "openconfig";
  cmd.profiles_dir = std::string(RAILWATCH_SOURCE_DIR) + "/profiles/gnmi";
  const std::string capture =
      R"(update: { timestamp: 42 update: { path: { elem: { name: "interfaces" } )"
      R"(elem: { name: "interface" key: { key: "name" value: "Ethernet5" } } )"
      R"(elem: { name: "state" } elem: { name: "transceiver" } } )"
      R"(val: { string_val: "Ethernet5 transceiver" } } })";
  CliRun r = Decode(cmd, capture);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr(R"(-> join component="Ethernet5 transceiver" is )"
                               R"(interface="Ethernet5")"));
  EXPECT_THAT(r.out, HasSubstr("1 mapped, 0 unmapped"));
  cmd.json = true;
  r = Decode(cmd, capture);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const nlohmann::json leaf = nlohmann::json::parse(r.out.substr(0, r.out.find('\n')));
  EXPECT_EQ(leaf["join"]["label"], "component");
  EXPECT_EQ(leaf["join"]["value"], "Ethernet5 transceiver");
  EXPECT_EQ(leaf["labels"]["interface"], "Ethernet5");
}

TEST(GnmiDecodeCli, JsonLinesFromStdinWithASummary) {
  GnmiDecodeCommand cmd;
  cmd.files = {"-"};
  cmd.json = true;
  CliRun r = Decode(cmd, R"({"syncResponse": true}
update: { timestamp: 42 update: { path: { elem: { name: "a" } } val: { int_val: -7 } } })");
  ASSERT_EQ(r.code, kExitOk) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  std::vector<nlohmann::json> objects;
  while (std::getline(lines, line)) objects.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(objects.size(), 2u);
  EXPECT_EQ(objects[0]["path"], "/a");
  EXPECT_EQ(objects[0]["value"], -7);
  EXPECT_EQ(objects[0]["time_unix_nano"], 42);
  EXPECT_EQ(objects[0]["file"], "<stdin>");
  EXPECT_EQ(objects[1]["sync_responses"], 1);
  EXPECT_EQ(objects[1]["leaves"], 1);
}

TEST(GnmiDecodeCli, ExitCodes) {
  GnmiDecodeCommand missing;
  missing.files = {"/nonexistent/capture.txt",
                   Fixture("gnmi_notif_06_arista_veos_gnmic_subscribe_on_change_bgp.md")};
  CliRun r = Decode(missing);
  EXPECT_EQ(r.code, kExitNotFound);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/capture.txt: no such file"));
  EXPECT_THAT(r.out, HasSubstr("/bgp/global/config/as = 2"));  // the other file still decoded

  GnmiDecodeCommand prose;
  prose.files = {"-"};
  r = Decode(prose, "nothing to see here\n");
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("<stdin>: no gNMI message found"));

  GnmiDecodeCommand bad_format;
  bad_format.files = {"-"};
  bad_format.format = "yaml";
  EXPECT_EQ(Decode(bad_format).code, kExitUsage);
  EXPECT_EQ(Decode(GnmiDecodeCommand{}).code, kExitUsage);

  GnmiDecodeCommand bad_profile;
  bad_profile.files = {"-"};
  bad_profile.profile = "no-such-nos";
  bad_profile.profiles_dir = std::string(RAILWATCH_SOURCE_DIR) + "/profiles/gnmi";
  r = Decode(bad_profile, "{\"syncResponse\": true}");
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("no profile \"no-such-nos\""));
}

}  // namespace
}  // namespace railwatch
