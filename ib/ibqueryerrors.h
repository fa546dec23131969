#pragma once

// `ibqueryerrors` output: the ports whose PortCounters errors are above threshold.
//
//   Errors for "dl380g7 mlx4_0"                                (a CA: its name only)
//      GUID 0x7cfe900300179b31 port 1: [VL15Dropped == 14] [PortXmitWait == 4294967295]
//   Errors for 0x2c903006e29b0 "MF0;ys23ib4:SX6036/U1"         (a switch: GUID, then name)
//      GUID 0x2c903006e29b0 port ALL: [LinkDownedCounter == 48] ...
//      GUID 0x2c903006e29b0 port 5: [SymbolErrorCounter == 65535] ...
//   ## Summary: 4 nodes checked, 4 bad nodes found
//   ##          43 ports checked, 14 ports have errors beyond threshold
//   ## Thresholds:
//   ## Suppressed:
//
// The "port ALL" line is the switch's own sum over its ports (AllPortSelect): it is kept apart
// from the per-port lines so nothing counts twice. Values are PortCounters values, so a
// counter at all-ones for its width (255, 65535, 4294967295) is saturated, not a count. A mail
// quote ("> ") before every line is stripped; a copied prompt line ("# ibqueryerrors") skipped.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ib/ib_records.h"

namespace railwatch::ib {

struct IbqueryerrorsSummary {
  std::optional<uint64_t> nodes_checked;
  std::optional<uint64_t> bad_nodes;
  std::optional<uint64_t> ports_checked;
  std::optional<uint64_t> ports_with_errors;
  std::optional<std::string> thresholds;  // the text after "## Thresholds:", "" when empty
  std::optional<std::string> suppressed;
};

struct IbqueryerrorsResult {
  std::vector<IbPortCounters> ports;       // per-port lines, in order
  std::vector<IbPortCounters> aggregates;  // "port ALL" lines
  IbqueryerrorsSummary summary;
  std::vector<IbProblem> problems;
};

IbqueryerrorsResult ParseIbqueryerrors(std::string_view text, std::string_view source);

}  // namespace railwatch::ib
