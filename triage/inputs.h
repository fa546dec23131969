#pragma once

// The inputs of `railwatch triage`: files (or standard input) of NCCL, PyTorch, NCCL RAS and
// nccl-tests logs, with pasted `rdma` tool output and optics, FEC and PHY tool output
// (optics/readers.h: ethtool -m / --show-fec / -S, mlxlink, SONiC) anywhere among their lines,
// parsed into log events with their true file:line; and inputs read whole: InfiniBand tool
// output, NCCL RAS JSON, NCCL Inspector output and mlxlink --json.

#include <iosfwd>
#include <string>
#include <vector>

#include "collectors/rdma_tool_output.h"
#include "logs/log_event.h"
#include "logs/log_parser.h"
#include "logs/nccl_inspector.h"

namespace railwatch {

struct TriageInput {
  enum class Failure { kNone, kNotFound, kUnreadable };
  std::string name;  // as given; "-" is standard input
  logs::LogParser::Stats stats;
  RdmaToolOutput rdma;  // the rdma tool output among its lines
  // InfiniBand tool output (the whole input is one): what it is ("perfquery", "ibnetdiscover"
  // ...: collectors/ib_fabric_source.h) and its records, each an ib.* event (triage/ib.h).
  std::string ib_kind;
  size_t ib_records = 0;
  // NCCL Inspector output (the whole input is one): how many records it held
  // (TriageInputs::inspector).
  size_t inspector_records = 0;
  // Optics, FEC and PHY tool output among its lines (or mlxlink --json, read whole): lines
  // taken, readings (blocks of output; each an optics.* event per part: triage/optics.h),
  // problems, and the tools in order of first appearance ("ethtool -m", "mlxlink" ...).
  int optics_lines = 0;
  size_t optics_readings = 0;
  size_t optics_problems = 0;
  std::vector<std::string> optics_tools;
  // Kernel messages among its lines (dmesg, journalctl -k: logs/kernel_messages.h), also
  // counted in `stats`.
  logs::LogParser::Stats kernel;
  std::string error;    // why it could not be read, "" when it was
  Failure failure = Failure::kNone;
};

struct TriageInputs {
  std::vector<TriageInput> inputs;
  // Every input's events in order; each rdma tool port record is one rdma.* event
  // (triage/rdma.h). After them, one nccl_inspector.summary event per member of a
  // communicator's operation over all inputs' Inspector records (triage/inspector.h).
  std::vector<logs::LogEvent> events;
  // The NCCL Inspector records of every input, in input order: one file per rank, as the
  // plugin writes them, are analysed together.
  std::vector<logs::InspectorRecord> inspector;
  logs::LogParser::Stats total;  // the inputs' parser statistics summed
};

// Reads every file ("-" reads `in`) in bounded memory, whatever its size or shape. Problems go
// to `err`, one line each, naming the file and line ("railwatch triage: FILE:LINE: why"); an
// input that cannot be read is still listed, with its error and failure.
TriageInputs ReadTriageInputs(const std::vector<std::string>& files, std::istream& in,
                              std::ostream& err);

}  // namespace railwatch
