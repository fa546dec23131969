// iblinkinfo output (CATALOGUE section K): the one real capture (line mode, ibsim fabric), and
// the default per-switch mode as iblinkinfo.c prints it.
#include "ib/iblinkinfo.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ib_fixture.h"

namespace railwatch::ib::iblinkinfo_test {

using ib_fixture::ProblemsText;
using ib_fixture::ReadIbFixture;
using ::testing::IsEmpty;

// Two `iblinkinfo --switches-only -l` lines, markdown-indented: one up at 2.5 Gbps with a
// "Could be" note, one Down/Polling with no peer.
TEST(Iblinkinfo, LineModeUpAndDown) {
  const std::string name = "iblinkinfo_02_ibsim_simulated_line_mode_l_up_and_down_md_indented.txt";
  const IblinkinfoResult r = ParseIblinkinfo(ReadIbFixture(name), name);
  EXPECT_THAT(r.problems, IsEmpty()) << ProblemsText(r.problems);
  ASSERT_EQ(r.ports.size(), 2u);
  const IblinkinfoPort& up = r.ports[0];
  EXPECT_EQ(up.link.local.port_guid.value, 0x0000000000200005u);
  EXPECT_EQ(up.link.local.description, "hxa-su2-leaf-r2");  // padding inside quotes dropped
  EXPECT_EQ(up.link.local.lid, 9u);
  EXPECT_EQ(up.link.local.port, 33);
  EXPECT_EQ(up.link.speed.width_lanes, 4);
  EXPECT_EQ(up.link.speed.lane_signal_gbps, 2.5);
  EXPECT_EQ(up.link.speed.generation, "SDR");
  EXPECT_EQ(up.link.speed.aggregate_gbps(), 10);
  EXPECT_EQ(up.state, "Active");
  EXPECT_EQ(up.phys_state, "LinkUp");
  ASSERT_TRUE(up.link.peer);
  EXPECT_EQ(up.link.peer->port_guid.value, 0x0000000000200000u);
  EXPECT_EQ(up.link.peer->lid, 2u);
  EXPECT_EQ(up.link.peer->port, 4);
  EXPECT_EQ(up.link.peer->description, "hxa-spine01");
  EXPECT_EQ(up.could_be, "Could be 12X Could be 10.0 Gbps");
  const IblinkinfoPort& down = r.ports[1];
  EXPECT_EQ(down.link.local.port, 34);
  EXPECT_EQ(down.link.local.lid, 9u);
  EXPECT_EQ(down.state, "Down");
  EXPECT_EQ(down.phys_state, "Polling");
  EXPECT_FALSE(down.link.peer);
  EXPECT_FALSE(down.link.speed.known());
  EXPECT_EQ(down.could_be, "");
}

// Default mode, written from iblinkinfo.c's printf formats (no real capture exists: CATALOGUE
// section K): a switch header, HDR/NDR/FDR10 ports, -p settings, a CA block, a bad line.
TEST(Iblinkinfo, DefaultModePerSwitch) {
  const IblinkinfoResult r = ParseIblinkinfo(
      "Switch: 0x0c42a10300a9b026 MF0;leaf-1:MQM8700/U1:\n"
      "           3894    1[  ] ==( 4X        53.125 Gbps Active/  LinkUp)==>       4049    1[  ] "
      "\"host-1 mlx5_0\" ( )\n"
      "           3894    2[  ] ==( 4X        106.25 Gbps Active/  LinkUp) (HOQ:16 VL_Stall:7)==>"
      "       175   20[  ] \"MF0;spine:MCS8500/L16/U2\" ( )\n"
      "           3894    3[  ] ==( 4X 10.0 Gbps (FDR10) Active/  LinkUp)==>          7    1[  ] "
      "\"old\" ( )\n"
      "           3894    4[  ] ==( 4X        53.125 Gbps   Init/  LinkUp)==>     "
      "\"Port not available\"\n"
      "CA: host-1 mlx5_0:\n"
      "      0x0c42a10300fb53dc   4049    1[  ] ==( 4X        53.125 Gbps Active/  LinkUp)==>"
      "       3894    1[  ] \"MF0;leaf-1:MQM8700/U1\" ( )\n"
      "garbage\n",
      "d.txt");
  ASSERT_EQ(r.ports.size(), 5u);
  const IblinkinfoPort& p1 = r.ports[0];
  EXPECT_EQ(p1.link.local.type, IbNodeType::kSwitch);
  EXPECT_EQ(p1.link.local.node_guid.value, 0x0c42a10300a9b026u);
  EXPECT_EQ(p1.link.local.description, "MF0;leaf-1:MQM8700/U1");
  EXPECT_EQ(p1.link.local.lid, 3894u);
  EXPECT_EQ(p1.link.speed.generation, "HDR");
  EXPECT_EQ(p1.link.speed.aggregate_gbps(), 200);
  EXPECT_EQ(p1.link.peer->lid, 4049u);
  EXPECT_EQ(p1.link.peer->description, "host-1 mlx5_0");
  EXPECT_EQ(r.ports[1].link.speed.generation, "NDR");
  EXPECT_EQ(r.ports[1].link.peer->port, 20);
  EXPECT_EQ(r.ports[2].link.speed.generation, "FDR10");
  EXPECT_EQ(r.ports[2].link.speed.aggregate_gbps(), 40);
  EXPECT_TRUE(r.ports[3].port_not_available);
  EXPECT_EQ(r.ports[3].state, "Init");
  const IblinkinfoPort& ca = r.ports[4];
  EXPECT_EQ(ca.link.local.type, IbNodeType::kCa);
  EXPECT_EQ(ca.link.local.description, "host-1 mlx5_0");
  EXPECT_EQ(ca.link.local.port_guid.value, 0x0c42a10300fb53dcu);
  EXPECT_FALSE(ca.link.local.node_guid.valid());
  EXPECT_EQ(ca.link.peer->lid, 3894u);
  EXPECT_EQ(ib_fixture::ProblemPlaces(r.problems), std::vector<std::string>{"d.txt:8:1"});
}

}  // namespace railwatch::ib::iblinkinfo_test
