#include "store/counter_math.h"

#include <limits>

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

CounterAdvance AdvanceCounter(double prev, double cur, uint32_t width_bits, double max_increase) {
  if (!(cur >= 0 && cur <= std::numeric_limits<double>::max())) {  // NaN, negative, infinite
    return {0, CounterTrap::kInvalidValue};
  }
  if (cur >= prev) {  // the usual step
    const double increase = CounterDifference(prev, cur);
    if (increase <= max_increase) return {increase, CounterTrap::kNone};
    return {0, CounterTrap::kAboveLineRate};
  }
  CounterAdvance reading;
  if (IsWholeUint64(prev) && IsWholeUint64(cur)) {
    // In integers: a difference of two counters beyond 2^53 is exact.
    const CounterStep step =
        CounterDelta(static_cast<uint64_t>(prev), static_cast<uint64_t>(cur), width_bits);
    reading.increase = static_cast<double>(step.delta);
    reading.trap = step.wrapped ? CounterTrap::kWrap
                   : step.reset ? CounterTrap::kReset
                                : CounterTrap::kNone;
  } else {  // a fractional counter (seconds) that went down
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
