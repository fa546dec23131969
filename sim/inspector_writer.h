#pragma once

// What the NCCL Inspector plugin (NCCL 2.28+) would write for the simulated jobs: one JSONL
// file per rank (process), <root>/<host>/nccl/inspector/<host>-pid<pid>.log, one record per
// collective each rank completes, in the v4.0 format of NCCL 2.28-2.30 (docs/SIMULATOR.md,
// "NCCL Inspector"; /work/shared/realworld/inspector_* for the real thing).
//
// The model: every training step of a job (SysfsFabric::Options::step) runs
// kCollectivesPerStep AllReduces of equal size, which share the step's communication time
// (step x comm_fraction) at the pace of the job's slowest NIC and leaf. Each rank launches each
// collective after its compute, with a little jitter; the collective ends for every rank at
// the same moment, once the last rank joined and the data moved. A rank's exec time (kernel
// start to end, coll_timing_source kernel_gpu) is therefore the data's time plus how long it
// waited for the last rank: a rank that launches late (a slow GPU: the slow_rank fault) waits
// least, and every peer waits for it. A stalled or failed job completes nothing.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "sim/traffic_model.h"

namespace railwatch::sim {

class NcclLogs;

class InspectorRecords {
 public:
  static constexpr int kCollectivesPerStep = 2;

  // `logs` gives each job's communicator id and each rank's pid (the same as its NCCL log's).
  InspectorRecords(std::string root, std::vector<SimJob> jobs, int gpus_per_host,
                   absl::Duration step, double comm_fraction, double link_gbps, uint64_t seed,
                   const NcclLogs& logs);
  ~InspectorRecords();
  InspectorRecords(const InspectorRecords&) = delete;
  InspectorRecords& operator=(const InspectorRecords&) = delete;

  // Creates every rank's file (empty), as of `now`.
  absl::Status Create(absl::Time now);

  // From now on, the rank on GPU `local_rank` of `host` (1-based) computes `factor` longer than
  // its peers (0.75: 75% longer) before each collective.
  void SetSlowRank(int job, int host, int local_rank, double factor);
  // From now on the rank on GPU `local_rank` of `host` launches nothing more (a hung process):
  // its peers launched the next collective and wait for it, so nothing completes (the caller
  // stalls the job). LaunchCounts shows it one behind.
  void SetHungRank(int job, int host, int local_rank);
  // The AllReduces each rank of `job` has launched, by rank (what NCCL RAS counts).
  std::vector<int64_t> LaunchCounts(int job) const;

  // Writes the records of the collectives completed by `now`. `pace[j]`: the share of its
  // healthy speed job j's data moves at (its slowest NIC and leaf; 0: stalled).
  absl::Status Tick(absl::Time now, const std::vector<double>& pace);

  static std::string Dir(const std::string& root, const std::string& host);

 private:
  struct Rank {
    int fd = -1;
    int pid = 0;
    double late_factor = 0;  // slow_rank
  };
  struct Job {
    std::vector<Rank> ranks;  // by global rank (host-major)
    absl::Time next_step;     // when the next step's compute ends
    int64_t sequence = 0;     // coll_sn of the next collective
    int hung = -1;            // the rank that stopped launching, -1 none
  };
  absl::Status WriteStep(size_t j, absl::Time when, double pace);

  std::string root_;
  std::vector<SimJob> sim_jobs_;
  int gpus_;
  absl::Duration step_;
  double comm_fraction_;
  double link_gbps_;
  const NcclLogs& logs_;
  std::mt19937_64 rng_;
  std::vector<Job> jobs_;
  std::string line_;  // scratch
};

}  // namespace railwatch::sim
