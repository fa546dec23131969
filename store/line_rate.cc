#include "store/line_rate.h"

#include <limits>

#include "common/vocabulary.h"

namespace railwatch {

CounterBound CounterBoundOf(std::string_view name) {
  const MetricSpec* spec = FindMetric(name);
  if (spec == nullptr || spec->kind != MetricKind::kCounter) return CounterBound::kNone;
  const std::string_view unit = spec->unit;
  if (unit == "bytes") return CounterBound::kBytes;
  if (unit == "bits") return CounterBound::kBits;
  if (unit == "microseconds") return CounterBound::kMicroseconds;
  if (unit == "packets" || unit == "frames") {
    return name.starts_with("fabric_rdma_") ? CounterBound::kRdmaPackets
                                            : CounterBound::kEthernetFrames;
  }
  return CounterBound::kNone;
}

double MaxCounterRate(CounterBound bound, double line_rate_bytes_per_second) {
  const double rate = line_rate_bytes_per_second > 0 ? line_rate_bytes_per_second
                                                     : kDefaultLineRateBytesPerSecond;
  switch (bound) {
    case CounterBound::kNone: return std::numeric_limits<double>::infinity();
    case CounterBound::kBytes: return rate;
    case CounterBound::kBits: return rate * 8;
    case CounterBound::kEthernetFrames: return rate / kMinEthernetFrameWireBytes;
    case CounterBound::kRdmaPackets: return rate / kMinInfinibandPacketBytes;
    case CounterBound::kMicroseconds: return 1e6;
  }
  return std::numeric_limits<double>::infinity();
}

}  // namespace railwatch
