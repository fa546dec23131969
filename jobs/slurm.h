#pragma once

// Jobs from Slurm: who runs what on which nodes with how many GPUs, read from what Slurm's own
// tools print (issue 23 item 4, docs/JOBS.md "Slurm: the readers"). railwatchd --slurm polls
// squeue --json through ParseSqueueJson (jobs/slurm_watch.h).
//
//   squeue --json, scontrol show job --json and slurmrestd's /jobs and /job/{id} answers:
//     openapi v0.0.37 (21.08: job_state a string, numbers plain), data_parser v0.0.39 (23.02:
//     meta.plugins/meta.Slurm, some numbers wrapped {set, infinite, number}), v0.0.40/41 (23.11,
//     24.05: job_state an array of flags, almost every number wrapped)     ParseSqueueJson
//   scontrol show job [-d|-dd] text (per-node GRES lines with GPU indexes) ParseScontrolShowJob
//   the default squeue table                                                ParseSqueueTable
//
// Rules shared by the readers: absent is unknown, never zero (-1 GPUs, 0 times, empty
// strings); they never throw and never stop at a bad job: what parsed is kept, and each thing
// they could not read is a SlurmProblem with file:line:column where the text has one.

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace railwatch::jobs {

// The most names one hostlist expression may expand to: a typo such as d[1-999999999] must not
// allocate gigabytes.
inline constexpr size_t kMaxHostlistNames = 1'000'000;

// Slurm's hostlist expressions: plain names and prefix[a-b,c,d-e]suffix, comma-joined at the
// top level (d[001-032],f[001-004,006-024]); zero-padded widths are kept (a range takes the
// width of its first number); several bracket groups in one name expand as their product
// (rack[1-2]-n[1-3]). Names come in the order written. "" is no names. An error names the
// 1-based column of `expr` where the expression goes wrong ("column 7: ..."), or says that it
// expands to more than `max_names`.
absl::StatusOr<std::vector<std::string>> ExpandHostlist(std::string_view expr,
                                                        size_t max_names = kMaxHostlistNames);

struct SlurmJob {
  std::string id;  // job id as Slurm prints it: "1618871"; an array in squeue: "123_[1-10]"
  std::string name;
  std::string user;
  std::string account;
  std::string partition;
  // As Slurm prints it: a string up to v0.0.39 ("COMPLETING" where a flag is set), from
  // v0.0.40 an array: its first element (the base state: RUNNING, PENDING, COMPLETED) here,
  // the flags after it (CONFIGURING, COMPLETING) in state_flags.
  std::string state;
  std::vector<std::string> state_flags;
  std::string node_list;           // the hostlist expression as Slurm printed it
  std::vector<std::string> nodes;  // node_list expanded; empty while pending
  int node_count = -1;             // as Slurm counts (requested, while pending)
  int gpus_per_node = -1;          // -1: unknown
  int gpus_total = -1;             // -1: unknown
  std::string gpu_type;            // GRES type (h100, a100_3g.20gb) where given
  // Node -> its GPU indexes as Slurm prints them ("0-7", "0,2-3"), where the input gives them
  // (squeue --json gres_detail, scontrol show job -d GRES=gpu:1(IDX:0)).
  std::map<std::string, std::string> gpu_indexes_by_node;
  int64_t submit_unix = 0;  // 0: unknown
  int64_t start_unix = 0;   // 0: unknown (pending)
  int64_t end_unix = 0;     // expected end while running (start + time limit); 0: unknown
};

struct SlurmProblem {
  std::string where;  // file:line:column (or file)
  std::string message;
  std::string ToString() const { return where + ": " + message; }
};

struct SlurmJobsResult {
  std::vector<SlurmJob> jobs;  // in the order Slurm listed them
  std::vector<SlurmProblem> problems;
  // JSON only: the plugin that printed it ("openapi/v0.0.37", "data_parser/v0.0.39") and
  // Slurm's release ("23.02.6"); "" when not given.
  std::string format;
  std::string slurm_release;
};

// squeue --json (and scontrol show job --json, slurmrestd /jobs): any of the versions above.
// Errors and warnings Slurm put in the document become problems. `file` names the input in
// problems.
SlurmJobsResult ParseSqueueJson(std::string_view text, const std::string& file);

// scontrol show job [-d|-dd] text: jobs separated by blank lines, each starting with JobId= at
// the start of a line. Lines before the first job (a shell prompt, other output) and a
// documentation's ". . ." elisions are skipped. Times carry no zone in this text: they are read
// in `zone` (the cluster's).
SlurmJobsResult ParseScontrolShowJob(std::string_view text, const std::string& file,
                                     absl::TimeZone zone = absl::UTCTimeZone());

// The squeue table (the default format, or any whose header starts with JOBID and names some
// of PARTITION, NAME, USER, ACCOUNT, ST|STATE, NODES, NODELIST(REASON)|NODELIST): from its
// header line to the first blank line. Compact states (R, PD, CG) become their names
// (RUNNING, PENDING, COMPLETING).
SlurmJobsResult ParseSqueueTable(std::string_view text, const std::string& file);

// GPUs named by a TRES string or a GRES: how many, of which type, with which indexes.
struct SlurmGpus {
  int count = -1;       // -1: none named
  std::string type;     // the GRES type (h100; a MIG profile: a100_3g.20gb); "" when none
  std::string indexes;  // as printed ("0-7", "0,2-3"); "" when none or N/A
};

// A TRES string ("cpu=16,mem=120000M,node=1,billing=80,gres/gpu=8"): the untyped gres/gpu
// count, else the sum of the typed ones (gres/gpu:h100=1); the type when one type is named.
SlurmGpus GpusFromTres(std::string_view tres);

// A GPU GRES request or allocation ("gres:gpu:8", "gres/gpu:h100:8", "gpu:8(IDX:0-7)",
// "gpu:(null):8(IDX:0-7)", "gpu:a100:2(IDX:0,2)", "gpu(IDX:0)"): the GPU entries of a comma
// list, summed. The count is the number, else the number of indexes, else 1.
SlurmGpus GpusFromGres(std::string_view gres);

}  // namespace railwatch::jobs
