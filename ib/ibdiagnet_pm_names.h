#pragma once

// ibdiagnet's names for the PMA counters, shared by its two outputs that carry them (internal to
// ib/): the PM_INFO columns of ibdiagnet2.db_csv (PortXmitDataExtended, SymbolErrorCounterExt,
// PortUniCastXmitPkts) and the snake_case names of ibdiagnet2.pm (port_xmit_data_extended,
// symbol_error_counter, link_down_counter). Both come out under the PMA names the other readers
// use (IBA vol. 1 ch. 16.1.3, as perfquery prints them), with the attribute they belong to.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "ib/ib_records.h"

namespace railwatch::ib {

struct IbdiagnetPmName {
  PmaAttribute attribute = PmaAttribute::kPortCounters;
  std::string name;  // the PMA name: PortXmitData, SymbolErrorCounter, PortXmitDiscards, ...
};

// A PM_INFO column or a .pm name as its PMA counter; nullopt for the names that are not PMA
// counters (GUIDs, port numbers, retransmission_per_sec, max_retransmission_rate, unknown ones).
// The *Extended / *Ext / *_extended names are PortCountersExtended's.
std::optional<IbdiagnetPmName> IbdiagnetPmCounter(std::string_view column);

// A 64-bit counter this large would take centuries to reach; ibdiagnet prints such values
// (2^64 - 40) when firmware reports garbage, and a rate from one would be nonsense.
inline constexpr uint64_t kImplausibleCounter64 = uint64_t{1} << 63;

}  // namespace railwatch::ib
