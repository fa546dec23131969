#include "engine/worker_pool.h"

namespace railwatch {

WorkerPool::WorkerPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { Work(); });
}

WorkerPool::~WorkerPool() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : workers_) t.join();
}

void WorkerPool::Drain(absl::FunctionRef<void(size_t)> fn, size_t n) {
  // Items are few (one per playbook) and each is long: a lock per item costs nothing.
  while (true) {
    size_t i;
    {
      absl::MutexLock lock(&mu_);
      if (next_ >= n) return;
      i = next_++;
    }
    fn(i);
    absl::MutexLock lock(&mu_);
    ++done_;
  }
}

void WorkerPool::ParallelFor(size_t n, absl::FunctionRef<void(size_t)> fn) {
  if (workers_.empty() || n <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  {
    absl::MutexLock lock(&mu_);
    fn_ = &fn;
    n_ = n;
    next_ = 0;
    done_ = 0;
    ++generation_;
  }
  Drain(fn, n);
  absl::MutexLock lock(&mu_);
  // Every item done and no worker still holding the loop's fn.
  auto finished = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return done_ == n_ && busy_ == 0; };
  mu_.Await(absl::Condition(&finished));
  fn_ = nullptr;
}

void WorkerPool::Work() {
  uint64_t seen = 0;
  while (true) {
    const absl::FunctionRef<void(size_t)>* fn;
    size_t n;
    {
      absl::MutexLock lock(&mu_);
      auto woken = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        return stopping_ || (generation_ != seen && fn_ != nullptr);
      };
      mu_.Await(absl::Condition(&woken));
      if (stopping_) return;
      seen = generation_;
      fn = fn_;
      n = n_;
      ++busy_;
    }
    Drain(*fn, n);
    absl::MutexLock lock(&mu_);
    --busy_;
  }
}

}  // namespace railwatch
