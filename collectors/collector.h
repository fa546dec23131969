#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "common/labels.h"
#include "common/vocabulary.h"

namespace railwatch {

// Something that happened at one instant (a carrier going down, an NCCL error line), as
// opposed to a counter sampled every cycle. Events are not interned: each carries its labels.
struct EventRecord {
  // Dotted kind, e.g. "link.carrier_down", "nccl.ib_completion_error".
  std::string kind;
  // When it happened, as precisely as the source says (kernel notification, log timestamp);
  // when the source has no time, when the agent read it.
  int64_t time_unix_nano = 0;
  // Identifying, bounded labels (interface, device, port); the emitter adds host.
  Labels labels;
  // Details that are not used for grouping, as plain strings.
  std::vector<std::pair<std::string, std::string>> attributes;
  // The raw line or message it was parsed from, where there is one.
  std::string raw;
};

// Where a collector puts what it reads. A collector defines each series once (when it finds
// the hardware) and then emits points by id, so the per-cycle path copies no strings.
class Emitter {
 public:
  virtual ~Emitter() = default;
  // Returns a stable id for (name, labels). Defining the same series again returns the same id.
  // The emitter adds the labels every series of this agent carries (host).
  virtual uint32_t DefineSeries(std::string_view name, MetricKind kind, Labels labels,
                                uint32_t width_bits = 0) = 0;
  virtual void Counter(uint32_t series_id, uint64_t value, int64_t time_unix_nano) = 0;
  virtual void Gauge(uint32_t series_id, double value, int64_t time_unix_nano) = 0;
  virtual void Event(EventRecord event) = 0;
};

// One source of host or switch signals. Collect() is called once per interval from a single
// thread. Hardware that is not present is not an error: Collect() returns OK and emits nothing.
// An error status means the collector failed this cycle; the agent reports it and goes on.
class Collector {
 public:
  virtual ~Collector() = default;
  virtual std::string_view name() const = 0;
  virtual absl::Status Collect(Emitter& emitter) = 0;
};

}  // namespace railwatch
