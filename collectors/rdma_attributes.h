#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace railwatch {

// What an on-call engineer asks first about a NIC: which firmware, which PCI slot and NUMA
// node, which netdev carries its RoCE traffic. Read from <root>/class/infiniband/<dev>/.
struct RdmaDeviceInfo {
  std::string name;         // mlx5_0
  std::string driver;       // mlx5_core (basename of device/driver)
  std::string fw_ver;       // 20.31.1014
  std::string board_id;     // MT_0000000224
  std::string hca_type;     // MT4123
  std::string node_guid;    // 1070:fd03:00e5:f118
  std::string pci_address;  // 0000:3b:00.0 (basename of the device symlink's target)
  std::string numa_node;    // "0"; "" when unknown (the kernel's -1 included)
  // Netdevs of the PCI function (device/net/*), sorted.
  std::vector<std::string> netdevs;
};

// Never fails: a missing attribute is left empty (fixtures and virtual devices lack some).
RdmaDeviceInfo ReadRdmaDeviceInfo(const std::string& device_dir);

// The netdevs a port's GIDs are bound to (ports/<n>/gid_attrs/ndevs/*: RoCE), sorted and
// de-duplicated; empty for InfiniBand ports.
std::vector<std::string> ReadPortNetdevs(const std::string& port_dir);

// "4: ACTIVE" -> {4, "ACTIVE"}; "5: LinkUp" -> {5, "LinkUp"}; nullopt unless the number is
// 0 to 255.
struct NumberedState {
  int number = 0;
  std::string name;
};
std::optional<NumberedState> ParseNumberedState(absl::string_view text);

// "100 Gb/sec (4X EDR)" -> 1e11; "2.5 Gb/sec (1X SDR)" -> 2.5e9; also Mb/sec. nullopt when
// the text has no rate, or one that is not finite or above kMaxPortBitsPerSecond.
std::optional<double> ParseRateBitsPerSecond(absl::string_view text);
// 10 Tb/s: more than ten times the fastest port of today (XDR 4x, 800 Gb/s).
inline constexpr double kMaxPortBitsPerSecond = 1e13;

// The rate of an IB port from its verbs attributes (ibv_port_attr active_speed, active_width),
// as the kernel prints it in `rate`; nullopt for codes it does not know.
std::optional<double> VerbsRateBitsPerSecond(int active_speed, int active_width);

}  // namespace railwatch
