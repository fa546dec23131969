#pragma once

// An Emitter that counts what a collector sends, as the agent's batch builder would take it:
// what the IB scan benchmarks measure the collector against, without a batch or a stream.

#include <cstdint>
#include <string_view>

#include "collectors/collector.h"

namespace railwatch::bench {

class CountingEmitter final : public Emitter {
 public:
  uint32_t DefineSeries(std::string_view, MetricKind, Labels, uint32_t) override { return next_++; }
  void Counter(uint32_t, uint64_t, int64_t) override { ++points; }
  void Gauge(uint32_t, double, int64_t) override { ++points; }
  void Event(EventRecord) override {}
  uint64_t points = 0;

 private:
  uint32_t next_ = 0;
};

}  // namespace railwatch::bench
