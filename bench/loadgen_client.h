#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "bench/loadgen_plan.h"
#include "grpcpp/grpcpp.h"
#include "railwatch/v1/ingest.grpc.pb.h"

namespace railwatch::loadgen {

// Totals over all agents of one worker; read by the reporter while the worker runs.
struct Counters {
  std::atomic<uint64_t> samples_sent{0};
  std::atomic<uint64_t> batches_sent{0};
  std::atomic<uint64_t> batches_acked{0};
  // A batch was due while the previous one was still being written: not sent.
  std::atomic<uint64_t> batches_skipped{0};
  std::atomic<uint64_t> streams_started{0};
  std::atomic<uint64_t> streams_failed{0};
  std::atomic<int64_t> connected{0};
};

struct WorkerOptions {
  std::string server;
  absl::Duration interval = absl::Seconds(1);
  std::string host_prefix = "load-";
};

class Agent;

// Plays a share of the agents on one thread: each agent is an async Ingest stream on its own
// channel (its own TCP connection, as real agents have), driven by this worker's completion
// queue. Hello, Welcome, then one batch per interval at the agent's phase; the first batch of
// every stream defines all series, later ones carry points only. A broken or refused stream is
// retried with backoff.
class Worker {
 public:
  // `agents` are (global host index, phase within the interval) pairs.
  Worker(WorkerOptions options, const HostPlan& plan,
         std::vector<std::pair<int, absl::Duration>> agents, absl::Time start);
  ~Worker();

  void Start();
  // Cancels every stream and returns once all have ended.
  void StopAndJoin();
  const Counters& counters() const { return counters_; }

 private:
  friend class Agent;
  void Run();

  const WorkerOptions options_;
  const HostPlan& plan_;
  const absl::Time start_;
  Counters counters_;
  grpc::CompletionQueue cq_;
  std::vector<std::unique_ptr<Agent>> agents_;
  // Shared by this worker's agents: a write serialises the message before it returns, so one
  // message (with its points and definitions allocated once) serves every agent in turn.
  v1::AgentMessage scratch_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace railwatch::loadgen
