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
    // The on-disk spool (agent/spool.h); dir empty: memory only. When it cannot be opened the
    // agent says why and runs without one.
    Spool::Options spool;
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
  // The agent's own delivery series (railwatch_agent_spool_*, railwatch_agent_queue_*).
  struct DeliverySeries {
    uint32_t queue_dropped;
    // Only with a spool.
    uint32_t spool_appended, spool_replayed, spool_dropped, spool_dropped_bytes, spool_errors,
        spool_bytes;
  };
  void DefineDeliverySeries(bool spool);
  void EmitDeliverySeries(int64_t t);

  Options options_;
  std::vector<std::unique_ptr<Collector>> collectors_;
  std::vector<CollectorSeries> collector_series_;
  DeliverySeries delivery_series_{};
  const Clock& clock_;
  SeriesRegistry registry_;
  BatchBuilder builder_;
  std::unique_ptr<Sender> sender_;
};

}  // namespace railwatch
