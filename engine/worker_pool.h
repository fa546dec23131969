#pragma once

#include <cstddef>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"

namespace railwatch {

// A fixed set of threads that run the items of one loop together with the caller: the rules
// engine evaluates its playbooks' conditions on it. One loop at a time (ParallelFor is not
// reentrant and must not be called from two threads at once).
class WorkerPool {
 public:
  // `threads` counts the caller: 1 (or less) starts no thread and runs loops inline.
  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(i) once for each i in [0, n), items taken in order by whichever thread is free,
  // and returns when all have returned.
  void ParallelFor(size_t n, absl::FunctionRef<void(size_t)> fn);

 private:
  void Work();
  // Runs items of the current loop until none is left.
  void Drain(absl::FunctionRef<void(size_t)> fn, size_t n);

  std::vector<std::thread> workers_;
  absl::Mutex mu_;
  // The current loop: workers copy it when generation_ moves.
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  const absl::FunctionRef<void(size_t)>* fn_ ABSL_GUARDED_BY(mu_) = nullptr;
  size_t n_ ABSL_GUARDED_BY(mu_) = 0;
  size_t next_ ABSL_GUARDED_BY(mu_) = 0;
  size_t done_ ABSL_GUARDED_BY(mu_) = 0;
  int busy_ ABSL_GUARDED_BY(mu_) = 0;  // workers inside the current loop
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace railwatch
