#pragma once

#include <vector>

#include "common/clock.h"
#include "daemon/agent_registry.h"
#include "daemon/diagnosis_watch.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace railwatch {

// Per-agent series for dashboards and the self-health alert rules, read from the agent
// registry at scrape time (labels agent, role; bounded by the number of agents):
//   railwatch_agent_connected                   1 while the agent has an open stream
//   railwatch_agent_last_seen_timestamp_seconds when its last batch arrived
//   railwatch_agent_lag_seconds                 newest point's age when its batch arrived
//   railwatch_agent_series                      series it has defined
class AgentCollectable final : public prometheus::Collectable {
 public:
  explicit AgentCollectable(const AgentRegistry& agents) : agents_(agents) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const AgentRegistry& agents_;
};

// WatchDiagnoses streams (the CLI's `watch`, dashboards' bridges):
//   railwatch_query_watches_open               streams open now
//   railwatch_query_watches_started_total      streams started
//   railwatch_query_watch_overflows_total      streams ended because the client fell behind
class WatchCollectable final : public prometheus::Collectable {
 public:
  explicit WatchCollectable(const DiagnosisWatchHub& hub) : hub_(hub) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const DiagnosisWatchHub& hub_;
};

}  // namespace railwatch
