#pragma once

// The NCCL / PyTorch logs of the simulated jobs: <root>/<host>/nccl/<job>.log on every host of
// a job, holding what its ranks print (NCCL_DEBUG=INFO init, then errors), in the formats of
// NCCL 2.23 and PyTorch 2.6 (docs/LOGS.md, /work/shared/realworld samples). One rank per GPU,
// GPU k of a host uses mlx5_k (rail k); ranks are host-major over the job's hosts.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "sim/traffic_model.h"

namespace railwatch::sim {

class NcclLogs {
 public:
  NcclLogs(std::string root, std::vector<SimJob> jobs, int nics_per_host, uint64_t seed);
  ~NcclLogs();
  NcclLogs(const NcclLogs&) = delete;
  NcclLogs& operator=(const NcclLogs&) = delete;

  // Creates every job's logs with its ranks' init lines (communicator, ranks, NET/IB devices,
  // Init COMPLETE), as of `now`.
  absl::Status Create(absl::Time now);

  // The PyTorch watchdog of every rank of `job` on `host` times out (10 s collective timeout).
  absl::Status WriteWatchdogTimeout(int job, int host, absl::Time now);
  // The rank of `job` on GPU `local_rank` of `host` (whose NIC is mlx5_<local_rank>) gets IB
  // completion errors (status 12, retry exceeded) toward its ring neighbours. NCCL lines carry
  // no time: the reader stamps them when it reads them.
  absl::Status WriteIbCompletionError(int job, int host, int local_rank);

  // The job's communicator id ("0x..."), as its Init lines print it, and the pid of its rank on
  // GPU `local_rank` of `host`: what the Inspector's records of that rank carry. After Create.
  const std::string& CommId(int job) const { return logs_[job].comm_id; }
  int Pid(int job, int host, int local_rank) const {
    return logs_[job].hosts[host - jobs_[job].first_host].ranks[local_rank].pid;
  }

  static std::string LogPath(const std::string& root, const std::string& host,
                             const std::string& job);
  // The watchdog's collective timeout of the simulated jobs.
  static constexpr absl::Duration kCollectiveTimeout = absl::Seconds(10);

 private:
  struct Rank {
    int pid = 0, proxy_tid = 0;
    std::string comm;
  };
  struct HostLog {
    int fd = -1;
    std::vector<Rank> ranks;  // by local rank
  };
  struct JobLog {
    std::string comm_id;
    std::vector<HostLog> hosts;  // by host - first_host
  };
  absl::Status Append(HostLog& log, const std::string& text, const std::string& job);
  std::string InitLines(const SimJob& job, const JobLog& j, int host) const;
  int Rank(const SimJob& job, int host, int local_rank) const;

  std::string root_;
  std::vector<SimJob> jobs_;
  int nics_;
  std::mt19937_64 rng_;
  absl::Time start_;
  std::vector<JobLog> logs_;
};

// A simulated host's addresses: its bootstrap (eth0) IP and the RoCE IP of its NIC k.
std::string HostAddress(int host);
std::string NicAddress(int host, int nic);

}  // namespace railwatch::sim
