#pragma once

// `railwatch-sim run --live`: every diagnosis as it fires (WatchDiagnoses), written for an
// on-call engineer: when, what, where, why (evidence), what it hurts and what to do (runbook).

#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "grpcpp/grpcpp.h"
#include "railwatch/v1/query.pb.h"
#include "sim/runner.h"

namespace railwatch::sim {

// A FIRING diagnosis as a block of lines; `prefix` starts each line ("[scenario] " when several
// scenarios run at once), the time is from the simulator's start.
std::string LiveFiring(const v1::Diagnosis& d, int64_t sim_start_unix_nano, int64_t time_unix_nano,
                       const std::string& prefix);
// A resolve as one line.
std::string LiveResolved(const v1::Diagnosis& d, int64_t sim_start_unix_nano,
                         int64_t time_unix_nano, const std::string& prefix);

// Watches the daemon at `address` on a thread until destroyed; reconnects when the stream ends.
class LiveWatch {
 public:
  LiveWatch(std::string address, int64_t sim_start_unix_nano, std::string prefix, Printer& printer);
  ~LiveWatch();

 private:
  void Loop();

  std::string address_;
  int64_t sim_start_;
  std::string prefix_;
  Printer& printer_;
  absl::Notification done_;
  std::mutex mu_;
  grpc::ClientContext* context_ = nullptr;  // the stream now open, to cancel
  std::thread thread_;
};

}  // namespace railwatch::sim
