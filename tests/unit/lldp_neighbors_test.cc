// lldpd's `show neighbors` output as real hosts and switches printed it (tests/fixtures/lldp,
// from ../shared/realworld; CATALOGUE.md section U says what each holds).
#include "collectors/lldp_neighbors.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "support/ttar.h"

namespace railwatch {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string Fixture(const std::string& name) {
  std::ifstream in(testing::FixturePath("lldp/" + name));
  EXPECT_TRUE(in.good()) << name;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const LldpNeighbor* On(const LldpParseResult& r, const std::string& interface) {
  for (const LldpNeighbor& n : r.neighbors) {
    if (n.local_interface == interface) return &n;
  }
  ADD_FAILURE() << "no neighbour on " << interface;
  return nullptr;
}

// An AI host's rail NICs, each to its rail leaf, all on the leaf's Ethernet184 (json0).
TEST(LldpNeighbors, Json0RailLeaves) {
  const LldpParseResult r = ParseLldpNeighbors(
      Fixture("lldp_07_json0_ai_host_mlx_np0_to_sonic_cuos_ds730_rail_leaves_eth184.json"),
      "lldp_07.json");
  EXPECT_THAT(r.problems, IsEmpty());
  EXPECT_EQ(r.format, "json0");
  ASSERT_EQ(r.neighbors.size(), 5u);
  const LldpNeighbor* storage = On(r, "ens1np0");
  ASSERT_NE(storage, nullptr);
  EXPECT_EQ(storage->system_name, "StorageSW");
  EXPECT_EQ(storage->chassis_id_type, "mac");
  EXPECT_EQ(storage->chassis_id, "70:06:92:6e:32:64");
  EXPECT_THAT(storage->management_addresses, ElementsAre("10.193.77.211"));
  EXPECT_EQ(storage->port_id_type, "local");
  EXPECT_EQ(storage->PortName(), "Ethernet120");
  EXPECT_EQ(storage->via, "LLDP");
  EXPECT_EQ(storage->age, "0 day, 01:48:20");
  EXPECT_THAT(storage->system_description, HasSubstr("HwSku: ds730-32d"));
  const std::pair<const char*, const char*> rails[] = {{"ens108np0", "LEAF01"},
                                                       {"ens110np0", "LEAF02"},
                                                       {"ens841np0", "LEAF03"},
                                                       {"ens842np0", "LEAF04"}};
  for (const auto& [nic, leaf] : rails) {
    const LldpNeighbor* n = On(r, nic);
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->system_name, leaf) << nic;
    EXPECT_EQ(n->PortName(), "Ethernet184") << nic;
    EXPECT_EQ(n->management_addresses.size(), 1u) << nic;
  }
}

// RDMA NICs to an access switch and back to back to another host, whose lldpd sends its MAC
// as the port id and its ifname as the description (json0).
TEST(LldpNeighbors, Json0HostPeerPortIsItsIfname) {
  const LldpParseResult r = ParseLldpNeighbors(
      Fixture("lldp_06_json0_host_rdma_nics_to_h3c_and_back_to_back_ubuntu_host_unknown_tlv.json"),
      "lldp_06.json");
  EXPECT_THAT(r.problems, IsEmpty());
  ASSERT_EQ(r.neighbors.size(), 3u);
  const LldpNeighbor* h3c = On(r, "enp129s0f0");
  ASSERT_NE(h3c, nullptr);
  EXPECT_EQ(h3c->system_name, "DaoCloud_ShangPu_H3C_D01_AccessSwitch");
  EXPECT_EQ(h3c->chassis_id, "58:c7:ac:5f:2d:2c");
  EXPECT_EQ(h3c->PortName(), "GigabitEthernet1/0/17");
  EXPECT_EQ(h3c->ttl_seconds, 121);
  EXPECT_THAT(h3c->management_addresses, IsEmpty());
  const LldpNeighbor* peer = On(r, "enp5s0f0np0");
  ASSERT_NE(peer, nullptr);
  EXPECT_EQ(peer->system_name, "10-20-1-50");
  EXPECT_EQ(peer->port_id_type, "mac");
  EXPECT_EQ(peer->port_id, "e8:eb:d3:93:ae:10");
  EXPECT_NE(peer->PortName(), peer->port_id) << "the description names the peer's port";
  EXPECT_EQ(peer->PortName(), peer->port_description);
  EXPECT_THAT(peer->management_addresses, ElementsAre("10.20.1.50", "fe80::ae1f:6bff:fe25:8664"));
}

// Old lldpd's -f json after a shell prompt, cut off mid-document: one problem with its
// position, nothing invented.
TEST(LldpNeighbors, TruncatedJsonIsAProblemWithItsPosition) {
  const LldpParseResult r = ParseLldpNeighbors(
      Fixture("lldp_05_sonic_lldpctl_json_eth0_to_cisco6500_truncated.txt"), "lldp_05.txt");
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_THAT(r.problems[0].where, ::testing::StartsWith("lldp_05.txt:"));
  EXPECT_THAT(r.problems[0].message, HasSubstr("not JSON"));
  EXPECT_THAT(r.neighbors, IsEmpty());
}

// The same shape, complete: chassis keyed by system name, mgmt-ip a string, ttl in the chassis.
TEST(LldpNeighbors, JsonOfOlderLldpd) {
  const std::string text = R"(root@leaf:~# lldpctl -f json
{"lldp": {"interface": [{"eth0": {"via": "LLDP", "rid": "1", "age": "0 day, 08:40:40",
  "chassis": {"c6500-vxlan": {"id": {"type": "mac", "value": "00:1c:0f:5f:c7:c0"},
    "descr": "Cisco IOS", "ttl": "120", "mgmt-ip": "172.31.1.254"}},
  "port": {"id": {"type": "ifname", "value": "Gi3/36"}, "descr": "GigabitEthernet3/36"}}}]}}
)";
  const LldpParseResult r = ParseLldpNeighbors(text, "old.json");
  EXPECT_THAT(r.problems, IsEmpty());
  EXPECT_EQ(r.format, "json");
  ASSERT_EQ(r.neighbors.size(), 1u);
  const LldpNeighbor& n = r.neighbors[0];
  EXPECT_EQ(n.local_interface, "eth0");
  EXPECT_EQ(n.system_name, "c6500-vxlan");
  EXPECT_EQ(n.chassis_id, "00:1c:0f:5f:c7:c0");
  EXPECT_EQ(n.ttl_seconds, 120);
  EXPECT_THAT(n.management_addresses, ElementsAre("172.31.1.254"));
  EXPECT_EQ(n.PortName(), "Gi3/36");
}

// keyvalue with the fixture's anonymisation slip: eno1's name line sits in eno2d1's block; a
// parser keyed by the interface in the key gives it to eno1 and leaves eno2d1 without a name.
TEST(LldpNeighbors, KeyValueFollowsTheKeyNotTheBlock) {
  const LldpParseResult r = ParseLldpNeighbors(
      Fixture("lldp_01_keyvalue_host_to_cumulus3.7_dell_s4100_two_ports.txt"), "lldp_01.txt");
  EXPECT_THAT(r.problems, IsEmpty());
  EXPECT_EQ(r.format, "keyvalue");
  ASSERT_EQ(r.neighbors.size(), 2u);
  const LldpNeighbor* eno1 = On(r, "eno1");
  const LldpNeighbor* eno2 = On(r, "eno2d1");
  ASSERT_NE(eno1, nullptr);
  ASSERT_NE(eno2, nullptr);
  EXPECT_EQ(eno1->system_name, "toto-chassis.dc42");
  EXPECT_EQ(eno2->system_name, "");
  EXPECT_EQ(eno1->chassis_id_type, "mac");
  EXPECT_EQ(eno1->chassis_id, "e4:f0:04:b6:47:32");
  EXPECT_EQ(eno2->chassis_id, "e4:f0:04:b6:4e:32");
  EXPECT_EQ(eno1->PortName(), "swp46");
  EXPECT_EQ(eno1->port_description, "BXVWNR2:lom2");
  EXPECT_EQ(eno1->ttl_seconds, 120);
  EXPECT_THAT(eno1->management_addresses, ElementsAre("10.160.20.18", "fe80::e6f0:4ff:feb6:4732"));
  EXPECT_EQ(eno2->age, "35 days, 08:30:52");
}

// A value over several lines (chassis.descr) and a port id of type local.
TEST(LldpNeighbors, KeyValueMultiLineValuesAndLocalPortIds) {
  const LldpParseResult cisco = ParseLldpNeighbors(
      Fixture("lldp_02_keyvalue_host_to_cisco2960x_multiline_descr_vlan.txt"), "lldp_02.txt");
  EXPECT_THAT(cisco.problems, IsEmpty());
  ASSERT_EQ(cisco.neighbors.size(), 1u);
  EXPECT_EQ(cisco.neighbors[0].system_name, "s35-b12.dc3");
  EXPECT_EQ(cisco.neighbors[0].PortName(), "Gi1/0/29");
  EXPECT_EQ(cisco.neighbors[0].port_description, "GigabitEthernet1/0/29");
  EXPECT_THAT(cisco.neighbors[0].management_addresses, ElementsAre("10.43.31.35"));
  EXPECT_GE(std::count(cisco.neighbors[0].system_description.begin(),
                       cisco.neighbors[0].system_description.end(), '\n'),
            3);

  const LldpParseResult qfx = ParseLldpNeighbors(
      Fixture("lldp_03_keyvalue_host_to_juniper_qfx5100_unknown_tlvs_port_local.txt"),
      "lldp_03.txt");
  EXPECT_THAT(qfx.problems, IsEmpty());
  ASSERT_EQ(qfx.neighbors.size(), 2u);
  const LldpNeighbor* eth0 = On(qfx, "eth0");
  ASSERT_NE(eth0, nullptr);
  EXPECT_EQ(eth0->port_id_type, "local");
  EXPECT_EQ(eth0->port_id, "512");
  EXPECT_EQ(eth0->PortName(), "512");
  EXPECT_THAT(eth0->port_description, HasSubstr("xe-0/0/"));
}

// SONiC's `show lldp table` and lldpctl's plain format are for people: a clear problem.
TEST(LldpNeighbors, PlainFormatIsRefusedClearly) {
  const LldpParseResult r = ParseLldpNeighbors(
      Fixture("lldp_04_sonic_show_lldp_table_and_neighbors_plain_truncated.txt"), "lldp_04.txt");
  EXPECT_THAT(r.neighbors, IsEmpty());
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].ToString(),
            "lldp_04.txt:1:1: neither lldpcli's JSON (-f json0, -f json) nor -f keyvalue");
}

TEST(LldpNeighbors, NoNeighboursAndBadLines) {
  EXPECT_THAT(ParseLldpNeighbors(R"({"lldp": [{}]})", "x").neighbors, IsEmpty());
  EXPECT_THAT(ParseLldpNeighbors(R"({"lldp": {}})", "x").problems, IsEmpty());
  EXPECT_THAT(ParseLldpNeighbors("", "x").problems, IsEmpty());
  const LldpParseResult r =
      ParseLldpNeighbors("lldp.eth0.via=LLDP\nlldp.eth0.port.ifname=swp1\nlldp.nodot\n", "kv.txt");
  ASSERT_EQ(r.neighbors.size(), 1u);
  EXPECT_EQ(r.neighbors[0].PortName(), "swp1");
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_EQ(r.problems[0].ToString(), "kv.txt:3:1: no '=' in the line");
  const LldpParseResult vlan = ParseLldpNeighbors("lldp.eth0.100.port.ifname=swp2\n", "v");
  ASSERT_EQ(vlan.neighbors.size(), 1u);
  EXPECT_EQ(vlan.neighbors[0].local_interface, "eth0.100");
}

}  // namespace
}  // namespace railwatch
