#pragma once

#include <cstdint>
#include <random>

#include "absl/time/time.h"

namespace railwatch {

// Capped exponential backoff with jitter, after gRPC's connection-backoff algorithm:
// each delay is the current base times a random factor in [1 - jitter, 1 + jitter], and the
// base grows by `multiplier` up to `max`. Reset() after a success.
class Backoff {
 public:
  struct Options {
    absl::Duration initial = absl::Milliseconds(200);
    absl::Duration max = absl::Seconds(30);
    double multiplier = 1.6;
    double jitter = 0.2;
  };

  explicit Backoff(Options options, uint64_t seed = std::random_device{}());

  absl::Duration Next();
  void Reset();
  absl::Duration current_base() const { return base_; }

 private:
  Options options_;
  absl::Duration base_;
  std::mt19937_64 rng_;
};

}  // namespace railwatch
