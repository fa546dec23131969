#pragma once

// What NCCL RAS says of ranks, placed on their hosts: railwatchd turns a report's communicator
// issue (an nccl_ras.comm_issue event from any host of the job: docs/JOBS.md) into one
// nccl_ras.rank_behind event per rank it names as behind (MISMATCH, stuck), on that rank's own
// host, so that job_hang (rules/job-hang.yaml) names the rank where it runs.
// (A text report's outlier ranks may be ahead rather than behind; the `size` check below and
// the JSON reports' ranks-behind keep that from naming the wrong rank in the usual cases.)

#include <vector>

#include "absl/time/time.h"
#include "store/event_store.h"
#include "topology/fabric_map.h"

namespace railwatch {

inline constexpr char kRankBehindEvent[] = "nccl_ras.rank_behind";

struct RanksBehindOptions {
  // A MISMATCH counts once the agent has seen the same counts this long (its stuck_for_s): a
  // rank briefly behind (writing a checkpoint while the others wait in the next collective) is
  // not a hang. railwatchd --job_hang_after.
  absl::Duration stuck_after = absl::Minutes(2);
  // One event per comm/rank this often, however many agents report it.
  absl::Duration every = absl::Seconds(10);
};

// The nccl_ras.rank_behind events of `issue` (none for any other kind, a MISMATCH stuck for
// less than `stuck_after`, one where most ranks are "behind" (one rank is ahead), or ranks no
// NCCL log placed): labels host, rank, local_rank, comm ("0x" + the hash); attributes issue,
// op and op_counts where RAS gave them, reported_by (the host whose agent asked) and
// stuck_for_s; the issue's time and raw text. Ranks missing from a communicator (INCOMPLETE)
// are left to nccl_failure: ranks of a job that ends leave it one by one.
std::vector<StoredEvent> RanksBehind(const StoredEvent& issue, const JobRegistry& jobs,
                                     const RanksBehindOptions& options = {});

}  // namespace railwatch
