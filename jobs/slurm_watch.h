#pragma once

// Jobs from Slurm (issue 23 item 4, docs/JOBS.md "Slurm: the daemon polls"): every `interval`
// the daemon runs `squeue --json` (Slurm's own client, with the daemon's SLURM_CONF and munge),
// reads it with jobs::ParseSqueueJson and hands the running jobs to the JobRegistry under the
// source "slurm": a job that started appears in the blast radius of diagnoses on its nodes
// after one poll, and one that ended (or was cancelled) leaves at the next. Slurm node names
// must be the agents' host labels (both default to the machine's short host name).
//
// A failing poll (squeue missing, slurmctld down, bad output) keeps the last known jobs: a job
// is not taken away because the scheduler could not be asked. It is logged on its first
// failure and when it recovers.

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "jobs/slurm.h"
#include "topology/fabric_map.h"

namespace railwatch {

struct SlurmWatchOptions {
  // The command, run without a shell: --slurm=squeue is {"squeue", "--json"};
  // --slurm=squeue:/opt/slurm/bin/squeue names the program.
  std::vector<std::string> command = {"squeue", "--json"};
  absl::Duration interval = absl::Seconds(10);
  absl::Duration timeout = absl::Seconds(10);
};

// "off" (nullopt through ok() with an empty command), "squeue" or "squeue:PATH".
absl::StatusOr<SlurmWatchOptions> SlurmWatchOptionsFromFlag(const std::string& flag);

// The registry's view of Slurm's running jobs: name "slurm-<id>", the expanded nodes, GPUs
// (per node times nodes, or the total), detail "<name> by <user> in <partition>". Jobs that do
// not run (pending, completed) and jobs without nodes are left out.
std::vector<JobInfo> RunningSlurmJobs(const std::vector<jobs::SlurmJob>& jobs);

class SlurmWatch {
 public:
  struct Stats {
    uint64_t polls = 0, failures = 0;
    size_t jobs = 0;  // running jobs at the last good poll
  };

  SlurmWatch(SlurmWatchOptions options, JobRegistry& registry);
  ~SlurmWatch();

  // One poll: run the command, read it, replace the registry's Slurm jobs.
  absl::Status RunOnce();
  // RunOnce now and every interval on a thread of its own, until Stop().
  void Start();
  void Stop();
  Stats stats() const;

 private:
  SlurmWatchOptions options_;
  JobRegistry& registry_;
  mutable absl::Mutex mu_;
  Stats stats_ ABSL_GUARDED_BY(mu_);
  bool failing_ ABSL_GUARDED_BY(mu_) = false;
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace railwatch
