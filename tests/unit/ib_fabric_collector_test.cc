// The InfiniBand fabric scanner's collector on real tool output (tests/fixtures/ib, from
// ../shared/realworld: the OSC EDR fabric's `ibnetdiscover -p` and `perfquery -x`, a mail's
// `ibqueryerrors`), read from a directory as a site's cron jobs would leave them.
#include <sys/stat.h>
#include <sys/time.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "collectors/ib_fabric_collector.h"
#include "collectors/ib_fabric_source.h"
#include "common/text.h"
#include "gtest/gtest.h"
#include "support/recording_emitter.h"

namespace railwatch::testing {
namespace {

namespace fs = std::filesystem;

std::string Fixture(const std::string& name) {
  absl::StatusOr<std::string> text = ReadFile(std::string(RAILWATCH_FIXTURES_DIR) + "/ib/" + name);
  EXPECT_TRUE(text.ok()) << text.status();
  return text.ok() ? *text : "";
}

class IbFabricCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("railwatch-ib-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    collector_ = std::make_unique<IbFabricCollector>(
        IbFabricCollector::Options{{{"agent", "ib-scanner"}}},
        std::make_unique<IbToolOutputSource>(IbToolOutputSource::Options{dir_.string()}));
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes `text` as `name` with modification time `mtime_s` (seconds since the epoch).
  void Write(const std::string& name, const std::string& text, int64_t mtime_s) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    const struct timeval times[2] = {{mtime_s, 0}, {mtime_s, 0}};
    ASSERT_EQ(::utimes(path.c_str(), times), 0);
  }

  fs::path dir_;
  std::unique_ptr<IbFabricCollector> collector_;
  RecordingEmitter out_;
};

constexpr char kSw1719[] =
    "{guid=\"0x7cfe9003009ce5b0\",interface=\"1\",switch=\"ib-i1l1s01\"}";
constexpr char kSw2052[] =
    "{guid=\"0x506b4b03005c2740\",interface=\"1\",switch=\"ib-i4l1s01\"}";

TEST_F(IbFabricCollectorTest, SwitchPortCountersBecomeTheCanonicalSeriesOfBothEnds) {
  Write("fabric.ports", Fixture("ibnetdiscover_p_01_osc_edr_ca_sw_lines_and_unconnected.txt"), 1000);
  Write("lid1719.pq", Fixture("perfquery_x_01_osc_edr_switch_lid1719_two_ports_extended_errors.txt"), 1000);
  Write("lid2052.pq", Fixture("perfquery_x_02_osc_edr_switch_lid2052_xmitdiscards_linkdowned.txt"), 1000);
  // An HCA's counters: its host agent reports them from sysfs, the scanner does not.
  Write("lid133.pq", Fixture("perfquery_x_03_osc_edr_hca_lid133_capmask_5A00.txt"), 1000);
  // LID 10 is in no topology here: unplaced, counted, not guessed.
  Write("lid10.pq", Fixture("perfquery_x_04_rhel75_lid10_all_zero_with_root_prompt_line.txt"), 1000);
  Write("notes.txt", "nothing an InfiniBand tool prints\n", 1000);
  ASSERT_TRUE(collector_->Collect(out_).ok());

  EXPECT_EQ(out_.Get(std::string("fabric_rdma_port_transmit_wait_total") + kSw1719), 22730501u);
  // PortXmitData counts 4-octet words.
  EXPECT_EQ(out_.Get(std::string("fabric_rdma_port_transmit_bytes_total") + kSw1719),
            36298026860928u * 4);
  EXPECT_EQ(out_.Get(std::string("fabric_rdma_port_transmit_wait_total") +
                     "{guid=\"0x7cfe9003009ce5b0\",interface=\"2\",switch=\"ib-i1l1s01\"}"),
            36510964u);
  EXPECT_EQ(out_.Get(std::string("fabric_rdma_port_transmit_discards_total") + kSw2052), 20046u);
  EXPECT_EQ(out_.Get(std::string("fabric_rdma_link_downed_total") + kSw2052), 1u);
  EXPECT_EQ(out_.Get(std::string("fabric_rdma_port_receive_switch_relay_errors_total") + kSw2052), 7u);
  size_t links = 0;
  for (const std::string& name : out_.names) {
    if (name.starts_with("fabric_ib_link_info{") ||
        name.starts_with("fabric_rdma_port_rate_bytes_per_second{")) {
      ++links;  // the cabling and each port's rate, sent every scan
      continue;
    }
    EXPECT_EQ(name.find("guid=\"0x7cfe9003003b4b96\""), std::string::npos) << name;  // the HCA
  }
  EXPECT_GT(links, 0u);
  const std::string self = "{agent=\"ib-scanner\"}";
  EXPECT_EQ(out_.GetGauge("railwatch_ib_scan_inputs" + self), 5);
  EXPECT_EQ(out_.GetGauge("railwatch_ib_scan_unrecognised_inputs" + self), 1);
  EXPECT_EQ(out_.GetGauge("railwatch_ib_scan_switch_ports" + self), 3);
  EXPECT_EQ(out_.Get("railwatch_ib_scan_unplaced_records_total" + self), 1u);

  // Nothing changed: no point is sent twice. A file rewritten later: its new values.
  const size_t points = out_.points;
  ASSERT_TRUE(collector_->Collect(out_).ok());
  EXPECT_EQ(out_.points - points, 5u + links);  // the self series, links and rates, again
  std::string next = Fixture("perfquery_x_02_osc_edr_switch_lid2052_xmitdiscards_linkdowned.txt");
  next.replace(next.find("20046"), 5, "20050");
  Write("lid2052.pq", next, 1010);
  ASSERT_TRUE(collector_->Collect(out_).ok());
  EXPECT_EQ(out_.Get(std::string("fabric_rdma_port_transmit_discards_total") + kSw2052), 20050u);
}

// ibqueryerrors prints only counters beyond its thresholds, a switch by its node GUID, and
// 65535 / 4294967295 where a 16- or 32-bit counter stopped: saturated, said as such.
TEST_F(IbFabricCollectorTest, SaturatedCountersAreSaidToBeSo) {
  Write("ibqueryerrors.txt",
        Fixture("ibqueryerrors_01_fdr_sx6036_saturated_counters_mail_quoted.txt"), 2000);
  // The switch is in no topology yet: its records cannot be placed.
  ASSERT_TRUE(collector_->Collect(out_).ok());
  EXPECT_GT(*out_.Get("railwatch_ib_scan_unplaced_records_total{agent=\"ib-scanner\"}"), 0u);
  EXPECT_TRUE(out_.counters.count(
                  "fabric_rdma_symbol_errors_total{guid=\"0x0002c903006e29b0\",interface=\"5\","
                  "switch=\"ys23ib4\"}") == 0);

  // A ports report that names it (written by the test: the sample's fabric has none).
  Write("fabric.ports",
        "SW    19  5 0x0002c903006e29b0 4x FDR - CA    7  1 0x0002c90300a0b1c1 "
        "( 'MF0;ys23ib4:SX6036/U1' - 'dl380g7 mlx4_0' )\n",
        2000);
  ASSERT_TRUE(collector_->Collect(out_).ok());
  const std::string port5 = "{guid=\"0x0002c903006e29b0\",interface=\"5\",switch=\"ys23ib4\"}";
  EXPECT_EQ(out_.Get("fabric_rdma_symbol_errors_total" + port5), 65535u);
  EXPECT_EQ(out_.GetGauge("fabric_rdma_counter_saturated{counter=\"SymbolErrorCounter\","
                          "guid=\"0x0002c903006e29b0\",interface=\"5\",switch=\"ys23ib4\"}"),
            1);
  EXPECT_EQ(out_.Get("fabric_rdma_port_transmit_discards_total" + port5), 649u);
  // Not saturated: no saturation series at all.
  EXPECT_FALSE(out_.GetGauge("fabric_rdma_counter_saturated{counter=\"PortXmitDiscards\","
                             "guid=\"0x0002c903006e29b0\",interface=\"5\",switch=\"ys23ib4\"}")
                   .has_value());
}

// The cabling the topology file says, as the fabric map's facts: HCA neighbours by host and port
// GUID, switch neighbours by name and port number, width and speed as printed.
TEST_F(IbFabricCollectorTest, EverySwitchPortLinkIsAFactOfTheFabricMap) {
  Write("fabric.topo", Fixture("ibnetdiscover_02_nvidia_lab_mixed_hdr_edr_fdr_fdr10_self_loop_cable.txt"), 3000);
  ASSERT_TRUE(collector_->Collect(out_).ok());
  auto link = [&](const std::string& labels) {
    return out_.GetGauge("fabric_ib_link_info{" + labels + "}");
  };
  EXPECT_EQ(link("guid=\"0xb8599f0300fc6de4\",interface=\"23\",neighbor_guid=\"0xec0d9a03007d7d0a\","
                 "neighbor_port=\"0xec0d9a03007d7d0a\",neighbor_system=\"r-dcs96\","
                 "speed=\"EDR\",switch=\"r-ufm-sw95\",width=\"4x\""),
            1);
  EXPECT_EQ(link("guid=\"0xb8599f0300fc6de4\",interface=\"3\",neighbor_guid=\"0x0002c903007b78b0\","
                 "neighbor_port=\"1\",neighbor_system=\"r-ufm-sw226\","
                 "speed=\"FDR\",switch=\"r-ufm-sw95\",width=\"4x\""),
            1);
  // The same cable from the SX6036's side.
  EXPECT_EQ(link("guid=\"0x0002c903007b78b0\",interface=\"1\",neighbor_guid=\"0xb8599f0300fc6de4\","
                 "neighbor_port=\"3\",neighbor_system=\"r-ufm-sw95\","
                 "speed=\"FDR\",switch=\"r-ufm-sw226\",width=\"4x\""),
            1);
  // A self-loop cable: the switch is its own neighbour.
  EXPECT_EQ(link("guid=\"0x0002c903007b78b0\",interface=\"25\",neighbor_guid=\"0x0002c903007b78b0\","
                 "neighbor_port=\"26\",neighbor_system=\"r-ufm-sw226\","
                 "speed=\"FDR10\",switch=\"r-ufm-sw226\",width=\"4x\""),
            1);
  size_t links = 0;
  for (const std::string& name : out_.names) links += name.starts_with("fabric_ib_link_info{");
  // The file's 19 switch port lines (its 32 port lines less the 13 CA blocks' ones).
  EXPECT_EQ(links, 19u);
  // Each switch port's rate from its link's width and speed, as a host agent gives an HCA's:
  // 4x EDR 100 Gb/s, 4x FDR 56, 4x FDR10 40, in bytes/s.
  auto rate = [&](const std::string& guid, const std::string& port, const std::string& sw) {
    return out_.GetGauge("fabric_rdma_port_rate_bytes_per_second{guid=\"" + guid +
                         "\",interface=\"" + port + "\",switch=\"" + sw + "\"}");
  };
  EXPECT_EQ(rate("0xb8599f0300fc6de4", "23", "r-ufm-sw95"), 100e9 / 8);
  EXPECT_EQ(rate("0xb8599f0300fc6de4", "3", "r-ufm-sw95"), 56e9 / 8);
  EXPECT_EQ(rate("0x0002c903007b78b0", "1", "r-ufm-sw226"), 56e9 / 8);
}

// ibdiagnet's db_csv, as a site's cron leaves it: NODES and LINKS are the topology, PORTS the
// links' width and speed, PM_INFO the counters (the 2025-03-31 run of one NDR fabric).
TEST_F(IbFabricCollectorTest, IbdiagnetsDatabaseIsTopologyAndCountersAtOnce) {
  Write("ibdiagnet2.db_csv", Fixture("db_csv_01_ndr_quantum2_mqm9700_272nodes_full_run_complete.db_csv"), 4000);
  ASSERT_TRUE(collector_->Collect(out_).ok());
  const std::string port1 = "{guid=\"0xb0cf0e0300d33fc0\",interface=\"1\",switch=\"ib-switch-sequoia\"}";
  // PortXmitData's 32-bit column is stuck at all ones; the Extended one is the count.
  EXPECT_EQ(out_.Get("fabric_rdma_port_transmit_bytes_total" + port1), 299195507523u * 4);
  // PortXmitWait too: 4294967295 in PortCounters, 9463628588 in PortXmitWaitExt. The 64-bit
  // count is the true one, so no saturation is said.
  EXPECT_EQ(out_.Get("fabric_rdma_port_transmit_wait_total" + port1), 9463628588u);
  EXPECT_FALSE(out_.GetGauge("fabric_rdma_counter_saturated{counter=\"PortXmitWait\","
                             "guid=\"0xb0cf0e0300d33fc0\",interface=\"1\",switch=\"ib-switch-sequoia\"}")
                   .has_value());
  EXPECT_EQ(out_.Get("fabric_rdma_port_receive_switch_relay_errors_total"
                     "{guid=\"0xb0cf0e0300d33fc0\",interface=\"2\",switch=\"ib-switch-sequoia\"}"),
            158u);
  size_t links = 0, spine_links = 0;
  for (const std::string& name : out_.names) {
    if (!name.starts_with("fabric_ib_link_info{")) continue;
    ++links;
    if (name.find("switch=\"ib-switch-sequoia\"") != std::string::npos) {
      ++spine_links;
      EXPECT_NE(name.find("neighbor_port=\"63\""), std::string::npos) << name;
      EXPECT_NE(name.find("speed=\"NDR\""), std::string::npos) << name;
    }
  }
  EXPECT_EQ(spine_links, 8u);  // the spine's ports 1-8 to the 8 leaves, each on its port 63
  EXPECT_GT(links, 256u);      // and the leaves' ports to 256 HCA ports
  // TEMP_SENSING: the spine at 46 °C, the hottest leaf at 62; HCAs' are their hosts'.
  EXPECT_EQ(out_.GetGauge("fabric_ib_node_temperature_celsius{guid=\"0xb0cf0e0300d33fc0\","
                          "switch=\"ib-switch-sequoia\"}"),
            46);
  EXPECT_EQ(out_.GetGauge("fabric_ib_node_temperature_celsius{guid=\"0xfc6a1c03008a5c00\","
                          "switch=\"Quantum-2 Mellanox Technologies\"}"),
            62);
  size_t temperatures = 0;
  for (const std::string& name : out_.names) {
    temperatures += name.starts_with("fabric_ib_node_temperature_celsius{");
  }
  EXPECT_EQ(temperatures, 9u);  // the 9 switches of the 272 nodes
  // PORTS' LinkWidthActv 2 (4x) and extended speed NDR: 400 Gb/s on the spine's ports.
  EXPECT_EQ(out_.GetGauge("fabric_rdma_port_rate_bytes_per_second" + port1), 400e9 / 8);
  EXPECT_EQ(out_.GetGauge("railwatch_ib_scan_inputs{agent=\"ib-scanner\"}"), 1);
}

// ibdiagnet2.cables beside the db_csv of the same fabric: each switch port's module as series,
// placed by the block's GUID through the db_csv's NODES (one leaf of the 272-node NDR fabric).
TEST_F(IbFabricCollectorTest, CableModulesOfSwitchPortsBecomeSeries) {
  Write("ibdiagnet2.db_csv", Fixture("db_csv_01_ndr_quantum2_mqm9700_272nodes_full_run_complete.db_csv"), 4000);
  Write("ibdiagnet2.cables", Fixture("ibdiagnet2_cables_01_ndr_osfp_sr8_800g_twin_port_switch_side_excerpt.txt"), 4001);
  // An HCA's module: its host's (issue 24), not the scanner's.
  Write("hca.cables", Fixture("ibdiagnet2_cables_02_ndr_hca_osfp_sr4_400g_rx_power_sentinel_block.txt"), 4002);
  ASSERT_TRUE(collector_->Collect(out_).ok());
  const std::string leaf = "guid=\"0xb0cf0e0300e5b940\",interface=\"1\",switch=\"Quantum-2 Mellanox Technologies\"";
  EXPECT_EQ(out_.GetGauge("fabric_ib_cable_temperature_celsius{" + leaf + "}"), 58);
  EXPECT_EQ(out_.GetGauge("fabric_ib_cable_temperature_alarm_high_celsius{" + leaf + "}"), 80);
  EXPECT_EQ(out_.GetGauge("fabric_ib_cable_alarm_flags{flags=\"rx_power\"," + leaf + "}"), 0);
  // The twin-port OSFP: one serial number on ports 1 and 2.
  size_t twins = 0, rx_power = 0;
  for (const std::string& name : out_.names) {
    if (name.starts_with("fabric_ib_cable_info{") &&
        name.find("serial_number=\"G2430283435\"") != std::string::npos) {
      ++twins;
      EXPECT_NE(name.find("part_number=\"OSFP-SR8-800G\""), std::string::npos) << name;
      EXPECT_NE(name.find("vendor=\"FS\""), std::string::npos) << name;
    }
    rx_power += name.starts_with("fabric_ib_cable_rx_power_dbm{");
    if (name.starts_with("fabric_ib_cable")) {
      EXPECT_EQ(name.find("0x5c25730300d0dc72"), std::string::npos) << "an HCA's module: " << name;
    }
  }
  EXPECT_EQ(twins, 2u);
  // Every lane prints -999.999 mW (not supported): no receive power, never a zero.
  EXPECT_EQ(rx_power, 0u);
}

TEST(IbToolOutputKind, EachToolIsToldApartByItsContent) {
  EXPECT_EQ(IbToolOutputKind(Fixture("ibnetdiscover_05a_putty_log_hdr_mqm8700_leaf_lid65535_crlf_tabs_lost_head.txt")),
            "ibnetdiscover");
  EXPECT_EQ(IbToolOutputKind(Fixture("ibnetdiscover_06_ibdiagnet_generated_ndr_quantum2_port_labels_excerpt.txt")),
            "ibnetdiscover");
  EXPECT_EQ(IbToolOutputKind(Fixture("ibnetdiscover_p_02_hdr_aggregation_node_split_port81_partly_edited.txt")),
            "ibnetdiscover-ports");
  EXPECT_EQ(IbToolOutputKind(Fixture("perfquery_x_04_rhel75_lid10_all_zero_with_root_prompt_line.txt")),
            "perfquery");
  EXPECT_EQ(IbToolOutputKind(Fixture("perfquery_E_01_osc_edr_rcv_error_details_lid1719_port1.txt")),
            "perfquery");
  EXPECT_EQ(IbToolOutputKind(Fixture("ibqueryerrors_01_fdr_sx6036_saturated_counters_mail_quoted.txt")),
            "ibqueryerrors");
  EXPECT_EQ(IbToolOutputKind(Fixture("db_csv_02_ndr_skip_run_args_header_and_nodes_section_excerpt.db_csv")),
            "ibdiagnet-db");
  EXPECT_EQ(IbToolOutputKind("Sat Nov 28 01:00:00 UTC 2026\n"), "");
}

TEST(IbToolOutputKind, IbdiagnetsPmCablesAndNetDumpAreToldApartByTheirContent) {
  // .pm and .cables share their header and block lines; the first line of a block says which.
  EXPECT_EQ(IbToolOutputKind(Fixture("ibdiagnet2_pm_01_ndr_mqm9700_spine_ports1-2_hex_counters_excerpt.txt")),
            "ibdiagnet-pm");
  EXPECT_EQ(IbToolOutputKind(Fixture("ibdiagnet2_pm_02_ndr_cx7_hca_saturated_symbol_rcv_errors_block.txt")),
            "ibdiagnet-pm");
  EXPECT_EQ(IbToolOutputKind(Fixture("ibdiagnet2_cables_01_ndr_osfp_sr8_800g_twin_port_switch_side_excerpt.txt")),
            "ibdiagnet-cables");
  EXPECT_EQ(IbToolOutputKind(Fixture("ibdiagnet2_cables_02_ndr_hca_osfp_sr4_400g_rx_power_sentinel_block.txt")),
            "ibdiagnet-cables");
  EXPECT_EQ(IbToolOutputKind(Fixture("net_dump_01_ndr_quantum2_leaf_lid24_fec_modes_down_ports_excerpt.txt")),
            "ibdiagnet-net-dump");
  EXPECT_EQ(IbToolOutputKind(Fixture("net_dump_ext_01_ndr_header_ber_columns_empty_switch_lid24_excerpt.txt")),
            "ibdiagnet-net-dump");
  // An excerpt without the column header: its "CA : ... : 0x..." rows are not a -p report's.
  EXPECT_EQ(IbToolOutputKind(Fixture("net_dump_ext_02_ndr_hca_pci_labels_and_spine_desc_with_colon_tail.txt")),
            "ibdiagnet-net-dump");
}

TEST(ParseIbToolOutput, IbdiagnetsPmNetDumpAndCablesFillTheScan) {
  const IbFabricScan pm = ParseIbToolOutput(
      Fixture("ibdiagnet2_pm_02_ndr_cx7_hca_saturated_symbol_rcv_errors_block.txt"), "ibdiagnet2.pm",
      7000);
  EXPECT_EQ(pm.inputs_read, 1);
  EXPECT_TRUE(pm.problems.empty());
  ASSERT_EQ(pm.counters.size(), 4u);  // one record per attribute
  bool wait = false;
  for (const IbFabricScan::Counters& c : pm.counters) {
    EXPECT_EQ(c.time_unix_nano, 7000);
    EXPECT_EQ(c.port.guid.value, 0x5c25730300f3df50u);
    if (auto it = c.port.counters.find("PortXmitWait");
        it != c.port.counters.end() && c.port.attribute == ib::PmaAttribute::kPortCountersExtended) {
      EXPECT_EQ(it->second.value, 6708572582u);
      wait = true;
    }
  }
  EXPECT_TRUE(wait);

  const IbFabricScan dump = ParseIbToolOutput(
      Fixture("net_dump_01_ndr_quantum2_leaf_lid24_fec_modes_down_ports_excerpt.txt"),
      "ibdiagnet2.net_dump", 7000);
  EXPECT_EQ(dump.inputs_read, 1);
  ASSERT_EQ(dump.nodes.size(), 1u);
  EXPECT_EQ(dump.nodes[0].type, ib::IbNodeType::kSwitch);
  ASSERT_EQ(dump.links.size(), 34u);  // the 65 ports less the 31 down
  const ib::IbLink& uplink = dump.links[32];  // 1/32/1, the 33rd up port
  EXPECT_EQ(uplink.local.port, 63);
  ASSERT_TRUE(uplink.peer.has_value());
  EXPECT_EQ(uplink.peer->node_guid.value, 0xb0cf0e0300d33fc0u);
  EXPECT_EQ(uplink.speed.aggregate_gbps(), 400);

  const IbFabricScan cables = ParseIbToolOutput(
      Fixture("ibdiagnet2_cables_01_ndr_osfp_sr8_800g_twin_port_switch_side_excerpt.txt"),
      "ibdiagnet2.cables", 7000);
  EXPECT_EQ(cables.inputs_read, 1);
  ASSERT_EQ(cables.cables.size(), 2u);
  EXPECT_EQ(cables.cables[0].sn, cables.cables[1].sn);
  EXPECT_EQ(cables.cables[1].port, 2);
  EXPECT_TRUE(cables.counters.empty());
}

TEST_F(IbFabricCollectorTest, IbdiagnetsCablesAreKeptWhenTheirFileIsUnchanged) {
  Write("ibdiagnet2.cables",
        Fixture("ibdiagnet2_cables_02_ndr_hca_osfp_sr4_400g_rx_power_sentinel_block.txt"), 5000);
  IbToolOutputSource source(IbToolOutputSource::Options{dir_.string()});
  for (int scan = 0; scan < 2; ++scan) {
    absl::StatusOr<IbFabricScan> s = source.Scan();
    ASSERT_TRUE(s.ok()) << s.status();
    ASSERT_EQ(s->cables.size(), 1u) << scan;
    EXPECT_EQ(s->cables[0].sn, "G2420461167");
  }
}

TEST(IbSwitchName, NvidiaNodeDescriptionsGiveTheHostname) {
  EXPECT_EQ(IbSwitchName("MF0;ib-switch-sequoia:MQM9700/U1"), "ib-switch-sequoia");
  EXPECT_EQ(IbSwitchName("MF0;sat11-0101-0901-01ib1-A:MCS8500/L20/U2"), "sat11-0101-0901-01ib1-A");
  EXPECT_EQ(IbSwitchName(" 5FB0406-spine-IB02 "), "5FB0406-spine-IB02");
  EXPECT_EQ(IbSwitchName("Quantum-2 Mellanox Technologies"), "Quantum-2 Mellanox Technologies");
  EXPECT_EQ(IbSwitchName(""), "");
}

TEST_F(IbFabricCollectorTest, AMissingDirectoryFailsTheCycleAndSaysWhich) {
  fs::remove_all(dir_);
  const absl::Status s = collector_->Collect(out_);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find(dir_.string()), std::string::npos) << s;
}

}  // namespace
}  // namespace railwatch::testing
