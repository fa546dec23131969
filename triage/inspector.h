#pragma once

// `railwatch triage` on NCCL Inspector output (logs/nccl_inspector.h): JSONL records or the
// 2.30 Prometheus textfile, one file per rank or GPU as the profiler plugin writes them, given
// together or pasted. The records of every input are summarised together, one summary per
// member (host, rank, GPU) of a communicator's operation, never one per collective; a member
// far slower than its peers in the same communicator and operation is a straggler
// (logs::FindInspectorStragglers).

#include <string>
#include <vector>

#include "logs/log_event.h"
#include "logs/nccl_inspector.h"
#include "triage/findings.h"

namespace railwatch {

// Below this share of its peers' median bus bandwidth (or above their median exec time divided
// by it), a member is a straggler.
inline constexpr double kInspectorStragglerRatio = 0.8;

// The input that the next `records` records (in order) were read from.
struct InspectorSource {
  std::string source;  // the input's name ("-" for standard input)
  size_t records = 0;
};

// One event of kind "nccl_inspector.summary" per logs::SummariseInspector summary of `records`
// (all inputs' together, in input order; `sources` says which records each input holds), at
// the file, line and dump time of its first record. Fields, those known: comm, comm_name, host,
// rank, gpu, pid, nranks, nnodes, op, p2p ("true"/"false"), count, avg_busbw_gbps,
// min_busbw_gbps, max_busbw_gbps, avg_exec_us, first_seq, last_seq, format, version. With
// `from_source`, the index in `sources` of each event's input.
std::vector<logs::LogEvent> InspectorSummaryEvents(
    const std::vector<logs::InspectorRecord>& records, const std::vector<InspectorSource>& sources,
    std::vector<size_t>* from_source = nullptr);

// Findings from the nccl_inspector.summary events among `events`: one WARN per straggler (the
// worst first, at most a few; the others in one more finding), and one line for `context`
// saying what was read.
void AnalyzeInspector(const std::vector<logs::LogEvent>& events,
                      std::vector<TriageFinding>& findings, std::vector<std::string>& context);

}  // namespace railwatch
