#pragma once

// The `ethtool -S` statistics of one simulated mlx5 netdev, and the files the host agent reads
// them from (--ethtool_dumps=<root>/<host>/ethtool): <dir>/<netdev>/stats holds the dump as the
// real command prints it, <dir>/<netdev>/driver the driver's name. docs/SIMULATOR.md lists what
// moves them.

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/sysfs_fabric.h"

namespace railwatch::sim {

inline constexpr int kEthtoolPriorities = 8;

// What an mlx5 ConnectX-7 counts, in the names of drivers/net/ethernet/mellanox/mlx5/core/
// en_stats.c; the PHY totals are derived from these when the dump is written. PFC is on for
// priority 3 only, so mlx5 prints per-priority pause counters for 3 alone, and no global
// (802.3x) pause counters.
struct EthtoolCounters {
  // Kernel-stack traffic (TCP, ARP, LLDP): the software counters and the vport unicast ones.
  uint64_t rx_packets = 0, rx_bytes = 0, tx_packets = 0, tx_bytes = 0;
  uint64_t rx_multicast_packets = 0, tx_multicast_packets = 0;
  // RoCE, which bypasses the kernel: the vport RDMA counters.
  uint64_t rx_rdma_packets = 0, rx_rdma_bytes = 0, tx_rdma_packets = 0, tx_rdma_bytes = 0;
  std::array<uint64_t, kEthtoolPriorities> rx_prio_bytes{}, rx_prio_packets{}, tx_prio_bytes{},
      tx_prio_packets{};
  // PFC on the RoCE priority: frames, microseconds paused, paused/unpaused transitions.
  uint64_t rx_pause = 0, rx_pause_duration = 0, tx_pause = 0, tx_pause_duration = 0,
           rx_pause_transition = 0;
  // PFC stall prevention (the NIC's pause storm detection).
  uint64_t storm_warning_events = 0, storm_error_events = 0;
  // PHY errors: FCS, symbol errors (IEEE 802.3 and PCS counters), FEC corrections.
  uint64_t crc_errors = 0, symbol_errors = 0, pcs_symbol_errors = 0, corrected_bits = 0;
  uint64_t rx_discards = 0, tx_discards = 0, link_down_events = 0, rx_out_of_buffer = 0;
};

// Appends the dump of `c` to `out` as `ethtool -S` prints it ("NIC statistics:", then
// "     name: value" lines), each line padded with trailing blanks to kEthtoolLineBytes, without
// allocating once `out` has grown to a dump's size.
inline constexpr size_t kEthtoolLineBytes = 64;
void FormatEthtoolStats(const EthtoolCounters& c, std::string& out);

// One netdev's dump directory, <dir>/<netdev>/ with `driver` and `stats`.
//
// `stats` is rewritten in place (a SimFile), which costs one pwrite: replacing it by rename
// costs ~2 ms on ext4 (it flushes the data first). A reader may read while it is rewritten,
// and sees old and new text mixed at a page boundary; so every line has the same length (64
// bytes, 64 lines a 4 KiB page): lines never move, a page boundary never cuts one, and a
// counter reads either its old or its new value, never a mix of their digits (a fake reset,
// read as thousands of pause frames at once). ParseEthtoolStats ignores the padding, as any
// `name: value` reader that trims blanks does.
class EthtoolDump {
 public:
  // Creates <staging_dir>/<netdev>/driver and stats with `initial` (the host's tree is built
  // there and then renamed to `dir`: a stats file kept open stays valid, one that is not is
  // opened at <dir>/<netdev>/stats for each write).
  static absl::StatusOr<std::unique_ptr<EthtoolDump>> Create(const std::string& staging_dir,
                                                             const std::string& dir,
                                                             const std::string& netdev,
                                                             const EthtoolCounters& initial,
                                                             bool keep_open = true);
  absl::Status Write(const EthtoolCounters& c);

 private:
  explicit EthtoolDump(std::unique_ptr<SimFile> stats) : stats_(std::move(stats)) {}
  std::unique_ptr<SimFile> stats_;
  std::string buffer_;
};

}  // namespace railwatch::sim
