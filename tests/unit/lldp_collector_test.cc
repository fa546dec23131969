// The host agent's LLDP collector (collectors/lldp_collector.h): neighbours from lldpd's output
// become fabric_lldp_neighbor_info series, a moved cable a new series and an event; lldpcli is
// run as a program (here a script standing in for it: no lldpd runs in unit tests).
#include "collectors/lldp_collector.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_replace.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/recording_emitter.h"
#include "support/ttar.h"

namespace railwatch {
namespace {

using testing::Attribute;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::RecordingEmitter;

std::string Read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

constexpr char kRailLeaves[] =
    "lldp/lldp_07_json0_ai_host_mlx_np0_to_sonic_cuos_ds730_rail_leaves_eth184.json";

class LldpCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("lldp_collector_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    clock_.Set(absl::FromUnixSeconds(1'700'000'000));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Write(const std::string& name, const std::string& text, bool executable = false) {
    std::ofstream(dir_ / name) << text;
    if (executable) chmod((dir_ / name).c_str(), 0755);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
  FakeClock clock_;
};

std::string Key(const std::string& interface, const std::string& system, const std::string& port,
                const std::string& chassis, const std::string& mgmt) {
  return "fabric_lldp_neighbor_info{interface=\"" + interface + "\",neighbor_chassis_id=\"" +
         chassis + "\",neighbor_mgmt_address=\"" + mgmt + "\",neighbor_port=\"" + port +
         "\",neighbor_system=\"" + system + "\"}";
}

TEST_F(LldpCollectorTest, NeighboursBecomeInfoSeriesAndAMovedCableAnEvent) {
  const std::string json = Read(testing::FixturePath(kRailLeaves));
  Write("neighbors.json", json);
  LldpCollector c({absl::Seconds(30)}, LldpFileSource(Path("neighbors.json")), clock_);
  RecordingEmitter e;
  ASSERT_TRUE(c.Collect(e).ok());
  EXPECT_EQ(c.stats().neighbors, 5u);
  EXPECT_EQ(
      e.GetGauge(Key("ens108np0", "LEAF01", "Ethernet184", "70:06:92:6e:33:18", "10.193.77.201")),
      1)
      << ::testing::PrintToString(e.names);
  EXPECT_EQ(e.names.size(), 5u);
  EXPECT_THAT(e.events, IsEmpty());

  // ens108np0's cable moves to LEAF02's Ethernet185; read again only after `refresh`.
  std::string moved = json;
  const size_t at = moved.find("\"LEAF01\"");
  ASSERT_NE(at, std::string::npos);
  moved.replace(at, 8, "\"LEAF09\"");
  Write("neighbors.json", moved);
  clock_.Advance(absl::Seconds(10));
  ASSERT_TRUE(c.Collect(e).ok());
  EXPECT_EQ(e.names.size(), 5u) << "not read again before the refresh";
  clock_.Advance(absl::Seconds(25));
  ASSERT_TRUE(c.Collect(e).ok());
  ASSERT_EQ(e.names.size(), 6u);
  EXPECT_THAT(e.names.back(), HasSubstr("neighbor_system=\"LEAF09\""));
  const std::vector<EventRecord> changed = e.EventsOfKind("lldp.neighbor_changed");
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(Attribute(changed[0], "was"), "LEAF01 port Ethernet184");
  EXPECT_EQ(Attribute(changed[0], "is"), "LEAF09 port Ethernet184");
  EXPECT_EQ(c.stats().neighbors, 5u);

  // lldpd forgets every neighbour but one: the others are lost.
  Write("neighbors.json", R"({"lldp": [{"interface": [{"name": "ens1np0", "chassis": [{"name":
      [{"value": "StorageSW"}]}], "port": [{"id": [{"type": "local", "value": "Ethernet120"}]}]}]}]})");
  clock_.Advance(absl::Seconds(30));
  ASSERT_TRUE(c.Collect(e).ok());
  EXPECT_EQ(e.EventsOfKind("lldp.neighbor_lost").size(), 4u);
  EXPECT_EQ(c.stats().neighbors, 1u);
}

// No lldpd: nothing emitted, no error for the agent, asked again at the next refresh; what was
// known stays known while lldpd restarts.
TEST_F(LldpCollectorTest, MissingOrFailingSourceKeepsWhatWasKnown) {
  LldpCollector none({absl::Seconds(30)}, LldpFileSource(Path("absent.json")), clock_);
  RecordingEmitter e;
  EXPECT_TRUE(none.Collect(e).ok());
  EXPECT_THAT(e.names, IsEmpty());
  EXPECT_EQ(none.stats().read_errors, 1u);

  Write("neighbors.json", Read(testing::FixturePath(kRailLeaves)));
  LldpCollector c({absl::Seconds(30)}, LldpFileSource(Path("neighbors.json")), clock_);
  ASSERT_TRUE(c.Collect(e).ok());
  std::filesystem::remove(Path("neighbors.json"));
  clock_.Advance(absl::Seconds(31));
  ASSERT_TRUE(c.Collect(e).ok());
  EXPECT_EQ(c.stats().read_errors, 1u);
  EXPECT_EQ(c.stats().neighbors, 5u);
  EXPECT_THAT(e.EventsOfKind("lldp.neighbor_lost"), IsEmpty());

  // Garbage: a problem counted, the neighbours kept.
  Write("neighbors.json", "{\"lldp\": [");
  clock_.Advance(absl::Seconds(31));
  ASSERT_TRUE(c.Collect(e).ok());
  EXPECT_EQ(c.stats().parse_problems, 1u);
  EXPECT_EQ(c.stats().neighbors, 5u);
}

// lldpcli as a program: its arguments, its output, a missing program, a failing one (lldpd not
// running), one that hangs.
TEST_F(LldpCollectorTest, LldpcliIsRunWithJson0AndBoundedInTime) {
  Write("neighbors.json", Read(testing::FixturePath(kRailLeaves)));
  Write("lldpcli",
        "#!/bin/sh\n[ \"$*\" = \"-f json0 show neighbors\" ] || exit 9\ncat '" +
            Path("neighbors.json") + "'\n",
        true);
  absl::StatusOr<std::string> out = LldpcliSource(Path("lldpcli"))->Read();
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(ParseLldpNeighbors(*out, "lldpcli").neighbors.size(), 5u);

  absl::StatusOr<std::string> missing = LldpcliSource(Path("no-such-lldpcli"))->Read();
  EXPECT_TRUE(absl::IsNotFound(missing.status())) << missing.status();
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("apt-get install lldpd"));

  Write("failing", "#!/bin/sh\necho 'unable to connect to socket /run/lldpd.socket' >&2\nexit 1\n",
        true);
  absl::StatusOr<std::string> failing = LldpcliSource(Path("failing"))->Read();
  EXPECT_TRUE(absl::IsUnavailable(failing.status())) << failing.status();
  EXPECT_THAT(std::string(failing.status().message()),
              HasSubstr("exit 1: unable to connect to socket /run/lldpd.socket"));

  Write("hangs", "#!/bin/sh\nexec sleep 30\n", true);
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> hangs = LldpcliSource(Path("hangs"), absl::Milliseconds(200))->Read();
  EXPECT_TRUE(absl::IsDeadlineExceeded(hangs.status())) << hangs.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(10)) << "killed, not waited for";
}

TEST(LldpSourceFlag, Forms) {
  EXPECT_EQ(*LldpSourceFromFlag("off"), nullptr);
  EXPECT_EQ((*LldpSourceFromFlag("auto", /*real_host=*/true))->name(), "lldpcli");
  EXPECT_EQ(*LldpSourceFromFlag("auto", /*real_host=*/false), nullptr);
  EXPECT_EQ((*LldpSourceFromFlag("lldpcli"))->name(), "lldpcli");
  EXPECT_EQ((*LldpSourceFromFlag("lldpcli:/usr/sbin/lldpcli"))->name(), "/usr/sbin/lldpcli");
  EXPECT_EQ((*LldpSourceFromFlag("file:/run/n.json"))->name(), "/run/n.json");
  absl::StatusOr<std::unique_ptr<LldpSource>> bad = LldpSourceFromFlag("snmp");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "--lldp_source=snmp: expected auto, lldpcli, lldpcli:PROGRAM, file:PATH or off");
}

}  // namespace
}  // namespace railwatch
