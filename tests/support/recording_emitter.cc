#include "support/recording_emitter.h"

#include "absl/strings/str_cat.h"

namespace railwatch::testing {

uint32_t RecordingEmitter::DefineSeries(std::string_view name, MetricKind kind, Labels labels,
                                        uint32_t width_bits) {
  NormalizeLabels(labels);
  std::string key = FormatSeries(name, labels);
  auto [it, inserted] = ids.try_emplace(key, static_cast<uint32_t>(names.size()));
  if (inserted) {
    names.push_back(key);
    kinds.push_back(kind);
    widths.push_back(width_bits);
  }
  return it->second;
}

void RecordingEmitter::Counter(uint32_t id, uint64_t value, int64_t) {
  counters[names.at(id)] = value;
  ++points;
}

void RecordingEmitter::Gauge(uint32_t id, double value, int64_t) {
  gauges[names.at(id)] = value;
  ++points;
}

std::optional<uint64_t> RecordingEmitter::Get(const std::string& key) const {
  auto it = counters.find(key);
  if (it == counters.end()) return std::nullopt;
  return it->second;
}

std::optional<double> RecordingEmitter::GetGauge(const std::string& key) const {
  auto it = gauges.find(key);
  if (it == gauges.end()) return std::nullopt;
  return it->second;
}

bool RecordingEmitter::HasDevice(const std::string& device) const {
  const std::string needle = absl::StrCat("device=\"", device, "\"");
  for (const auto& n : names) {
    if (n.find(needle) != std::string::npos) return true;
  }
  return false;
}

std::vector<EventRecord> RecordingEmitter::EventsOfKind(const std::string& kind) const {
  std::vector<EventRecord> out;
  for (const EventRecord& e : events) {
    if (e.kind == kind) out.push_back(e);
  }
  return out;
}

std::string Attribute(const EventRecord& event, const std::string& key) {
  for (const auto& [k, v] : event.attributes) {
    if (k == key) return v;
  }
  return "";
}

}  // namespace railwatch::testing
