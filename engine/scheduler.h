#pragma once

// When the engine evaluates and on which threads: the evaluation thread (every interval, and
// soon after a poke: new data for a series or event a playbook reads), and the pool that runs
// the playbooks' conditions in parallel, the costliest of the last evaluation first.

#include <cstddef>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "engine/worker_pool.h"

namespace railwatch {

class EvaluationScheduler {
 public:
  struct Timing {
    absl::Duration interval = absl::Seconds(1);
    absl::Duration min_interval = absl::Milliseconds(50);
    double poke_hold_factor = 8;
  };

  // `evaluate` runs on the scheduler's thread; `events_arrived` says whether a poke came with
  // a new event (then it is served after min_interval, not the longer series hold-off).
  EvaluationScheduler(Timing timing, std::function<void()> evaluate,
                      std::function<bool()> events_arrived);
  ~EvaluationScheduler();

  void Start();
  // Joins the thread; false when it was not running.
  bool Stop();
  void Poke();

  // How long after an evaluation that took `last_duration` a poke may start the next one:
  // min_interval when an event came (`event`), else at least poke_hold_factor times
  // last_duration (evaluations that such pokes cause take at most 1 / (1 + factor) of the
  // engine's time).
  static absl::Duration PokeHoldOff(const Timing& timing, absl::Duration last_duration,
                                    bool event);

 private:
  void Run();

  const Timing timing_;
  const std::function<void()> evaluate_;
  const std::function<bool()> events_arrived_;
  absl::Mutex mu_;
  bool poked_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

// Runs `n` conditions on a worker pool, the costliest of the last run first (so that the long
// ones start first and the threads finish together). One run at a time.
class ConditionSchedule {
 public:
  // `threads`: the pool's threads, the caller's included; 0: the hardware's, at most 4;
  // never more than `n`.
  ConditionSchedule(int threads, size_t n);

  int threads() const { return pool_->threads(); }
  void Run(absl::FunctionRef<void(size_t)> fn);

 private:
  std::unique_ptr<WorkerPool> pool_;
  std::vector<size_t> order_;        // indices, costliest first
  std::vector<double> cost_seconds_;  // each one's last cost
};

}  // namespace railwatch
