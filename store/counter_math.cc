#include "store/counter_math.h"

#include <cmath>

namespace railwatch {

CounterStep CounterDelta(uint64_t prev, uint64_t cur, uint32_t width_bits) {
  if (cur >= prev) return {cur - prev, false, false};
  if (width_bits > 0 && width_bits < 64) {
    const uint64_t range = uint64_t{1} << width_bits;
    if (prev < range && cur < range) {
      const uint64_t wrapped = range - prev + cur;
      if (wrapped < range / 2) return {wrapped, false, true};
    }
  }
  return {cur, true, false};
}

std::string_view CounterTrapName(CounterTrap trap) {
  switch (trap) {
    case CounterTrap::kNone: return "none";
    case CounterTrap::kReset: return "reset";
    case CounterTrap::kWrap: return "wrap";
    case CounterTrap::kAboveLineRate: return "above_line_rate";
    case CounterTrap::kInvalidValue: return "invalid_value";
  }
  return "none";
}

namespace {

// 2^64 as a double: readings at or above it are not uint64.
constexpr double kTwoTo64 = 18446744073709551616.0;

bool IsWholeUint64(double v) { return v >= 0 && v < kTwoTo64 && std::floor(v) == v; }

}  // namespace

double CounterDifference(double from, double to) {
  if (IsWholeUint64(from) && IsWholeUint64(to) && to >= from) {
    return static_cast<double>(static_cast<uint64_t>(to) - static_cast<uint64_t>(from));
  }
  return to - from;
}

CounterAdvance AdvanceCounter(double prev, double cur, uint32_t width_bits, double max_increase) {
  if (!std::isfinite(cur) || cur < 0) return {0, CounterTrap::kInvalidValue};
  CounterAdvance reading;
  if (IsWholeUint64(prev) && IsWholeUint64(cur)) {
    // In integers: a difference of two counters beyond 2^53 is exact.
    const CounterStep step =
        CounterDelta(static_cast<uint64_t>(prev), static_cast<uint64_t>(cur), width_bits);
    reading.increase = static_cast<double>(step.delta);
    reading.trap = step.wrapped ? CounterTrap::kWrap
                   : step.reset ? CounterTrap::kReset
                                : CounterTrap::kNone;
  } else if (cur >= prev) {  // a fractional counter (seconds)
    reading.increase = CounterDifference(prev, cur);
  } else {
    reading = {cur, CounterTrap::kReset};
  }
  if (reading.increase <= max_increase) return reading;
  // A wrap too large to be true may be a reset to a small value.
  if (reading.trap == CounterTrap::kWrap && cur <= max_increase) {
    return {cur, CounterTrap::kReset};
  }
  return {0, CounterTrap::kAboveLineRate};
}

}  // namespace railwatch
