#pragma once

// NCCL's RAS endpoint for the simulated jobs (NCCL 2.24+; docs/JOBS.md "NCCL RAS"). A real job's
// processes all listen on 127.0.0.1:28028 of their host and any one answers for the whole job;
// the simulated hosts share one machine, so each host of a job gets a listener of its own on
// 127.0.0.1 (an ephemeral port, written to <root>/<host>/nccl/ras_port) that answers for its
// job. It speaks the RAS client protocol as NCCL 2.30.7 does (src/ras/client_support.cc:
// "CLIENT PROTOCOL 2" -> "SERVER PROTOCOL 2", "TIMEOUT <s>" -> "OK", "SET FORMAT json" -> "OK",
// "STATUS" -> the report, then the connection closes; "MONITOR [lifecycle|trace|all,...]" ->
// "OK", then the connection stays open and the job's events come on it) and reports in NCCL's
// JSON format (the realworld samples ras_08 and ras_10): the job's communicator (hash = its
// commId), each rank's host address, pid, GPU and collective counts, which come from the
// Inspector model: a rank that hangs is one AllReduce behind the others, which launched the
// next one and wait for it.
//
// MONITOR events are what NCCL's RAS threads say about each other's processes, never about
// collectives: a rank that stops launching (rank_hang) while its process lives keeps its RAS
// thread answering keep-alives, and real NCCL says nothing of it on MONITOR. A process that
// stops whole (ProcessFrozen) is reported as NCCL's timers report it.

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
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

  // NCCL's event groups (src/ras/ras_internal.h rasEventGroup).
  static constexpr uint8_t kLifecycle = 0x01, kTrace = 0x02;
  // Tells every MONITOR client of `job` whose groups take `group` that `event` happened to the
  // process of GPU `local_rank` of host `host` (1-based), as NCCL writes it (JSON or text).
  void PeerEvent(int job, int host, int local_rank, const std::string& event,
                 const std::string& details, uint8_t group);
  // The process of GPU `local_rank` of `host` stops whole at `at` (SIGSTOP, a host that
  // hangs): its peers' RAS threads miss its keep-alives and say so when NCCL's timers do
  // (src/ras/rasnet.cc, NCCL_RAS_TIMEOUT_FACTOR=1): PEER_UNRESPONSIVE (TRACE) 5 s on,
  // PEER_KEEPALIVE_TIMEOUT (TRACE) at 20 s, PEER_TIMEOUT_DEAD (TRACE) and PEER_DEAD (LIFECYCLE)
  // at 60 s. (NCCL's TRACE events come from the process's neighbours on the RAS network only;
  // here every host of the job says them.)
  void ProcessFrozen(int job, int host, int local_rank, absl::Time at);
  // MONITOR clients connected now (tests).
  int MonitorClients() const;

 private:
  struct Listener {
    int fd = -1;
    int job = 0;
  };
  struct MonitorClient {
    int fd = -1;
    int job = 0;
    uint8_t groups = 0;
    bool json = false;
  };
  struct Event {
    absl::Time due;
    int job = 0, host = 0, local_rank = 0;
    std::string event, details;
    uint8_t group = 0;
  };
  // What a connection turned into when Answer returned: closed, or a MONITOR client.
  struct Outcome {
    bool monitor = false;
    uint8_t groups = 0;
    bool json = false;
  };
  void Serve();
  Outcome Answer(int fd, int job);
  void Wake();
  // Sends the events that are due to their clients; returns how long until the next one.
  absl::Duration Deliver(absl::Time now);
  std::string Format(const Event& e, bool json) const;

  std::string root_;
  std::vector<SimJob> jobs_;
  int gpus_;
  const NcclLogs& logs_;
  std::vector<Listener> listeners_;
  mutable std::mutex mu_;
  std::vector<std::vector<int64_t>> counts_;  // guarded by mu_
  std::vector<Event> events_;                 // guarded by mu_: to send, by due time
  int wake_fd_ = -1;                          // an eventfd that wakes Serve: events, stop
  std::atomic<bool> stop_{false};
  std::vector<MonitorClient> monitors_;       // Serve's thread only
  std::atomic<int> monitor_count_{0};
  std::thread thread_;
};

}  // namespace railwatch::sim
