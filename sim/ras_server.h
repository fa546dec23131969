#pragma once

// NCCL's RAS endpoint for the simulated jobs (NCCL 2.24+; docs/JOBS.md "NCCL RAS"). A real job's
// processes all listen on 127.0.0.1:28028 of their host and any one answers for the whole job;
// the simulated hosts share one machine, so each host of a job gets a listener of its own on
// 127.0.0.1 (an ephemeral port, written to <root>/<host>/nccl/ras_port) that answers for its
// job. It speaks the RAS client protocol as NCCL 2.28.9 does (src/ras/client_support.cc:
// "CLIENT PROTOCOL 2" -> "SERVER PROTOCOL 2", "TIMEOUT <s>" -> "OK", "SET FORMAT json" -> "OK",
// "STATUS" -> the report, then the connection closes) and reports in NCCL's JSON format (the
// realworld samples ras_08 and ras_10): the job's communicator (hash = its commId), each rank's
// host address, pid, GPU and collective counts, which come from the Inspector model: a rank
// that hangs is one AllReduce behind the others, which launched the next one and wait for it.

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "sim/traffic_model.h"

namespace railwatch::sim {

class NcclLogs;

class RasServer {
 public:
  RasServer(std::string root, std::vector<SimJob> jobs, int gpus_per_host, const NcclLogs& logs);
  ~RasServer();
  RasServer(const RasServer&) = delete;
  RasServer& operator=(const RasServer&) = delete;

  // Listens for every host of every job, writes the port files, starts serving.
  absl::Status Start();
  // The AllReduce counts each rank of `job` has launched (by rank, host-major).
  void SetCounts(int job, std::vector<int64_t> counts);

  static std::string PortFile(const std::string& root, const std::string& host);
  // The JSON STATUS report of one job (tests).
  std::string Report(int job) const;

 private:
  struct Listener {
    int fd = -1;
    int job = 0;
  };
  void Serve();
  void Answer(int fd, int job);

  std::string root_;
  std::vector<SimJob> jobs_;
  int gpus_;
  const NcclLogs& logs_;
  std::vector<Listener> listeners_;
  mutable std::mutex mu_;
  std::vector<std::vector<int64_t>> counts_;  // guarded by mu_
  int stop_fd_ = -1;                          // an eventfd that wakes Serve to stop
  std::thread thread_;
};

}  // namespace railwatch::sim
