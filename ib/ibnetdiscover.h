#pragma once

// `ibnetdiscover` output: the topology file (default output, and the copy ibdiagnet writes as
// ibdiagnet2.ibnetdiscover) and the ports report (`ibnetdiscover -p` / `--ports`).
//
// Topology file, as real captures print it (../shared/realworld CATALOGUE section I):
//   optional preamble (a PuTTY banner, ibdiagnet's "# This database file ..." block), a "#"
//   header (generated on, initiated from), then one block per node:
//     vendid=0x2c9 / devid=0xd2f0 / sysimgguid=0x... / switchguid=0x...(...) | caguid=0x...
//     Switch<sep>41 "S-<guid>"<sep># "<desc>" enhanced port 0 lid 1600 lmc 0
//     Ca<sep>1 "H-<guid>"<sep># "<desc>"
//   and port lines, switch side and CA side:
//     [1](1/1/1)<sep>"H-<guid>"[1](<port guid>)<sep># "<peer desc>" lid 837 4xHDR
//     [1](<port guid>)<sep>"S-<guid>"[4]<sep># lid 3258 lmc 0 "<peer desc>" lid 4490 4xHDR
//   where <sep> is tabs, spaces, or nothing at all (a terminal log that lost its tabs), and
//   the "(...)" after a switch port is ibdiagnet's port label. Port numbers are sparse.
//
// Ports report: one line per port, cabled or not:
//   CA   134  1 0x7cfe9003003b4bde 4x EDR - SW  1719 10 0x7cfe9003009ce5b0 ( 'o0001 HCA-1' -
//   'ib-i1l1s01' ) SW  2052 37 0x506b4b03005c2740 4x ??? 'ib-i4l1s01'

#include <string>
#include <string_view>
#include <vector>

#include "ib/ib_records.h"

namespace railwatch::ib {

struct IbTopology {
  std::string generated_on;  // "Tue Feb 23 14:02:06 2021", as printed; "" absent
  IbGuid initiated_from_node;
  IbGuid initiated_from_port;
  std::vector<IbNode> nodes;  // in file order
  std::vector<IbLink> links;  // one per port line, in file order
  std::vector<IbProblem> problems;
};

IbTopology ParseIbnetdiscover(std::string_view text, std::string_view source);

// `ibnetdiscover -p`: links (peer empty for an unconnected port) and problems; no nodes, as
// the report names ports, not nodes. The GUID it prints is the port's (for a switch, every
// port's GUID is the switch's), so both node_guid and port_guid are set for switches and only
// port_guid for CAs.
IbTopology ParseIbnetdiscoverPorts(std::string_view text, std::string_view source);

// The node with this GUID value, or nullptr.
const IbNode* FindNode(const IbTopology& topology, uint64_t guid);

}  // namespace railwatch::ib
