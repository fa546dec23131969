#pragma once

// What the Slurm readers (slurm_json.cc, slurm_text.cc) share; not for callers outside jobs/.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "jobs/slurm.h"

namespace railwatch::jobs::internal {

// ExpandHostlist with the error's 1-based column of `expr` in *error_column and not in the
// message, so that a reader can turn it into file:line:column.
absl::StatusOr<std::vector<std::string>> ExpandHostlistAt(std::string_view expr, size_t max_names,
                                                          size_t* error_column);

// A node list that names no node: "", "(null)", "(None)", "None assigned".
bool NamesNoNode(std::string_view node_list);

// GPUs of each node of a job, as per-node GRES lines or entries give them.
struct NodeGpus {
  std::string node;
  SlurmGpus gpus;
};

// Fills a job's GPU fields from what a reader found, most exact first: per-node GPUs covering
// every node (their sum, and their count when all nodes have the same), the job's total and
// per-node figures, and each from the other where that is exact (one node; per node × nodes).
struct GpuFacts {
  std::vector<NodeGpus> per_node;  // in any order; indexes kept where given
  SlurmGpus per_node_request;      // tres_per_node, TresPerNode=, Gres=
  SlurmGpus total;                 // the best total the input gave
};
void ApplyGpuFacts(const GpuFacts& facts, SlurmJob& job);

// squeue's compact state codes (R, PD, CG, ...) as the names the JSON and scontrol print.
std::string JobStateName(std::string_view code);

}  // namespace railwatch::jobs::internal
