#include "engine/scheduler.h"

#include <algorithm>
#include <chrono>
#include <optional>

namespace railwatch {

EvaluationScheduler::EvaluationScheduler(Timing timing, std::function<void()> evaluate,
                                         std::function<bool()> events_arrived)
    : timing_(timing),
      evaluate_(std::move(evaluate)),
      events_arrived_(std::move(events_arrived)) {}

EvaluationScheduler::~EvaluationScheduler() { Stop(); }

absl::Duration EvaluationScheduler::PokeHoldOff(const Timing& timing,
                                                absl::Duration last_duration, bool event) {
  if (event) return timing.min_interval;
  return std::max(timing.min_interval, last_duration * timing.poke_hold_factor);
}

void EvaluationScheduler::Start() { thread_ = std::thread([this] { Run(); }); }

bool EvaluationScheduler::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (!thread_.joinable()) return false;
  thread_.join();
  return true;
}

void EvaluationScheduler::Poke() {
  absl::MutexLock lock(&mu_);
  poked_ = true;
}

void EvaluationScheduler::Run() {
  absl::Time next_tick = absl::Now();
  absl::Time last_end = absl::InfinitePast();
  absl::Duration last_duration = absl::ZeroDuration();
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      // Until the tick, or until a poke's hold-off after the last evaluation has passed.
      std::optional<absl::Time> poke_at;
      auto woken = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return poked_ || stopping_; };
      while (true) {
        mu_.AwaitWithDeadline(absl::Condition(&woken),
                              poke_at ? std::min(*poke_at, next_tick) : next_tick);
        if (stopping_) return;
        if (poked_) {
          poked_ = false;
          const absl::Time at =
              last_end + PokeHoldOff(timing_, last_duration, events_arrived_());
          poke_at = poke_at ? std::min(*poke_at, at) : at;
        }
        const absl::Time now = absl::Now();
        if (now >= next_tick || (poke_at && now >= *poke_at)) break;
      }
      poked_ = false;
    }
    const absl::Time start = absl::Now();
    evaluate_();
    last_end = absl::Now();
    last_duration = last_end - start;
    next_tick = last_end + timing_.interval;
  }
}

ConditionSchedule::ConditionSchedule(int threads, size_t n) {
  if (threads <= 0) {
    threads = std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 4);
  }
  pool_ = std::make_unique<WorkerPool>(std::min<int>(threads, std::max<size_t>(n, 1)));
  order_.resize(n);
  for (size_t i = 0; i < n; ++i) order_[i] = i;
  cost_seconds_.assign(n, 0);
}

void ConditionSchedule::Run(absl::FunctionRef<void(size_t)> fn) {
  pool_->ParallelFor(order_.size(), [&](size_t k) {
    const size_t i = order_[k];
    const auto t0 = std::chrono::steady_clock::now();
    fn(i);
    cost_seconds_[i] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  });
  std::stable_sort(order_.begin(), order_.end(),
                   [&](size_t a, size_t b) { return cost_seconds_[a] > cost_seconds_[b]; });
}

}  // namespace railwatch
