#include "agent/batch_builder.h"

namespace railwatch {

Labels SeriesRegistry::WithCommonLabels(Labels labels) const {
  labels.insert(labels.end(), common_labels_.begin(), common_labels_.end());
  NormalizeLabels(labels);
  return labels;
}

uint32_t SeriesRegistry::Define(std::string_view name, MetricKind kind, Labels labels,
                                uint32_t width_bits) {
  return DefineNormalized(name, kind, WithCommonLabels(std::move(labels)), width_bits);
}

uint32_t SeriesRegistry::Intern(const v1::SeriesDefinition& definition) {
  Labels labels;
  labels.reserve(definition.labels_size());
  for (const v1::Label& l : definition.labels()) labels.push_back({l.name(), l.value()});
  NormalizeLabels(labels);
  const MetricKind kind = definition.kind() == v1::SERIES_KIND_COUNTER ? MetricKind::kCounter
                                                                        : MetricKind::kGauge;
  return DefineNormalized(definition.name(), kind, std::move(labels), definition.width_bits());
}

uint32_t SeriesRegistry::DefineNormalized(std::string_view name, MetricKind kind, Labels labels,
                                          uint32_t width_bits) {
  const uint64_t fp = SeriesFingerprint(name, labels);
  absl::MutexLock lock(&mu_);
  auto& ids = by_fingerprint_[fp];
  for (uint32_t id : ids) {
    const v1::SeriesDefinition& d = definitions_[id];
    if (d.name() != name || d.labels_size() != static_cast<int>(labels.size())) continue;
    bool same = true;
    for (int i = 0; same && i < d.labels_size(); ++i) {
      same = d.labels(i).name() == labels[i].name && d.labels(i).value() == labels[i].value;
    }
    if (same) return id;
  }
  const auto id = static_cast<uint32_t>(definitions_.size());
  v1::SeriesDefinition& d = definitions_.emplace_back();
  d.set_id(id);
  d.set_name(std::string(name));
  d.set_kind(kind == MetricKind::kCounter ? v1::SERIES_KIND_COUNTER : v1::SERIES_KIND_GAUGE);
  d.set_width_bits(width_bits);
  for (Label& l : labels) {
    v1::Label* pl = d.add_labels();
    pl->set_name(std::move(l.name));
    pl->set_value(std::move(l.value));
  }
  if (const MetricSpec* spec = FindMetric(name)) d.set_help(std::string(spec->help));
  ids.push_back(id);
  return id;
}

size_t SeriesRegistry::size() const {
  absl::MutexLock lock(&mu_);
  return definitions_.size();
}

size_t SeriesRegistry::AppendDefinitions(size_t from, v1::Batch& batch) const {
  absl::MutexLock lock(&mu_);
  for (size_t id = from; id < definitions_.size(); ++id) {
    *batch.add_definitions() = definitions_[id];
  }
  return definitions_.size();
}

void BatchBuilder::Counter(uint32_t series_id, uint64_t value, int64_t t) {
  v1::Point* p = batch_->add_points();
  p->set_series_id(series_id);
  p->set_time_unix_nano(t);
  p->set_counter(value);
}

void BatchBuilder::Gauge(uint32_t series_id, double value, int64_t t) {
  v1::Point* p = batch_->add_points();
  p->set_series_id(series_id);
  p->set_time_unix_nano(t);
  p->set_gauge(value);
}

void BatchBuilder::Event(EventRecord event) {
  v1::Event* e = batch_->add_events();
  e->set_kind(std::move(event.kind));
  e->set_time_unix_nano(event.time_unix_nano);
  Labels labels = registry_.WithCommonLabels(std::move(event.labels));
  for (Label& l : labels) {
    v1::Label* pl = e->add_labels();
    pl->set_name(std::move(l.name));
    pl->set_value(std::move(l.value));
  }
  auto& attributes = *e->mutable_attributes();
  for (auto& [key, value] : event.attributes) attributes[std::move(key)] = std::move(value);
  e->set_raw(std::move(event.raw));
}

std::shared_ptr<v1::Batch> BatchBuilder::Take(std::shared_ptr<v1::Batch> next) {
  std::shared_ptr<v1::Batch> out = std::move(batch_);
  out->set_sequence(next_sequence_++);
  batch_ = next ? std::move(next) : std::make_shared<v1::Batch>();
  batch_->Clear();
  return out;
}

}  // namespace railwatch
