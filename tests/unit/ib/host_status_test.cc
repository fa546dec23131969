// ibstat, ibstatus and ibv_devinfo -vv as real hosts printed them (CATALOGUE section M, and
// section F for the RoCE ibstatus).
#include "ib/host_status.h"

#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ib_fixture.h"

namespace railwatch::ib::host_status_test {

using ib_fixture::ProblemsText;
using ib_fixture::ReadIbFixture;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

IbHostStatus Ibstat(const std::string& name) { return ParseIbstat(ReadIbFixture(name), name); }
IbHostStatus Ibstatus(const std::string& name) { return ParseIbstatus(ReadIbFixture(name), name); }

std::vector<std::string> Names(const IbHostStatus& s) {
  std::vector<std::string> names;
  for (const IbHostDevice& d : s.devices) names.push_back(d.name);
  return names;
}

const IbHostDevice& Device(const IbHostStatus& s, const std::string& name) {
  for (const IbHostDevice& d : s.devices) {
    if (d.name == name) return d;
  }
  ADD_FAILURE() << "no device " << name;
  static const IbHostDevice kNone;
  return kNone;
}

// The one port of a single-port device; fails the test otherwise.
const IbHostPort& Port1(const IbHostDevice& d) {
  static const IbHostPort kNone;
  if (d.ports.size() != 1 || d.ports[0].port != 1) {
    ADD_FAILURE() << d.name << " has not exactly port 1";
    return kNone;
  }
  return d.ports[0];
}

// An H100 host: 8 ConnectX-7 NDR IB ports and a BlueField-3 Ethernet bond (tabs as spaces).
TEST(Ibstat, H100NdrAndBlueFieldBond) {
  const IbHostStatus s = Ibstat("ibstat_01_h100_cx7_ndr_ib_rate400_plus_bf3_bond_ethernet.txt");
  EXPECT_THAT(s.problems, IsEmpty()) << ProblemsText(s.problems);
  EXPECT_THAT(Names(s), ElementsAre("mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7",
                                    "mlx5_8", "mlx5_9", "mlx5_bond_0"));
  const uint32_t lids[] = {128, 534, 972, 1775, 1494, 717, 774, 2015};
  for (size_t i = 0; i < 8; ++i) {
    const IbHostDevice& d = s.devices[i];
    EXPECT_EQ(d.ca_type, "MT4129") << d.name;
    EXPECT_EQ(d.firmware, "28.41.1000");
    EXPECT_EQ(d.num_ports, 1);
    const IbHostPort& p = Port1(d);
    EXPECT_EQ(p.state, "Active");
    EXPECT_TRUE(p.active());
    EXPECT_EQ(p.phys_state, "LinkUp");
    EXPECT_EQ(p.phys_state_code, 5);
    EXPECT_EQ(p.rate_gbps, 400);
    EXPECT_TRUE(p.infiniband());
    EXPECT_EQ(p.sm_lid, 1u);
    EXPECT_EQ(p.lmc, 0u);
    EXPECT_EQ(p.capability_mask, 0xa751e848u);
    EXPECT_EQ(p.lid, lids[i]) << d.name;
    EXPECT_EQ(p.port_guid.value, d.node_guid.value);  // Node GUID = Port GUID
  }
  EXPECT_EQ(s.devices[0].node_guid.value, 0x58a2e10300a7820eu);
  const IbHostDevice& bond = Device(s, "mlx5_bond_0");
  EXPECT_EQ(bond.ca_type, "MT41692");
  EXPECT_EQ(bond.firmware, "32.38.3056");
  EXPECT_EQ(bond.hardware_version, "1");
  EXPECT_EQ(Port1(bond).rate_gbps, 200);
  EXPECT_EQ(Port1(bond).lid, 0u);
  EXPECT_EQ(Port1(bond).link_layer, "Ethernet");
  EXPECT_FALSE(Port1(bond).infiniband());
}

// A RoCE H100 host: every port Ethernet, two down (Polling, Disabled) at a meaningless 40.
TEST(Ibstat, RoceHostDownPorts) {
  const IbHostStatus s = Ibstat("ibstat_02_h100_roce_cx7_cx6dx_down_polling_disabled_rate40.txt");
  EXPECT_THAT(s.problems, IsEmpty()) << ProblemsText(s.problems);
  ASSERT_EQ(s.devices.size(), 12u);
  const std::vector<std::string> names = Names(s);  // lexicographic, as ibstat sorts
  EXPECT_THAT(std::vector<std::string>(names.begin(), names.begin() + 4),
              ElementsAre("mlx5_0", "mlx5_1", "mlx5_10", "mlx5_11"));
  int cx7 = 0, cx6dx = 0, zero_port_guids = 0;
  for (const IbHostDevice& d : s.devices) {
    const IbHostPort& p = Port1(d);
    EXPECT_EQ(p.link_layer, "Ethernet") << d.name;
    EXPECT_FALSE(p.infiniband());
    if (d.ca_type == "MT4129") {
      ++cx7;
      if (p.active()) {
        EXPECT_EQ(p.rate_gbps, 400) << d.name;
      }
    }
    if (d.ca_type == "MT4125") {
      ++cx6dx;
      EXPECT_EQ(p.rate_gbps, 100) << d.name;
    }
    zero_port_guids += p.port_guid.value == 0u;
  }
  EXPECT_EQ(cx7, 8);
  EXPECT_EQ(cx6dx, 4);
  EXPECT_GT(zero_port_guids, 1);
  const IbHostPort& polling = Port1(Device(s, "mlx5_11"));
  EXPECT_EQ(polling.state, "Down");
  EXPECT_EQ(polling.state_code, 1);
  EXPECT_FALSE(polling.active());
  EXPECT_EQ(polling.phys_state, "Polling");
  EXPECT_EQ(polling.phys_state_code, 2);
  EXPECT_EQ(polling.rate_gbps, 40);
  const IbHostPort& disabled = Port1(Device(s, "mlx5_5"));
  EXPECT_EQ(disabled.state_code, 1);
  EXPECT_EQ(disabled.phys_state, "Disabled");
  EXPECT_EQ(disabled.phys_state_code, 3);
}

// Azure A100 VM: 8 CAs printed, then ibpanic for mlx5_8: the 8 stay, the panic is a problem.
TEST(Ibstat, PartialOutputThenIbpanic) {
  const std::string name = "ibstat_03_azure_a100_cx6vf_hdr_partial_output_then_ibpanic.txt";
  const IbHostStatus s = Ibstat(name);
  ASSERT_EQ(s.devices.size(), 8u);
  const uint32_t lids[] = {13247, 13246, 13259, 13276, 13301, 13300, 13302, 13305};
  std::set<uint64_t> system_images;
  for (size_t i = 0; i < 8; ++i) {
    const IbHostDevice& d = s.devices[i];
    EXPECT_EQ(d.ca_type, "MT4124");
    EXPECT_EQ(d.firmware, "20.41.1000");
    system_images.insert(*d.system_image_guid.value);
    const IbHostPort& p = Port1(d);
    EXPECT_EQ(p.rate_gbps, 200);
    EXPECT_EQ(p.lid, lids[i]);
    EXPECT_EQ(p.sm_lid, 1u);
    EXPECT_EQ(p.capability_mask, 0xa651ec48u);
    EXPECT_TRUE(p.infiniband());
  }
  EXPECT_EQ(s.devices[0].node_guid.value, 0x00155dfffe3411ebu);
  EXPECT_EQ(s.devices[7].node_guid.value, 0x00155dfffe3411f2u);
  EXPECT_EQ(system_images.size(), 8u);  // all different
  ASSERT_EQ(s.problems.size(), 1u);
  EXPECT_THAT(s.problems[0].message,
              HasSubstr("stat of IB device 'mlx5_8' failed: No such file or directory"));
  EXPECT_EQ(s.problems[0].where.substr(0, name.size() + 1), name + ":");
}

// The same Azure host through ibstatus: hex LIDs that match ibstat's, an Ethernet port whose
// default GID is "unknown".
TEST(Ibstatus, AzureHdrPortsAndEthernet) {
  const IbHostStatus s =
      Ibstatus("ibstatus_01_azure_a100_hdr_8ports_plus_ethernet_gid_unknown.txt");
  EXPECT_THAT(s.problems, IsEmpty()) << ProblemsText(s.problems);
  ASSERT_EQ(s.devices.size(), 9u);
  const IbHostPort& p0 = Port1(s.devices[0]);
  EXPECT_EQ(s.devices[0].name, "mlx5_0");
  EXPECT_EQ(p0.default_gid, "fe80:0000:0000:0000:0015:5dff:fd34:11eb");
  EXPECT_EQ(p0.lid, 13247u);  // 0x33bf
  EXPECT_EQ(p0.sm_lid, 1u);
  EXPECT_EQ(p0.state, "ACTIVE");
  EXPECT_EQ(p0.state_code, 4);
  EXPECT_EQ(p0.phys_state, "LinkUp");
  EXPECT_EQ(p0.phys_state_code, 5);
  EXPECT_EQ(p0.rate_gbps, 200);
  EXPECT_EQ(p0.speed.width_lanes, 4);
  EXPECT_EQ(p0.speed.generation, "HDR");
  EXPECT_EQ(p0.link_layer, "InfiniBand");
  const IbHostPort& eth = Port1(Device(s, "mlx5_8"));
  EXPECT_EQ(eth.default_gid, "unknown");
  EXPECT_EQ(eth.rate_gbps, 40);
  EXPECT_EQ(eth.speed.generation, "QDR");
  EXPECT_EQ(eth.link_layer, "Ethernet");
  // Cross-file: the LIDs are ibstat_03's, device by device.
  const IbHostStatus ibstat =
      Ibstat("ibstat_03_azure_a100_cx6vf_hdr_partial_output_then_ibpanic.txt");
  ASSERT_EQ(ibstat.devices.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(s.devices[i].name, ibstat.devices[i].name);
    EXPECT_EQ(Port1(s.devices[i]).lid, Port1(ibstat.devices[i]).lid) << s.devices[i].name;
  }
}

// RoCE ports through ibstatus (CATALOGUE section F).
TEST(Ibstatus, RocePorts) {
  const IbHostStatus s = Ibstatus("ibstatus_01_roce_ports_cx_mlx5.txt");
  EXPECT_THAT(s.problems, IsEmpty()) << ProblemsText(s.problems);
  EXPECT_THAT(Names(s), ElementsAre("mlx5_0", "mlx5_1"));
  for (const IbHostDevice& d : s.devices) {
    const IbHostPort& p = Port1(d);
    EXPECT_EQ(p.state_code, 4);
    EXPECT_EQ(p.phys_state_code, 5);
    EXPECT_EQ(p.rate_gbps, 100);
    EXPECT_EQ(p.speed.generation, "EDR");
    EXPECT_EQ(p.link_layer, "Ethernet");
  }
  EXPECT_EQ(Port1(s.devices[0]).default_gid, "fe80:0000:0000:0000:8ae9:a4ff:fe9c:7f1a");
}

// ibv_devinfo -vv: one HDR port up, one disabled with an invalid speed and LID 65535.
TEST(IbvDevinfo, HdrActiveAndDisabled) {
  const std::string name =
      "ibv_devinfo_vv_01_cx6_hdr_ib_port_active_and_disabled_invalid_speed.txt";
  const IbHostStatus s = ParseIbvDevinfo(ReadIbFixture(name), name);
  EXPECT_THAT(s.problems, IsEmpty()) << ProblemsText(s.problems);
  EXPECT_THAT(Names(s), ElementsAre("mlx5_0", "mlx5_1"));
  const IbHostDevice& d = s.devices[0];
  EXPECT_EQ(d.firmware, "20.37.1700");
  EXPECT_EQ(d.node_guid.text, "88e9:a4ff:ff25:a462");
  EXPECT_EQ(d.node_guid.value, 0x88e9a4ffff25a462u);
  EXPECT_EQ(d.vendor_id, 0x02c9u);
  EXPECT_EQ(d.vendor_part_id, 4123u);
  EXPECT_EQ(d.board_id, "MT_0000000594");
  EXPECT_EQ(d.num_ports, 1);
  const IbHostPort& up = Port1(d);
  EXPECT_EQ(up.state, "PORT_ACTIVE");
  EXPECT_EQ(up.state_code, 4);
  EXPECT_EQ(up.sm_lid, 1u);
  EXPECT_EQ(up.lid, 4u);
  EXPECT_EQ(up.link_layer, "InfiniBand");
  EXPECT_EQ(up.speed.width_lanes, 4);
  EXPECT_EQ(up.speed.generation, "HDR");  // 50.0 Gbps (64) is HDR's lane rate
  EXPECT_EQ(up.rate_gbps, 200);
  EXPECT_EQ(up.phys_state, "LINK_UP");
  EXPECT_EQ(up.phys_state_code, 5);
  EXPECT_THAT(up.gids, ElementsAre("fe80:0000:0000:0000:88e9:a4ff:ff25:a462"));
  const IbHostPort& down = Port1(s.devices[1]);
  EXPECT_EQ(down.state, "PORT_DOWN");
  EXPECT_EQ(down.state_code, 1);
  EXPECT_EQ(down.lid, 65535u);
  EXPECT_TRUE(IsUnassignedLid(*down.lid));
  EXPECT_FALSE(down.speed.known());
  EXPECT_FALSE(down.rate_gbps);  // invalid speed: absent, not 0
  EXPECT_EQ(down.phys_state, "DISABLED");
  EXPECT_EQ(down.phys_state_code, 3);
}

}  // namespace railwatch::ib::host_status_test
