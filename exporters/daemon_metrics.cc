#include "exporters/daemon_metrics.h"

#include <iterator>

#include "common/version.h"
#include "engine/diagnosis_text.h"

namespace railwatch {
namespace {

// In the order of the traps Refresh copies (CounterTrapName's names).
constexpr const char* kCounterTrapReasons[] = {"reset", "wrap", "above_line_rate",
                                               "invalid_value"};

prometheus::Counter& NewCounter(prometheus::Registry& r, const char* name, const char* help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(r).Add({});
}
prometheus::Gauge& NewGauge(prometheus::Registry& r, const char* name, const char* help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(r).Add({});
}

}  // namespace

DaemonMetrics::DaemonMetrics(prometheus::Registry& r)
    : samples_ingested(NewCounter(r, "railwatch_ingest_samples_total",
                                  "Samples received from agents and stored.")),
      batches_ingested(NewCounter(r, "railwatch_ingest_batches_total",
                                  "Batches received from agents.")),
      events_ingested(NewCounter(r, "railwatch_ingest_events_total",
                                 "Events received from agents.")),
      streams_opened(NewCounter(r, "railwatch_ingest_streams_opened_total",
                                "Ingest streams opened by agents (connects and reconnects).")),
      streams_aborted(NewCounter(r, "railwatch_ingest_streams_aborted_total",
                                 "Ingest streams that ended without a clean close: the agent "
                                 "vanished or cancelled, the keepalive found the connection "
                                 "dead, or gRPC refused a message over the receive limit.")),
      ingest_errors(prometheus::BuildCounter()
                        .Name("railwatch_ingest_errors_total")
                        .Help("Ingest messages or points rejected, by reason.")
                        .Register(r)),
      agents_connected(NewGauge(r, "railwatch_agents_connected", "Agents with an open stream.")),
      series(NewGauge(r, "railwatch_series", "Series held in the store.")),
      samples_out_of_order(NewCounter(r, "railwatch_store_samples_out_of_order_total",
                                      "Samples dropped because they were not newer than the "
                                      "series' latest.")),
      counter_resets(NewCounter(r, "railwatch_store_resets_total",
                                "Counter resets seen (driver reloads, replaced NICs).")),
      counter_traps(prometheus::BuildCounter()
                        .Name("railwatch_store_traps_total")
                        .Help("Counter steps not taken as a plain increase, by reason: reset "
                              "and wrap (corrected), above_line_rate (rejected: the reading "
                              "becomes the new baseline), invalid_value (dropped).")
                        .Register(r)),
      rule_evaluations(NewCounter(r, "railwatch_rule_evaluations_total",
                                  "Evaluations of the playbook set.")),
      rule_unknown_results(NewCounter(
          r, "railwatch_rule_unknown_results_total",
          "Playbook results held back, neither firing nor resolving, because a window they "
          "read did not hold its data yet (a daemon or an agent that had just started).")),
      rule_evaluation_seconds(NewGauge(r, "railwatch_rule_evaluation_duration_seconds",
                                       "Duration of the latest evaluation of all playbooks.")),
      playbooks_loaded(NewGauge(r, "railwatch_playbooks_loaded", "Enabled playbooks.")),
      diagnoses_fired(prometheus::BuildCounter()
                          .Name("railwatch_diagnoses_fired_total")
                          .Help("Diagnoses that started firing, by playbook and severity.")
                          .Register(r)) {
  // Every reason the ingest service counts starts at 0, so that rate() and alert rules see a
  // series before the first error.
  for (const char* reason : kCounterTrapReasons) counter_traps.Add({{"reason", reason}});
  for (size_t i = 0; i < kIngestErrorCount; ++i) {
    ingest_errors.Add({{"reason", std::string(IngestErrorName(static_cast<IngestError>(i)))}});
  }
  prometheus::BuildGauge()
      .Name("railwatch_build_info")
      .Help("Always 1; the version label says which railwatchd is running.")
      .Register(r)
      .Add({{"version", kVersion}})
      .Set(1);
}

void DaemonMetrics::StartCounting(const std::vector<Playbook>& playbooks) {
  for (const Playbook& pb : playbooks) {
    if (pb.enabled) {
      diagnoses_fired.Add({{"playbook", pb.name}, {"severity", SeverityName(pb.severity)}});
    }
  }
}

void DaemonMetrics::Refresh(const SeriesStore& store, const Engine& engine,
                            const IngestStats& ingest) {
  absl::MutexLock lock(&mu_);
  // Each counter moves by what its owner counted since the last scrape.
  auto advance = [](prometheus::Counter& counter, const std::atomic<uint64_t>& now,
                    uint64_t& seen) {
    const uint64_t v = now.load(std::memory_order_relaxed);
    counter.Increment(static_cast<double>(v - seen));
    seen = v;
  };
  advance(samples_ingested, ingest.samples, seen_ingest_[0]);
  advance(batches_ingested, ingest.batches, seen_ingest_[1]);
  advance(events_ingested, ingest.events, seen_ingest_[2]);
  advance(streams_opened, ingest.streams_opened, seen_ingest_[3]);
  advance(streams_aborted, ingest.streams_aborted, seen_ingest_[4]);
  for (size_t i = 0; i < kIngestErrorCount; ++i) {
    advance(ingest_errors.Add(
                {{"reason", std::string(IngestErrorName(static_cast<IngestError>(i)))}}),
            ingest.errors[i], seen_ingest_errors_[i]);
  }
  SeriesStore::Stats s = store.stats();
  series.Set(static_cast<double>(store.size()));
  samples_out_of_order.Increment(static_cast<double>(s.samples_out_of_order - seen_out_of_order_));
  seen_out_of_order_ = s.samples_out_of_order;
  counter_resets.Increment(static_cast<double>(s.counter_resets - seen_resets_));
  seen_resets_ = s.counter_resets;
  const uint64_t traps[] = {s.counter_resets, s.counter_wraps, s.counter_steps_above_line_rate,
                            s.counter_values_invalid};
  for (size_t i = 0; i < std::size(traps); ++i) {
    counter_traps.Add({{"reason", kCounterTrapReasons[i]}})
        .Increment(static_cast<double>(traps[i] - seen_traps_[i]));
    seen_traps_[i] = traps[i];
  }
  Engine::Stats e = engine.stats();
  rule_evaluations.Increment(static_cast<double>(e.evaluations - seen_evaluations_));
  seen_evaluations_ = e.evaluations;
  rule_unknown_results.Increment(static_cast<double>(e.unknown_results - seen_unknown_results_));
  seen_unknown_results_ = e.unknown_results;
  rule_evaluation_seconds.Set(e.last_duration_seconds);
}

}  // namespace railwatch
