#include "store/line_rate.h"

#include <limits>

namespace railwatch {

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
