#pragma once

// A host's own view of its InfiniBand devices, as three tools print it:
//
//   ibstat            CA 'mlx5_0' / <tab>Key: value / <tab>Port 1: / <tab><tab>Key: value;
//                     may end with "ibpanic: ..." when a device vanished mid-run
//   ibstatus          Infiniband device 'mlx5_0' port 1 status: / <tab>key:<tab> value;
//                     LIDs in hex, "state: 4: ACTIVE", "rate: 200 Gb/sec (4X HDR)"
//   ibv_devinfo -v    hca_id:<tab>mlx5_0 / <tab>key:<tabs>value / <tab><tab>port:<tab>1 /
//                     <tab><tab><tab>key:<tabs>value (code); flag lists on continuation lines
//
// Tabs may have become spaces. A port whose link layer is Ethernet (RoCE) is reported as such:
// it is not an InfiniBand link, whatever its rate says.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ib/ib_records.h"

namespace railwatch::ib {

struct IbHostPort {
  int port = 0;
  // Logical state, as printed ("Active", "ACTIVE", "PORT_ACTIVE") and as IBA's PortState
  // (1 Down, 2 Init, 3 Armed, 4 Active); empty code when neither printed nor known.
  std::string state;
  std::optional<int> state_code;
  // Physical state, as printed ("LinkUp", "LINK_UP") and as IBA's PortPhysicalState
  // (2 Polling, 3 Disabled, 5 LinkUp, ...).
  std::string phys_state;
  std::optional<int> phys_state_code;
  // Nominal aggregate rate in Gb/s (ibstat "Rate: 400", ibstatus "400 Gb/sec"). Meaningless
  // on a port that is not active (ibstat prints 40 for a down port).
  std::optional<double> rate_gbps;
  IbLinkSpeed speed;  // width and generation where the text gives them (ibstatus, ibv_devinfo)
  std::optional<uint32_t> lid;
  std::optional<uint32_t> sm_lid;
  std::optional<uint32_t> lmc;
  std::optional<uint32_t> capability_mask;
  IbGuid port_guid;
  std::string link_layer;         // "InfiniBand", "Ethernet"; "" absent
  std::string default_gid;        // ibstatus; "unknown" kept as printed
  std::vector<std::string> gids;  // ibv_devinfo GID[n], in order

  bool active() const { return state_code == 4; }
  bool infiniband() const { return link_layer == "InfiniBand"; }
};

struct IbHostDevice {
  std::string name;      // mlx5_0
  std::string ca_type;   // ibstat "MT4129"
  std::string firmware;  // "28.41.1000"
  std::string hardware_version;
  IbGuid node_guid;
  IbGuid system_image_guid;
  std::optional<int> num_ports;
  std::optional<uint32_t> vendor_id;       // ibv_devinfo
  std::optional<uint32_t> vendor_part_id;  // ibv_devinfo: 4123 = ConnectX-6
  std::string board_id;                    // ibv_devinfo "MT_0000000594"
  std::vector<IbHostPort> ports;
  std::string where;  // source:line of the device's first line
};

struct IbHostStatus {
  std::vector<IbHostDevice> devices;  // in the order printed
  std::vector<IbProblem> problems;    // an ibpanic is one, at its line
};

IbHostStatus ParseIbstat(std::string_view text, std::string_view source);
IbHostStatus ParseIbstatus(std::string_view text, std::string_view source);
IbHostStatus ParseIbvDevinfo(std::string_view text, std::string_view source);

}  // namespace railwatch::ib
