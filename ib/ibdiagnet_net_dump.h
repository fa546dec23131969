#pragma once

// ibdiagnet's `ibdiagnet2.net_dump` and `ibdiagnet2.net_dump_ext`: each port's state, width, lane
// speed and FEC mode, and what it is cabled to, in ` : `-separated columns.
//
// net_dump: a block per switch, a node line, a column header, a row per port:
//
//   "Quantum-2 Mellanox Technologies", Mellanox, 0xb0cf0e0300e5b940, LID 24
//     #      : IB# : Sta  : PhysSta : MTU : LWA : LSA : FEC mode       : Retran : Neighbor Guid      : N#             : NLID : Neighbor Description
//     1/1/1  : 1   : ACT  : LINK UP : 5   : 4x  : 100 : RS_FEC_544_514 : NO-RTR : 0x5c25730300c06f60 : B184D0F0/0/0/1 : 156  : "is-north-7-compute-1 mlx5_10"
//     1/17/1 : 33  : DOWN : POLL    : N/A : N/A : N/A : N/A            : N/A    :                    :                :      :
//
// net_dump_ext (--get_phy_info): one flat table of every node's ports (CAs too), the node's own
// GUID, LID (`24   (0x18 )`) and description on each row, the neighbour as `LID (port label)`
// only, and five BER / error columns that may be blank:
//
//   Ty : #     : #IB : GUID               : LID          : Sta : PhysSta : LWA : LSA : Conn LID (#)           : FEC mode       : RTR    : Raw BER : Effective BER : Symbol BER : Symbol Err : Effective Err : Node Desc
//   SW : 1/1/1 : 1   : 0xb0cf0e0300e5b940 : 24   (0x18 ) : ACT : LINK UP : 4x  : 100 : 156   (B184D0F0/0/0/1) : RS_FEC_544_514 : NO-RTR :         :               :            :            :               : "Quantum-2 Mellanox Technologies"
//
// LWA is the width, LSA the *per-lane* speed in Gb/s (`4x : 100` is 4x NDR, 400 Gb/s). Columns
// are found by their header's names. A separator is a ':' with a blank before it, so a node
// description's own ':' ("MF0;ib-switch-sequoia:MQM9700/U1") is no separator, and the last column
// takes the rest of the line. `N/A` and blank cells are absent. A neighbour's port is printed as
// its label; the reader finds its number from the neighbour's own rows when the file holds them,
// and the neighbour's GUID of a net_dump_ext row from the row whose LID it names.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ib/ib_records.h"

namespace railwatch::ib {

struct IbdiagnetNetDumpPort {
  // The node the port is on: net_dump's block line, net_dump_ext's columns.
  IbNodeType node_type = IbNodeType::kUnknown;  // net_dump: a switch (it lists switches only)
  IbGuid node_guid;
  std::string node_description;  // verbatim, without its quotes
  std::string vendor;            // net_dump's block line ("Mellanox"); "" in net_dump_ext
  std::optional<uint32_t> lid;

  std::string port_label;          // "#": "1/1/1", "65", an HCA's "B184D0F0/0/0/1"
  std::optional<int> port;         // "IB#" / "#IB"
  std::string state;               // "ACT", "DOWN", as printed
  std::optional<int> state_code;   // IBA PortState: 1 Down, 2 Init, 3 Armed, 4 Active
  std::string phys_state;          // "LINK UP", "POLL", as printed
  std::optional<int> phys_state_code;  // IBA PortPhysicalState: 2 Polling, 3 Disabled, 5 LinkUp
  std::optional<int> mtu_code;     // net_dump's MTU: IBA's code, 5 = 4096 bytes
  IbLinkSpeed speed;               // LWA and LSA; width 0 and generation "" for N/A
  std::string fec_mode;            // "RS_FEC_544_514", "MLNX_RS_271_257_PLR"; "" for N/A
  std::string retransmission;      // "Retran" / "RTR": "NO-RTR"; "" for N/A

  // The neighbour; all absent on a port without one.
  IbGuid neighbor_guid;              // net_dump's column; net_dump_ext's, found by LID
  IbNodeType neighbor_type = IbNodeType::kUnknown;  // when the file describes the neighbour
  std::string neighbor_port_label;   // "N#" / the "(…)" of "Conn LID (#)"
  std::optional<int> neighbor_port;  // from the neighbour's own rows, else a numeric label
  std::optional<uint32_t> neighbor_lid;
  std::string neighbor_description;  // net_dump's column; net_dump_ext's from the neighbour's rows

  // net_dump_ext's BER columns; blank is absent (never 0).
  std::optional<double> raw_ber;
  std::optional<double> effective_ber;
  std::optional<double> symbol_ber;
  std::optional<uint64_t> symbol_errors;
  std::optional<uint64_t> effective_errors;

  std::string where;  // source:line
};

struct IbdiagnetNetDump {
  bool extended = false;  // net_dump_ext's flat table
  std::vector<IbNode> nodes;  // net_dump: one per block; net_dump_ext: one per GUID
  std::vector<IbdiagnetNetDumpPort> ports;  // one per row, in file order
  std::vector<IbProblem> problems;

  // The rows whose neighbour is known by GUID, as links (the local end a switch port or, in
  // net_dump_ext, any node's port; the peer's port 0 when its label could not be resolved).
  std::vector<IbLink> Links() const;
};

// Either file: the first column header says which.
IbdiagnetNetDump ParseIbdiagnetNetDump(std::string_view text, std::string_view source);

}  // namespace railwatch::ib
