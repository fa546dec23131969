#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "collectors/collector.h"
#include "gnmi/switch_collector.h"

namespace railwatch::testing {

// An Emitter that keeps every point (not only the latest), so tests can check that no update
// was lost and that each kept its notification's timestamp.
class PointLog final : public Emitter {
 public:
  struct Definition {
    std::string name;
    MetricKind kind;
    Labels labels;
  };
  struct Point {
    uint32_t id;
    uint64_t counter;
    double gauge;
    int64_t time_unix_nano;
  };

  uint32_t DefineSeries(std::string_view name, MetricKind kind, Labels labels,
                        uint32_t) override;
  void Counter(uint32_t id, uint64_t value, int64_t t) override {
    points.push_back({id, value, 0, t});
  }
  void Gauge(uint32_t id, double value, int64_t t) override { points.push_back({id, 0, value, t}); }
  void Event(EventRecord event) override { events.push_back(std::move(event)); }

  // Points of series `name` whose labels include every label of `subset`, in order.
  std::vector<Point> Of(std::string_view name, const Labels& subset = {}) const;
  // Ids of the series named `name` whose labels include `subset`.
  std::vector<uint32_t> SeriesOf(std::string_view name, const Labels& subset = {}) const;

  std::vector<Definition> definitions;
  std::vector<Point> points;
  std::vector<EventRecord> events;
};

// The shipped profiles (profiles/gnmi).
std::vector<GnmiProfile> ShippedProfiles();

// A target entry for `address` with the shipped openconfig profile and a fast backoff, so
// that reconnect tests do not wait for production delays.
GnmiTargetConfig TestTarget(const std::string& name, const std::string& address);
GnmiChannelOptions FastChannel();

// Calls collector.Collect(log) every 5 ms until `done()` or `timeout` (a wait, not a speed
// assertion); returns done().
bool CollectUntil(GnmiSwitchCollector& collector, PointLog& log,
                  const std::function<bool()>& done, absl::Duration timeout = absl::Seconds(20));

// /proc/self figures for leak checks.
int ThreadCount();
int OpenFdCount();
long RssKb();

}  // namespace railwatch::testing
