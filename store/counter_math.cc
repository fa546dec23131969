#include "store/counter_math.h"

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

}  // namespace railwatch
