#pragma once

// ibdiagnet's `ibdiagnet2.pm`: every port's PMA counters, one block per port, all hex:
//
//   -------------------------------------------------------
//   Port=1 Lid=0x00b4 GUID=0xb0cf0e0300d33fc0 Device=54002 Port Name=ib-switch-sequoia/U1/P1/1/1
//   -------------------------------------------------------
//   link_down_counter=0x00000000
//   port_xmit_data=0xffffffff
//   port_xmit_data_extended=0x00000045a9712343
//   port_local_physical_errors=0x0000
//   port_looping_errors=NA
//   <blank line>
//
// ibdiagnet pads each value to a fixed width: 8 hex digits for PortCounters' (whatever the
// counter's own width: an 8-bit LinkDownedCounter prints as 0x00000037, a saturated 16-bit
// SymbolErrorCounter as 0x0000ffff), 16 for PortCountersExtended's, 4 for PortRcvErrorDetails'
// and PortXmitDiscardDetails'. The names are mapped to the PMA names the other readers use (the
// table db_csv's PM_INFO uses too: ibdiagnet_pm_names.h) and each counter gets its PMA width and
// saturation from the attribute it belongs to. `NA` is absent.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ib/ib_records.h"

namespace railwatch::ib {

struct IbdiagnetPmBlock {
  int port = 0;
  std::optional<uint32_t> lid;
  IbGuid guid;                        // as printed: a switch's node GUID, an HCA's port GUID
  std::optional<uint32_t> device_id;  // "Device=54002"
  std::string port_name;              // "ib-switch-sequoia/U1/P1/1/1", verbatim
  // One record per attribute the block printed counters of (PortCounters,
  // PortCountersExtended, PortRcvErrorDetails, PortXmitDiscardDetails), as db_csv's PM_INFO
  // gives them: the 32-bit PortXmitData and the 64-bit one have one name and two attributes.
  std::vector<IbPortCounters> counters;
  // The values that are not PMA counters (retransmission_per_sec, max_retransmission_rate) and
  // names this reader does not know, under ibdiagnet's name; NA is an empty optional.
  std::map<std::string, std::optional<uint64_t>, std::less<>> other;
  std::string where;  // source:line of the Port= line
};

struct IbdiagnetPm {
  std::vector<IbdiagnetPmBlock> blocks;  // in file order
  std::vector<IbProblem> problems;
  // Every block's records, in order: what a counter collector reads.
  std::vector<IbPortCounters> Counters() const;
};

IbdiagnetPm ParseIbdiagnetPm(std::string_view text, std::string_view source);

}  // namespace railwatch::ib
