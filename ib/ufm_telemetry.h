#pragma once

// NVIDIA UFM Telemetry, in the two shapes a site can hand over:
//
//   telemetry stream (TFS, the fluentd plugin's message): JSON
//     {"timestamp": "2024-03-05 16:26:11", "type": "full", "values": [
//       {"timestamp": 1709652347161873, "source_id": "0x...", "node_guid": "0x...",
//        "port_guid": "0x...", "port_num": 23, "Infiniband_LinkDowned_u_Errors": 3, ...}]}
//     counters named Infiniband_<Name>_u_<Unit> (integers) or ..._f_u_<Unit> (floats), with
//     perfquery-era names (XmtDiscards, LinkRecovers, XmitWait), timestamps in microseconds;
//   Prometheus endpoint: PortXmitDataExtended{source="0x...", node_guid="2c90300f172a0",
//     port_guid="...", port_num="2"} 85554128244 1628683905941
//     PMA names with "Extended", GUID labels without 0x or leading zeros, timestamps in ms.
//     Samples are read as a stream of tokens, not lines, so text whose line breaks were lost
//     (as in the vendor's own documentation) still reads.
//
// Counters with a PMA meaning go into `counters` under their PMA names (PortXmitWait, ...);
// UFM does not say which attribute it read, and it reads the extended ones where a port has
// them, so they are taken as PortCountersExtended (64-bit). Everything else (MBOut in Gb,
// normalised percentages, the FEC histogram bins) stays in `other` under UFM's own name.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ib/ib_records.h"

namespace railwatch::ib {

struct UfmPortSample {
  std::string source_id;           // as printed
  std::optional<int64_t> time_us;  // microseconds since the epoch (ms values are scaled)
  IbPortCounters counters;         // node_guid, guid (port GUID), port, PMA counters
  std::map<std::string, double, std::less<>> other;
};

struct UfmTelemetry {
  std::string timestamp;  // TFS message's own "timestamp", as printed
  std::string type;       // TFS "full" / "delta"
  std::vector<UfmPortSample> ports;
  std::map<std::string, std::string, std::less<>> metric_types;  // Prometheus # TYPE
  std::vector<IbProblem> problems;
};

UfmTelemetry ParseUfmTelemetryJson(std::string_view text, std::string_view source);
UfmTelemetry ParseUfmPrometheus(std::string_view text, std::string_view source);

// "XmtDiscards" -> "PortXmitDiscards": UFM's counter names (without Infiniband_ and the unit)
// to PMA names; "" for a name with no PMA counterpart (MBOut, CBW, ...).
std::string_view PmaNameOfUfmCounter(std::string_view ufm_name);

}  // namespace railwatch::ib
