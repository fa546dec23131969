#pragma once

// What NCCL RAS says of ranks, placed on their hosts: railwatchd turns a report's communicator
// issue (an nccl_ras.comm_issue event from any host of the job: docs/JOBS.md) into one
// nccl_ras.rank_behind event per rank it names as behind (MISMATCH) or missing (INCOMPLETE), on
// that rank's own host, so that job_hang (rules/job-hang.yaml) names the rank where it runs.

#include <vector>

#include "store/event_store.h"
#include "topology/fabric_map.h"

namespace railwatch {

inline constexpr char kRankBehindEvent[] = "nccl_ras.rank_behind";

// The nccl_ras.rank_behind events of `issue` (none for any other kind, or for ranks no NCCL log
// placed): labels host, rank, local_rank, comm ("0x" + the hash); attributes issue (MISMATCH or
// INCOMPLETE), op and op_counts where RAS gave them, reported_by (the host whose agent asked);
// the issue's time and raw text.
std::vector<StoredEvent> RanksBehind(const StoredEvent& issue, const JobRegistry& jobs);

}  // namespace railwatch
