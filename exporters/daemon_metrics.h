#pragma once

#include <memory>

#include "absl/synchronization/mutex.h"
#include "daemon/ingest_stats.h"
#include "engine/engine.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"
#include "store/series_store.h"

namespace railwatch {

// The daemon's own metrics (railwatch_*), registered once. Components own their statistics
// (SeriesStore::Stats, Engine::Stats, IngestStats): Refresh copies them in at scrape time, so
// no component links this exporter.
class DaemonMetrics {
 public:
  explicit DaemonMetrics(prometheus::Registry& registry);

  prometheus::Counter& samples_ingested;
  prometheus::Counter& batches_ingested;
  prometheus::Counter& events_ingested;
  prometheus::Counter& streams_opened;
  // Streams that ended without their status reaching the agent (daemon/ingest_service.cc).
  prometheus::Counter& streams_aborted;
  prometheus::Family<prometheus::Counter>& ingest_errors;  // {reason}
  prometheus::Gauge& agents_connected;
  prometheus::Gauge& series;
  prometheus::Counter& samples_out_of_order;
  prometheus::Counter& counter_resets;
  // {reason}: counter steps the store did not take as a plain increase (store/counter_math.h
  // CounterTrap): reset, wrap, above_line_rate (rejected), invalid_value (dropped).
  prometheus::Family<prometheus::Counter>& counter_traps;
  prometheus::Counter& rule_evaluations;
  prometheus::Counter& rule_unknown_results;
  prometheus::Gauge& rule_evaluation_seconds;
  prometheus::Gauge& playbooks_loaded;
  // {playbook, severity}: diagnoses that started firing. StartCounting makes each enabled
  // playbook's series exist from 0, so increase() counts its first diagnosis.
  prometheus::Family<prometheus::Counter>& diagnoses_fired;
  void StartCounting(const std::vector<Playbook>& playbooks);

  // Copies store, engine and ingest statistics into the gauges and counters above.
  void Refresh(const SeriesStore& store, const Engine& engine, const IngestStats& ingest);

 private:
  absl::Mutex mu_;  // scrapes may run concurrently
  uint64_t seen_out_of_order_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t seen_resets_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t seen_traps_[4] ABSL_GUARDED_BY(mu_) = {};  // resets, wraps, above line rate, invalid
  uint64_t seen_evaluations_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t seen_unknown_results_ ABSL_GUARDED_BY(mu_) = 0;
  // samples, batches, events, streams opened, streams aborted; then one per IngestError.
  uint64_t seen_ingest_[5] ABSL_GUARDED_BY(mu_) = {};
  uint64_t seen_ingest_errors_[kIngestErrorCount] ABSL_GUARDED_BY(mu_) = {};
};

}  // namespace railwatch
