#pragma once

// Jobs from Slurm (issue 23 item 4, docs/JOBS.md "Slurm: the daemon polls"): every `interval`
// the daemon runs `squeue --json` (Slurm's own client, with the daemon's SLURM_CONF and munge)
// or asks slurmrestd for /slurm/<version>/jobs (jobs/slurmrestd.h), reads the answer with
// jobs::ParseSqueueJson and hands the running jobs to the JobRegistry under the source
// "slurm": a job that started appears in the blast radius of diagnoses on its nodes after one
// poll, and one that ended (or was cancelled) leaves at the next. Slurm node names must be the
// agents' host labels (both default to the machine's short host name).
//
// A failing poll (squeue missing, slurmctld down, slurmrestd refusing or unreachable, bad
// output) keeps the last known jobs: a job is not taken away because the scheduler could not be
// asked. It is counted, logged on its first failure and when it recovers.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "jobs/slurm.h"
#include "jobs/slurmrestd.h"
#include "topology/fabric_map.h"

namespace railwatch {

struct SlurmWatchOptions {
  // The command, run without a shell: --slurm=squeue is {"squeue", "--json"};
  // --slurm=squeue:/opt/slurm/bin/squeue names the program. Empty with slurmrestd or off.
  std::vector<std::string> command = {"squeue", "--json"};
  // --slurm=slurmrestd:URL: slurmrestd is asked instead of running a command.
  std::optional<SlurmRestOptions> rest;
  absl::Duration interval = absl::Seconds(10);
  absl::Duration timeout = absl::Seconds(10);  // squeue's run, or one HTTP request

  bool enabled() const { return !command.empty() || rest.has_value(); }
};

// "off" (not enabled()), "squeue", "squeue:PATH" or "slurmrestd:URL" (SlurmRestOptionsFromUrl).
absl::StatusOr<SlurmWatchOptions> SlurmWatchOptionsFromFlag(const std::string& flag);

// The registry's view of Slurm's running jobs: name "slurm-<id>", the expanded nodes, GPUs
// (per node times nodes, or the total), detail "<name> by <user> in <partition>". Jobs that do
// not run (pending, completed) and jobs without nodes are left out.
std::vector<JobInfo> RunningSlurmJobs(const std::vector<jobs::SlurmJob>& jobs);

class SlurmWatch {
 public:
  struct Stats {
    uint64_t polls = 0, failures = 0;
    // Failures by absl status code name: "UNAVAILABLE" (no answer, a timeout, slurmctld down),
    // "PERMISSION_DENIED" (slurmrestd's 401/403), "NOT_FOUND" (404, no such program),
    // "DATA_LOSS" (Slurm's errors, a document that could not be read) ...
    std::map<std::string, uint64_t> failures_by_code;
    size_t jobs = 0;  // running jobs at the last good poll
    std::string last_error;  // "" after a good poll
    std::string api_version;  // slurmrestd's API version asked ("" for squeue)
  };

  SlurmWatch(SlurmWatchOptions options, JobRegistry& registry);
  ~SlurmWatch();

  // One poll: run the command or ask slurmrestd, read it, replace the registry's Slurm jobs.
  absl::Status RunOnce();
  // RunOnce now and every interval on a thread of its own, until Stop().
  void Start();
  void Stop();
  Stats stats() const;

 private:
  // Runs squeue or asks slurmrestd; the answer read.
  absl::StatusOr<jobs::SlurmJobsResult> Ask();

  SlurmWatchOptions options_;
  std::unique_ptr<SlurmRestClient> rest_;  // with --slurm=slurmrestd:URL
  JobRegistry& registry_;
  mutable absl::Mutex mu_;
  Stats stats_ ABSL_GUARDED_BY(mu_);
  bool failing_ ABSL_GUARDED_BY(mu_) = false;
  absl::Notification stop_;
  std::thread thread_;
};

}  // namespace railwatch
