#pragma once

// The NCCL_DEBUG line prefix, as written by every NCCL from 2.5 to 2.27:
//   <host>:<pid>:<tid> [<cudaDev>] NCCL INFO <message>
//   <host>:<pid>:<tid> [<cudaDev>] <file>:<line> [(<function>)] NCCL WARN <message>
// found anywhere in a line (so unknown collector prefixes do not hide it).

#include <string>

#include "absl/strings/string_view.h"
#include "logs/log_event.h"

namespace railwatch::logs::internal {

struct NcclLine {
  absl::string_view host;      // may hold '-', '.', a UUID, a mask, or be truncated
  absl::string_view pid;       // empty when masked ("host:XXXXXX")
  absl::string_view tid;       // empty when absent
  absl::string_view cuda_dev;  // the local CUDA device index in brackets, not the rank
  absl::string_view level;     // INFO, WARN, TRACE, CALL
  absl::string_view location;  // "transport/net_ib.cc:1295" on WARN lines
  absl::string_view function;  // "ncclIbTest" on newer WARN lines, without parentheses
  absl::string_view message;   // what follows "NCCL <level> "
};

// False when `text` has no NCCL prefix.
bool ParseNcclLine(absl::string_view text, NcclLine* out);

// "host:pid:tid" of the line: the thread whose return-code chain a line belongs to.
std::string ThreadKey(const NcclLine& nl);

// Sets host, pid, tid and cuda_dev (those present), in that order.
void AddNcclOrigin(LogEvent& e, const NcclLine& nl);

}  // namespace railwatch::logs::internal
