#pragma once

#include <atomic>
#include <cstdint>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace railwatch {

// Wall-clock time, injectable so that engines and stores can be tested without sleeping.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
  int64_t NowNanos() const { return absl::ToUnixNanos(Now()); }
};

class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  static RealClock& Get() {
    static RealClock clock;
    return clock;
  }
};

class FakeClock final : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1'700'000'000))
      : nanos_(absl::ToUnixNanos(start)) {}
  absl::Time Now() const override { return absl::FromUnixNanos(nanos_.load()); }
  void Advance(absl::Duration d) { nanos_ += absl::ToInt64Nanoseconds(d); }
  void Set(absl::Time t) { nanos_ = absl::ToUnixNanos(t); }

 private:
  std::atomic<int64_t> nanos_;
};

}  // namespace railwatch
