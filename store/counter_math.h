#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

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

// Whether v is a whole number a uint64 holds. A round trip through uint64 rather than
// std::floor, a libm call on baseline x86-64: this runs for every counter sample appended.
inline bool IsWholeUint64(double v) {
  return v >= 0 && v < 18446744073709551616.0 &&
         static_cast<double>(static_cast<uint64_t>(v)) == v;
}

// to - from, exact for whole numbers beyond 2^53 (a difference of two uint64 readings).
inline double CounterDifference(double from, double to) {
  if (to >= from && IsWholeUint64(from) && IsWholeUint64(to)) {
    return static_cast<double>(static_cast<uint64_t>(to) - static_cast<uint64_t>(from));
  }
  return to - from;
}

// One step of a gauge read as a counter (increase() or rate() of a gauge), as Prometheus reads
// it: any decrease is a reset, after which the gauge counted up from zero to `cur`. Gauges have
// no width, so nothing wraps, and their values may be negative or fractional.
inline double GaugeStepAsCounter(double prev, double cur) { return cur >= prev ? cur - prev : cur; }

// Why a counter step was not taken as a plain increase (docs/STORE.md, "Counter semantics").
// The names are the `reason` label of railwatch_store_traps_total.
enum class CounterTrap : uint8_t {
  kNone,
  kReset,          // went down, not a wrap: counted up from 0 since (increase = the reading)
  kWrap,           // passed 2^width_bits: increase = 2^width - prev + cur
  kAboveLineRate,  // every reading of the step implies more than the port can carry:
                   // rejected, the reading is the new baseline, no increase
  kInvalidValue,   // NaN, infinite or negative: the reading is dropped
};
inline constexpr int kCounterTrapKinds = 5;
std::string_view CounterTrapName(CounterTrap trap);

struct CounterAdvance {
  double increase = 0;
  CounterTrap trap = CounterTrap::kNone;
};

// The increase of a counter read `prev` and now `cur` (raw readings, both finite and >= 0),
// never above `max_increase` (what the port can physically count in the step; infinity when
// nothing bounds it). Of the readings of a decrease, a wrap is preferred when it fits under
// the bound, else a reset (a reset mistaken for a wrap that would exceed the bound is a
// reset); a step that fits no reading is rejected (kAboveLineRate, increase 0): a NIC
// replaced by one whose counter starts high, a corrupted reading.
CounterAdvance AdvanceCounter(double prev, double cur, uint32_t width_bits,
                              double max_increase = std::numeric_limits<double>::infinity());

}  // namespace railwatch
