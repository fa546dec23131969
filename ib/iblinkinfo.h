#pragma once

// `iblinkinfo` output, in its two modes (infiniband-diags iblinkinfo.c):
//
// line mode (-l): every line names its node
//   0x0000000000200005 "               hxa-su2-leaf-r2"      9   33[  ] ==( 4X           2.5
//   Gbps Active/  LinkUp)==>  0x0000000000200000      2    4[  ] "hxa-spine01" (Could be 12X
//   Could be 10.0 Gbps)                                                   (one line, wrapped here)
//   0x... "<name>"      9   34[  ] ==(                Down/ Polling)==>             [  ] "" ( )
//
// default mode: a header per node, then its ports without the node's GUID and name
//   Switch: 0x0002c90200482d68 MF0;sw-1:SX6036/U1:
//             9   33[  ] ==( 4X  14.0625 Gbps Active/  LinkUp)==>      2    4[  ] "sw-2" ( )
//   CA: host-1 mlx5_0:
//         0x0002c903000e0b71      5    1[  ] ==( 4X ...)==> ...
//
// The speed is the per-lane signalling rate (HDR 53.125, NDR 106.25); the generation is
// derived from it. Line mode pads the node name to 30 columns inside its quotes: the padding
// is dropped. "-p" adds " (HOQ:n VL_Stall:n)" after the link, which is skipped.

#include <string>
#include <string_view>
#include <vector>

#include "ib/ib_records.h"

namespace railwatch::ib {

struct IblinkinfoPort {
  IbLink link;             // peer empty when the port is down or "Port not available"
  std::string state;       // logical: Active, Init, Armed, Down
  std::string phys_state;  // LinkUp, Polling, Disabled, ...
  std::string could_be;    // iblinkinfo's note: "Could be 12X Could be 10.0 Gbps"; "" none
  bool port_not_available = false;
};

struct IblinkinfoResult {
  std::vector<IblinkinfoPort> ports;
  std::vector<IbProblem> problems;
};

IblinkinfoResult ParseIblinkinfo(std::string_view text, std::string_view source);

}  // namespace railwatch::ib
