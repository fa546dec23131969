#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "agent/batch_builder.h"
#include "agent/sender.h"
#include "collectors/collector.h"
#include "common/clock.h"

namespace railwatch {

// railwatch-agent: polls its collectors every interval and streams the points to the daemon.
// A failing collector is logged and reported (railwatch_collector_success = 0) and the
// others go on.
class Agent {
 public:
  struct Options {
    std::string hostname;
    v1::AgentRole role = v1::AGENT_ROLE_HOST;
    std::string agent_id;  // defaults to hostname
    absl::Duration interval = absl::Seconds(1);
    Sender::Options sender;
  };

  Agent(Options options, std::vector<std::unique_ptr<Collector>> collectors,
        const Clock& clock = RealClock::Get());

  // Polls until `stop` is notified, then flushes and returns.
  void Run(absl::Notification& stop);
  // One poll of every collector; queues the batch and returns its point count.
  size_t PollOnce();

  const Sender& sender() const { return *sender_; }

 private:
  struct CollectorSeries {
    uint32_t duration_id;
    uint32_t success_id;
  };

  Options options_;
  std::vector<std::unique_ptr<Collector>> collectors_;
  std::vector<CollectorSeries> collector_series_;
  const Clock& clock_;
  SeriesRegistry registry_;
  BatchBuilder builder_;
  std::unique_ptr<Sender> sender_;
};

}  // namespace railwatch
