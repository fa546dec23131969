#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collectors/collector.h"

namespace railwatch::testing {

// An Emitter for collector tests: records definitions, the latest value of each series by
// "name{labels}" (FormatSeries), and every event in order.
class RecordingEmitter final : public Emitter {
 public:
  uint32_t DefineSeries(std::string_view name, MetricKind kind, Labels labels,
                        uint32_t width_bits) override;
  void Counter(uint32_t id, uint64_t value, int64_t time_unix_nano) override;
  void Gauge(uint32_t id, double value, int64_t time_unix_nano) override;
  void Event(EventRecord event) override { events.push_back(std::move(event)); }

  std::optional<uint64_t> Get(const std::string& key) const;
  std::optional<double> GetGauge(const std::string& key) const;
  // True when some defined series has label device="<device>".
  bool HasDevice(const std::string& device) const;
  // Events of one kind, in emission order.
  std::vector<EventRecord> EventsOfKind(const std::string& kind) const;

  std::map<std::string, uint32_t> ids;
  std::vector<std::string> names;
  std::vector<MetricKind> kinds;
  std::vector<uint32_t> widths;
  std::map<std::string, uint64_t> counters;
  std::map<std::string, double> gauges;
  std::vector<EventRecord> events;
  size_t points = 0;
};

// The value of attribute `key` of `event`, or "" when it has none.
std::string Attribute(const EventRecord& event, const std::string& key);

}  // namespace railwatch::testing
