#pragma once

// `perfquery` output: PortCounters (plain), PortCountersExtended (-x), PortRcvErrorDetails
// (-E) and PortXmitDiscardDetails (-D), one block per port, several back to back with -l:
//
//   # Port extended counters: Lid 1719 port 1 (CapMask: 0x5300 CapMask2: 0x0000002)
//   PortSelect:......................1
//   PortXmitData:....................36298026860928
//   ...
//   # PortRcvErrorDetails counters: Lid 1719 port 1
//
// Newer infiniband-diags print the error counters (SymbolErrorCounter ... QP1Dropped) inside
// the extended block, where they are 64-bit. Data counters count 4-octet words. A copied shell
// prompt that starts with "# " ("# perfquery -x 10 1") is not a header and is skipped, and so
// is a mail quote ("> ") in front of every line.

#include <string_view>
#include <vector>

#include "ib/ib_records.h"

namespace railwatch::ib {

struct PerfqueryResult {
  std::vector<IbPortCounters> ports;  // one per block, in order
  std::vector<IbProblem> problems;
};

PerfqueryResult ParsePerfquery(std::string_view text, std::string_view source);

}  // namespace railwatch::ib
