#pragma once

#include <cstdint>

namespace railwatch {

// How a counter moved between two consecutive readings.
struct CounterStep {
  uint64_t delta = 0;
  bool reset = false;    // the counter went back (driver reload, NIC replaced)
  bool wrapped = false;  // the counter passed 2^width_bits and started again
};

// The increase from `prev` to `cur` for a counter of `width_bits` (0 or 64: 64-bit).
//
// A decrease is a wrap when the counter has a width below 64 and the wrapped distance
// (2^width - prev + cur) is under half the range: a counter that was near its top and is now
// near its bottom. Any other decrease is a reset, and the increase is `cur` (the counter
// counted up from zero since the reset), as in Prometheus.
CounterStep CounterDelta(uint64_t prev, uint64_t cur, uint32_t width_bits);

}  // namespace railwatch
