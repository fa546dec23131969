#pragma once

#include <memory>
#include <vector>

#include "absl/time/time.h"
#include "common/clock.h"
#include "engine/engine.h"
#include "prometheus/client_metric.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"
#include "prometheus/metric_type.h"
#include "store/series_store.h"

namespace railwatch {

// Exposes every fresh series of the store (fabric_* from agents, railwatch_collector_* that
// agents report about themselves) with its latest value, one family per name. A series whose
// latest sample is older than `stale_after` is left out, as Prometheus expects of a target
// whose device went away.
//
// railwatchd serves the store through StoreExposition (exporters/store_exposition.h), which
// writes the same text without a MetricFamily per name and a ClientMetric per series; this
// collectable stays as its reference (tests compare the two byte for byte, bench/metrics_bench
// times both) and for callers that want families.
class StoreCollectable final : public prometheus::Collectable {
 public:
  StoreCollectable(const SeriesStore& store, const Clock& clock, absl::Duration stale_after)
      : store_(store), clock_(clock), stale_after_(stale_after) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const SeriesStore& store_;
  const Clock& clock_;
  absl::Duration stale_after_;
};

// railwatch_diagnosis_active{playbook,severity,<culprit labels>} = 1 for each firing diagnosis.
class DiagnosisCollectable final : public prometheus::Collectable {
 public:
  explicit DiagnosisCollectable(const Engine& engine) : engine_(engine) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const Engine& engine_;
};

}  // namespace railwatch
