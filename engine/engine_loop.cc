// The evaluation loop: the engine's thread, pokes and their hold-off, and one evaluation
// (conditions in parallel, transitions applied in order, listeners told, state saved).
#include <algorithm>
#include <chrono>

#include "engine/engine.h"

namespace railwatch {

int Engine::threads() const { return pool_->threads(); }

absl::Duration Engine::PokeHoldOff(const Options& options, absl::Duration last_duration,
                                   bool event) {
  if (event) return options.min_interval;
  return std::max(options.min_interval, last_duration * options.poke_hold_factor);
}

Engine::~Engine() { Stop(); }

void Engine::AddListener(DiagnosisListener* listener) {
  absl::MutexLock lock(&mu_);
  listeners_.push_back(listener);
}

void Engine::Start() { thread_ = std::thread([this] { Run(); }); }

void Engine::Stop() {
  {
    absl::MutexLock lock(&wake_mu_);
    stopping_ = true;
  }
  if (!thread_.joinable()) return;
  thread_.join();
  // The newest evidence, for the restart that may follow.
  absl::MutexLock eval_lock(&eval_mu_);
  SaveState(/*urgent=*/true, /*changed=*/true, clock_.NowNanos());
}

void Engine::Poke() {
  absl::MutexLock lock(&wake_mu_);
  poked_ = true;
}

bool Engine::EventsArrived() {
  if (sources_.events == nullptr) return false;
  const uint64_t appended = sources_.events->stats().appended;
  const bool arrived = appended != events_seen_;
  events_seen_ = appended;
  return arrived;
}

void Engine::Run() {
  absl::Time next_tick = absl::Now();
  absl::Time last_end = absl::InfinitePast();
  absl::Duration last_duration = absl::ZeroDuration();
  while (true) {
    {
      absl::MutexLock lock(&wake_mu_);
      // Until the tick, or until a poke's hold-off after the last evaluation has passed.
      std::optional<absl::Time> poke_at;
      auto woken = [this]() ABSL_SHARED_LOCKS_REQUIRED(wake_mu_) { return poked_ || stopping_; };
      while (true) {
        wake_mu_.AwaitWithDeadline(absl::Condition(&woken),
                                   poke_at ? std::min(*poke_at, next_tick) : next_tick);
        if (stopping_) return;
        if (poked_) {
          poked_ = false;
          const absl::Time at =
              last_end + PokeHoldOff(options_, last_duration, EventsArrived());
          poke_at = poke_at ? std::min(*poke_at, at) : at;
        }
        const absl::Time now = absl::Now();
        if (now >= next_tick || (poke_at && now >= *poke_at)) break;
      }
      poked_ = false;
    }
    const absl::Time start = absl::Now();
    EvaluateOnce();
    last_end = absl::Now();
    last_duration = last_end - start;
    next_tick = last_end + options_.interval;
  }
}

void Engine::EvaluateOnce() {
  absl::MutexLock eval_lock(&eval_mu_);
  const auto started = std::chrono::steady_clock::now();
  const int64_t now = clock_.NowNanos();
  // Conditions read only the stores and the fabric map: in parallel, without the engine's
  // lock (queries go on meanwhile).
  std::vector<std::vector<Candidate>> candidates(order_.size());
  pool_->ParallelFor(schedule_.size(), [&](size_t k) {
    const size_t i = schedule_[k];
    const auto t0 = std::chrono::steady_clock::now();
    candidates[i] = Candidates(*order_[i], now);
    cost_seconds_[i] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  });
  std::stable_sort(schedule_.begin(), schedule_.end(),
                   [&](size_t a, size_t b) { return cost_seconds_[a] > cost_seconds_[b]; });
  std::vector<std::pair<Transition, v1::Diagnosis>> transitions;
  std::vector<DiagnosisListener*> listeners;
  {
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < order_.size(); ++i) {
      EvaluatePlaybook(*order_[i], now, std::move(candidates[i]), transitions);
    }
    ++stats_.evaluations;
    stats_.last_duration_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    listeners = listeners_;
  }
  // Saved before anyone is told: a crash in between restores the diagnosis and takes it up
  // again rather than paging it a second time under a new id.
  bool urgent = false;
  for (const auto& [what, d] : transitions) {
    urgent |= what == Transition::kFiring || what == Transition::kResolved;
  }
  SaveState(urgent, /*changed=*/!transitions.empty(), now);
  // Listeners run outside the lock so that they may query the engine.
  for (const auto& [what, d] : transitions) {
    for (DiagnosisListener* l : listeners) {
      switch (what) {
        case Transition::kPending: l->OnPending(d); break;
        case Transition::kFiring: l->OnFiring(d); break;
        case Transition::kResolved: l->OnResolved(d); break;
        case Transition::kPendingCleared: l->OnPendingCleared(d); break;
      }
    }
  }
}

}  // namespace railwatch
