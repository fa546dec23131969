#include "sim/ethtool_writer.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <numeric>
#include <string_view>

#include "absl/strings/str_cat.h"

namespace railwatch::sim {
namespace fs = std::filesystem;
namespace {

// A pause frame is a minimum-size frame on the wire; LLDP and neighbour discovery ~82 bytes.
constexpr uint64_t kPauseFrameBytes = 64;
constexpr uint64_t kMulticastFrameBytes = 82;

// "rx_prio3_bytes" ... for every priority, built once.
struct PrioNames {
  std::array<std::string, kEthtoolPriorities> rx_bytes, rx_packets, rx_discards, tx_bytes,
      tx_packets;
  PrioNames() {
    for (int p = 0; p < kEthtoolPriorities; ++p) {
      rx_bytes[p] = absl::StrCat("rx_prio", p, "_bytes");
      rx_packets[p] = absl::StrCat("rx_prio", p, "_packets");
      rx_discards[p] = absl::StrCat("rx_prio", p, "_discards");
      tx_bytes[p] = absl::StrCat("tx_prio", p, "_bytes");
      tx_packets[p] = absl::StrCat("tx_prio", p, "_packets");
    }
  }
};

uint64_t Sum(const std::array<uint64_t, kEthtoolPriorities>& a) {
  return std::accumulate(a.begin(), a.end(), uint64_t{0});
}

}  // namespace

void FormatEthtoolStats(const EthtoolCounters& c, std::string& out) {
  static const PrioNames* names = new PrioNames();
  // Every line is kEthtoolLineBytes long, newline included (see EthtoolDump).
  auto pad = [&out](size_t line_start) {
    out.append(kEthtoolLineBytes - 1 - (out.size() - line_start), ' ').push_back('\n');
  };
  auto line = [&out, &pad](std::string_view name, uint64_t value) {
    const size_t start = out.size();
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof(digits), value).ptr;
    out.append("     ").append(name).append(": ").append(digits, end);
    pad(start);
  };
  // Counters the simulated NIC has no reason to move.
  auto zeros = [&line](std::initializer_list<std::string_view> zero_names) {
    for (std::string_view name : zero_names) line(name, 0);
  };
  const size_t start = out.size();
  out.append("NIC statistics:");
  pad(start);
  // Software (kernel stack) counters, as the driver keeps them per netdev.
  line("rx_packets", c.rx_packets);
  line("rx_bytes", c.rx_bytes);
  line("tx_packets", c.tx_packets);
  line("tx_bytes", c.tx_bytes);
  line("tx_tso_packets", c.tx_packets / 8);
  line("tx_tso_bytes", c.tx_bytes / 2);
  zeros({"rx_csum_unnecessary", "rx_csum_none"});
  line("rx_csum_complete", c.rx_packets);
  line("tx_csum_partial", c.tx_packets);
  zeros({"tx_queue_stopped", "tx_queue_wake", "tx_queue_dropped", "rx_wqe_err",
         "rx_buff_alloc_err"});
  line("link_down_events_phy", c.link_down_events);
  line("rx_out_of_buffer", c.rx_out_of_buffer);
  // vport: what the e-switch counted for this function, kernel and RDMA traffic apart.
  line("rx_vport_unicast_packets", c.rx_packets);
  line("rx_vport_unicast_bytes", c.rx_bytes);
  line("tx_vport_unicast_packets", c.tx_packets);
  line("tx_vport_unicast_bytes", c.tx_bytes);
  line("rx_vport_multicast_packets", c.rx_multicast_packets);
  line("rx_vport_multicast_bytes", c.rx_multicast_packets * kMulticastFrameBytes);
  line("tx_vport_multicast_packets", c.tx_multicast_packets);
  line("tx_vport_multicast_bytes", c.tx_multicast_packets * kMulticastFrameBytes);
  zeros({"rx_vport_broadcast_packets", "rx_vport_broadcast_bytes", "tx_vport_broadcast_packets",
         "tx_vport_broadcast_bytes"});
  line("rx_vport_rdma_unicast_packets", c.rx_rdma_packets);
  line("rx_vport_rdma_unicast_bytes", c.rx_rdma_bytes);
  line("tx_vport_rdma_unicast_packets", c.tx_rdma_packets);
  line("tx_vport_rdma_unicast_bytes", c.tx_rdma_bytes);
  zeros({"rx_vport_rdma_multicast_packets", "rx_vport_rdma_multicast_bytes",
         "tx_vport_rdma_multicast_packets", "tx_vport_rdma_multicast_bytes"});
  // PHY: everything on the wire, pause frames included.
  line("tx_packets_phy", Sum(c.tx_prio_packets) + c.tx_multicast_packets + c.tx_pause);
  line("rx_packets_phy",
       Sum(c.rx_prio_packets) + c.rx_multicast_packets + c.rx_pause + c.crc_errors);
  line("rx_crc_errors_phy", c.crc_errors);
  line("tx_bytes_phy", Sum(c.tx_prio_bytes) + c.tx_multicast_packets * kMulticastFrameBytes +
                           c.tx_pause * kPauseFrameBytes);
  line("rx_bytes_phy", Sum(c.rx_prio_bytes) + c.rx_multicast_packets * kMulticastFrameBytes +
                           c.rx_pause * kPauseFrameBytes);
  line("tx_multicast_phy", c.tx_multicast_packets);
  line("tx_broadcast_phy", 0);
  line("rx_multicast_phy", c.rx_multicast_packets);
  zeros({"rx_broadcast_phy", "rx_in_range_len_errors_phy", "rx_out_of_range_len_phy",
         "rx_oversize_pkts_phy"});
  line("rx_symbol_err_phy", c.symbol_errors);
  line("tx_mac_control_phy", c.tx_pause);
  line("rx_mac_control_phy", c.rx_pause);
  line("rx_unsupported_op_phy", 0);
  line("rx_pause_ctrl_phy", c.rx_pause);
  line("tx_pause_ctrl_phy", c.tx_pause);
  line("rx_discards_phy", c.rx_discards);
  line("tx_discards_phy", c.tx_discards);
  zeros({"tx_errors_phy", "rx_undersize_pkts_phy", "rx_fragments_phy", "rx_jabbers_phy"});
  line("rx_pcs_symbol_err_phy", c.pcs_symbol_errors);
  line("rx_corrected_bits_phy", c.corrected_bits);
  zeros({"rx_err_lane_0_phy", "rx_err_lane_1_phy", "rx_err_lane_2_phy", "rx_err_lane_3_phy",
         "rx_buffer_passed_thres_phy", "rx_pci_signal_integrity", "tx_pci_signal_integrity",
         "outbound_pci_stalled_rd", "outbound_pci_stalled_wr", "outbound_pci_stalled_rd_events",
         "outbound_pci_stalled_wr_events"});
  for (int p = 0; p < kEthtoolPriorities; ++p) {
    line(names->rx_bytes[p], c.rx_prio_bytes[p]);
    line(names->rx_packets[p], c.rx_prio_packets[p]);
    line(names->rx_discards[p], 0);
    line(names->tx_bytes[p], c.tx_prio_bytes[p]);
    line(names->tx_packets[p], c.tx_prio_packets[p]);
  }
  // Only priorities with PFC enabled have pause counters: the RoCE priority. No 802.3x
  // (global) pause counters: global pause is off where PFC is on.
  static_assert(kRocePriority == 3, "the pause counters below are priority 3's");
  line("rx_prio3_pause", c.rx_pause);
  line("rx_prio3_pause_duration", c.rx_pause_duration);
  line("tx_prio3_pause", c.tx_pause);
  line("tx_prio3_pause_duration", c.tx_pause_duration);
  line("rx_prio3_pause_transition", c.rx_pause_transition);
  line("tx_pause_storm_warning_events", c.storm_warning_events);
  line("tx_pause_storm_error_events", c.storm_error_events);
  zeros({"module_unplug", "module_bus_stuck", "module_high_temp", "module_bad_shorted"});
}

absl::StatusOr<std::unique_ptr<EthtoolDump>> EthtoolDump::Create(const std::string& staging_dir,
                                                                 const std::string& dir,
                                                                 const std::string& netdev,
                                                                 const EthtoolCounters& initial,
                                                                 bool keep_open) {
  const fs::path at = fs::path(staging_dir) / netdev;
  std::error_code ec;
  fs::create_directories(at, ec);
  if (ec) return absl::UnavailableError(absl::StrCat(at.string(), ": ", ec.message()));
  std::ofstream driver(at / "driver");
  driver << "mlx5_core\n";
  if (!driver) return absl::UnavailableError(absl::StrCat("cannot write ", (at / "driver").string()));
  std::string text;
  FormatEthtoolStats(initial, text);
  absl::StatusOr<std::unique_ptr<SimFile>> stats = SimFile::Create(
      (at / "stats").string(), text, keep_open, (fs::path(dir) / netdev / "stats").string());
  if (!stats.ok()) return stats.status();
  return std::unique_ptr<EthtoolDump>(new EthtoolDump(std::move(*stats)));
}

absl::Status EthtoolDump::Write(const EthtoolCounters& c) {
  buffer_.clear();
  FormatEthtoolStats(c, buffer_);
  return stats_->Write(buffer_);
}

}  // namespace railwatch::sim
