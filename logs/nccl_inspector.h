#pragma once

// NCCL Inspector (the NCCL profiler plugin in plugins/profiler/inspector, ext-profiler/inspector
// before 2.30) output: per-collective and per-p2p performance records.
//
// Two formats:
// * JSON, format "v4.0" (2.28+): one object per record, {"header": {...}, "metadata": {...},
//   "coll_perf" | "p2p_perf": {...}}. NCCL writes JSONL, but its docs pretty-print the records,
//   so objects are split by brace depth, not by line. NCCL prints NaN as a bare `nan`, which is
//   not JSON; such values are read as absent. Later versions add "dump_stats" records with no
//   performance section: they are valid input and carry no record.
// * The Prometheus textfile of 2.30+ (version label "v5.1"): one gauge per aggregation key
//   (node, gpu, comm_name, collective or p2p_operation, message-size bucket, algo_proto); the
//   bus-bandwidth and exec-time gauges of one key become one record. RCCL adds # HELP / # TYPE
//   lines and extra labels (cluster): comments are skipped, extra labels kept in other_labels.
//
// The version string is not gated on: 2.30 added comm_name and p2p_perf records while still
// writing "v4.0".

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace railwatch::logs {

struct InspectorRecord {
  // header.id ("0x7f8c496ae9f661"); "" in the Prometheus textfile, which has no communicator id.
  std::string comm_id;
  // header.comm_name or the comm_name label (2.30+); "" when absent.
  std::string comm_name;
  int rank = -1;     // header.rank; -1 unknown (the textfile is per GPU, not per rank)
  int n_ranks = 0;   // header.n_ranks or nranks label; 0 unknown
  int n_nodes = 0;   // header.nnodes or n_nodes label; 0 unknown
  std::string host;  // metadata.hostname or the node label
  int64_t pid = 0;   // metadata.pid; 0 unknown
  std::string gpu;   // the gpu label ("GPU0"); "" for JSON
  // "AllReduce", "ReduceScatter" ... for collectives; "Send", "Recv" for p2p.
  std::string op;
  bool p2p = false;
  int64_t seq = -1;                 // coll_sn / p2p_sn; -1 unknown
  int peer = -1;                    // p2p_peer; -1 unknown or a collective
  uint64_t msg_bytes = 0;           // coll_msg_size_bytes / p2p_msg_size_bytes; 0 unknown
  std::string message_size_bucket;  // the textfile's message_size label: "4-5GB"
  // Execution time and bandwidths; NaN when absent (or printed as `nan`).
  double exec_us = std::numeric_limits<double>::quiet_NaN();
  double algbw_gbs = std::numeric_limits<double>::quiet_NaN();
  double busbw_gbs = std::numeric_limits<double>::quiet_NaN();
  // "kernel_gpu", "kernel_cpu", "collective_cpu"; "" when absent (2.28.1 early access).
  std::string timing_source;
  // "RING_SIMPLE", "TREE_LL128" (the textfile, collectives only). Written upper case by NCCL
  // but "Ring_ll" in its README: compare case-insensitively.
  std::string algo_proto;
  std::string slurm_job_id;         // the slurm_job_id label ("unknown" when NCCL had none)
  int64_t dump_time_unix_nano = 0;  // metadata.dump_timestamp_us, or the sample's timestamp
  std::string format;               // "json" or "prometheus"
  // metadata.inspector_output_format_version ("v4.0") or the version label ("v5.1").
  std::string version;
  // Textfile labels not listed above (RCCL's cluster), in label order.
  std::vector<std::pair<std::string, std::string>> other_labels;
  int line = 0;  // 1-based line where the record starts
};

struct InspectorParse {
  std::vector<InspectorRecord> records;
  // "LINE:COLUMN: why" where there is a position (bad JSON: the column of the last character
  // read, i.e. the end of the offending token), else "LINE: why".
  std::vector<std::string> problems;
  // Bad records and stray text, each with a problem; the rest of the input is still parsed.
  size_t skipped = 0;
  // Valid objects with no coll_perf or p2p_perf (dump_stats): no record, no problem.
  size_t without_perf = 0;
};

// A cheap sniff of the first 4 KiB: a JSON object naming coll_perf, p2p_perf or
// inspector_output_format_version, or a line (or # HELP / # TYPE line) of an Inspector gauge.
bool LooksLikeInspectorOutput(std::string_view text);

// JSON (JSONL or pretty-printed objects one after another) when the first non-blank character
// is '{', else the Prometheus textfile.
InspectorParse ParseInspectorOutput(std::string_view text);

// One member of one communicator's operation: bounded by the job's shape, never by how many
// collectives ran.
struct InspectorSummary {
  std::string comm;  // comm_id, or comm_name where there is no id (the textfile)
  std::string host;
  int rank = -1;
  std::string gpu;
  std::string op;
  bool p2p = false;
  size_t count = 0;
  // Arithmetic means over the records that have the value; NaN when none has.
  double mean_exec_us = std::numeric_limits<double>::quiet_NaN();
  double mean_busbw_gbs = std::numeric_limits<double>::quiet_NaN();
  double min_busbw_gbs = std::numeric_limits<double>::quiet_NaN();
  double max_busbw_gbs = std::numeric_limits<double>::quiet_NaN();
  // Lowest and highest sequence number seen; -1 when none is known.
  int64_t first_seq = -1;
  int64_t last_seq = -1;
};

// One summary per (comm, host, rank, gpu, op, p2p), in the order each key first appears.
std::vector<InspectorSummary> SummariseInspector(const std::vector<InspectorRecord>& records);

struct InspectorStraggler {
  std::string comm;
  std::string op;
  bool p2p = false;
  std::string host;
  int rank = -1;
  std::string gpu;
  double busbw_gbs = std::numeric_limits<double>::quiet_NaN();
  double peers_median_busbw_gbs = std::numeric_limits<double>::quiet_NaN();
  double exec_us = std::numeric_limits<double>::quiet_NaN();
  double peers_median_exec_us = std::numeric_limits<double>::quiet_NaN();
  // busbw / peers' median busbw; where bus bandwidth is unknown, peers' median exec time / exec
  // time; for a late member, exec time / peers' median exec time. Below `ratio` in all cases.
  double share = std::numeric_limits<double>::quiet_NaN();
  // The member launches late: its collectives take far less time than its peers' because the
  // collective ends for all together and it waits least; every peer waits for it.
  bool late = false;
};

// Within one communicator and op with at least 3 members: a member whose mean bus bandwidth is
// below ratio × the median of the others', or whose mean exec time is above the others' median
// / ratio (slow); or, in a collective, whose mean exec time is below ratio × every other
// member's (late: it launches last, so it waits least and every peer waits for it). Members are compared on means over whatever message sizes they ran, which is fair
// because the members of one communicator run the same operations. `ratio` is in (0, 1];
// outside that, nothing is reported. In the order of the summaries.
std::vector<InspectorStraggler> FindInspectorStragglers(
    const std::vector<InspectorSummary>& summaries, double ratio = 0.8);

}  // namespace railwatch::logs
