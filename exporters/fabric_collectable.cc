#include "exporters/fabric_collectable.h"

#include <map>

#include "common/vocabulary.h"

namespace railwatch {

std::vector<prometheus::MetricFamily> StoreCollectable::Collect() const {
  const int64_t oldest = clock_.NowNanos() - absl::ToInt64Nanoseconds(stale_after_);
  // Ordered by name so that the exposition is stable (golden files, diffs).
  std::map<std::string, prometheus::MetricFamily> families;
  store_.ForEachLatest([&](SeriesRef, const SeriesMeta& meta, const Sample& sample) {
    if (sample.time_unix_nano < oldest) return;
    const ExposedSeries exposed = ExposedAs(meta.name);
    auto [it, inserted] = families.try_emplace(std::string(exposed.name));
    prometheus::MetricFamily& family = it->second;
    if (inserted) {
      family.name = std::string(exposed.name);
      const std::string_view help = MetricHelp(meta.name);
      family.help = help.empty() ? meta.help : std::string(help);
      family.type = meta.kind == MetricKind::kCounter ? prometheus::MetricType::Counter
                                                      : prometheus::MetricType::Gauge;
    }
    prometheus::ClientMetric& m = family.metric.emplace_back();
    m.label.reserve(meta.labels.size());
    for (const Label& l : meta.labels) m.label.push_back({l.name, l.value});
    if (meta.kind == MetricKind::kCounter)
      m.counter.value = sample.value * exposed.scale;
    else
      m.gauge.value = sample.value * exposed.scale;
  });
  std::vector<prometheus::MetricFamily> out;
  out.reserve(families.size());
  for (auto& [name, family] : families) out.push_back(std::move(family));
  return out;
}

namespace {

// railwatch_diagnoses{playbook,severity,state}: every enabled playbook, pending and firing,
// zeros included, so that a dashboard's timeline has a series from the start.
prometheus::MetricFamily CountByState(const std::vector<AlertRecord>& alerts,
                                      const std::vector<Playbook>& playbooks) {
  std::map<std::pair<std::string, AlertState>, double> counts;  // (playbook, state)
  for (const Playbook& pb : playbooks) {
    if (!pb.enabled) continue;
    counts[{pb.name, AlertState::kPending}] = 0;
    counts[{pb.name, AlertState::kFiring}] = 0;
  }
  for (const AlertRecord& a : alerts) {
    if (a.state == AlertState::kPending || a.state == AlertState::kFiring) {
      counts[{a.playbook, a.state}] += 1;
    }
  }
  std::map<std::string, std::string> severity;
  for (const Playbook& pb : playbooks) severity[pb.name] = SeverityName(pb.severity);
  prometheus::MetricFamily family;
  family.name = "railwatch_diagnoses";
  family.help = "Diagnoses now pending or firing, by playbook, severity and state.";
  family.type = prometheus::MetricType::Gauge;
  for (const auto& [key, n] : counts) {
    prometheus::ClientMetric& m = family.metric.emplace_back();
    m.label = {{"playbook", key.first},
               {"severity", severity[key.first]},
               {"state", key.second == AlertState::kFiring ? "firing" : "pending"}};
    m.gauge.value = n;
  }
  return family;
}

}  // namespace

std::vector<prometheus::MetricFamily> DiagnosisCollectable::Collect() const {
  prometheus::MetricFamily family;
  family.name = "railwatch_diagnosis_active";
  family.help = "1 for each firing diagnosis, labelled with its playbook, severity and culprit.";
  family.type = prometheus::MetricType::Gauge;
  const std::vector<AlertRecord> alerts = engine_.List();
  for (const AlertRecord& a : alerts) {
    if (!a.firing()) continue;
    prometheus::ClientMetric& m = family.metric.emplace_back();
    m.label.push_back({"playbook", a.playbook});
    m.label.push_back({"severity", SeverityName(a.severity)});
    for (const Label& l : a.culprit) {
      if (l.name == "playbook" || l.name == "severity") continue;
      // `job` is Prometheus' label for the scrape job; the training job is `training_job`.
      m.label.push_back({l.name == "job" ? "training_job" : l.name, l.value});
    }
    m.gauge.value = 1;
  }
  return {std::move(family), CountByState(alerts, engine_.playbooks())};
}

}  // namespace railwatch
