#pragma once

// What the jobs' ranks log when they fail, and when: the one place that turns faults into NCCL
// errors (docs/SIMULATOR.md, "NCCL logs"). Independent failures (the NCCL error fault) are written
// at once; a fault that hurts ranks makes them fail a little later, as NCCL and PyTorch notice:
// - a NIC gone: its rank gets IB completion errors (status 12, retry exceeded) ~3 s later;
// - a PFC deadlock: its job stalls, and every rank's watchdog times out after the collective
//   timeout (10 s), unless the deadlock is over by then.
// Each failure on a host is one NCCL error ground-truth line; a consequence carries
// "caused_by" (the fault's name in NCCL errors, FaultTruth::cause: its kind) and the fault's
// "cause_host"/"cause_device".

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "sim/fault_specs.h"
#include "sim/traffic_model.h"

namespace railwatch::sim {

class NcclLogs;

class JobFailures {
 public:
  // `job_of_host`: index into `jobs` by host (1-based), -1 for none. `logs` may be null (no
  // NCCL logs: no failure is written, and none is recorded).
  JobFailures(std::vector<SimJob> jobs, std::vector<int> job_of_host, NcclLogs* logs,
              std::string ground_truth_file);

  static constexpr absl::Duration kNicGoneDelay = absl::Seconds(3);

  // An NCCL error fault: the host's ranks fail on their own, now.
  absl::Status Independent(absl::Time now, const NcclError& e);
  // NIC `nic` of `host` left the host at `now` (a fault named `cause`).
  void NicGone(absl::Time now, int host, int nic, const std::string& cause);
  // A fault named `cause` on `host`/`nic` (a deadlock) stalls `job` from `now` on; Resumed
  // when it is over.
  void JobStalled(absl::Time now, int job, int host, int nic, const std::string& cause);
  void JobResumed(int job);

  // Writes the failures that are due at `now`.
  absl::Status Tick(absl::Time now);

 private:
  struct Pending {
    absl::Time due;
    std::string kind;  // timeout | ib_completion
    int job = -1, host = 0;
    int local_rank = -1;  // -1: every rank of the job on the host (every host for a stall)
    std::string caused_by;
    int cause_host = 0, cause_nic = 0;
    bool done = false;
    bool stall = false;  // a stalled job: every rank of it times out, unless it resumed
  };
  absl::Status Write(absl::Time now, const Pending& p, int host);

  std::vector<SimJob> jobs_;
  std::vector<int> job_of_host_;
  NcclLogs* logs_;
  std::string ground_truth_file_;
  std::vector<Pending> pending_;
  std::vector<bool> stalled_;  // by job
};

}  // namespace railwatch::sim
