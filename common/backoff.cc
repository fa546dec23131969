#include "common/backoff.h"

#include <algorithm>

namespace railwatch {

Backoff::Backoff(Options options, uint64_t seed)
    : options_(options), base_(options.initial), rng_(seed) {}

absl::Duration Backoff::Next() {
  std::uniform_real_distribution<double> dist(1.0 - options_.jitter, 1.0 + options_.jitter);
  absl::Duration delay = std::min(base_ * dist(rng_), options_.max);
  base_ = std::min(base_ * options_.multiplier, options_.max);
  return delay;
}

void Backoff::Reset() { base_ = options_.initial; }

}  // namespace railwatch
