#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace railwatch::testing {

// Runs a program (looked up in PATH, /usr/sbin and /sbin), waits for it, and returns its
// standard output; an error with its standard error when it cannot start or exits non-zero.
absl::StatusOr<std::string> RunProgram(const std::vector<std::string>& argv);

// CLOCK_REALTIME now, the clock link events are stamped with.
int64_t RealtimeNanos();

// A named network namespace ("rwtest-<pid>-<n>", made with `ip netns add`) for one test,
// deleted with everything in it when the object goes, so also when an assertion failed.
// Namespaces left behind by test processes that died are deleted by the next Create().
// IPv6 is off inside, so that nothing but the test's own frames moves a counter.
class TestNetns {
 public:
  static absl::StatusOr<std::unique_ptr<TestNetns>> Create();
  ~TestNetns();
  TestNetns(const TestNetns&) = delete;
  TestNetns& operator=(const TestNetns&) = delete;

  const std::string& name() const { return name_; }
  // `ip -n <name> args...`
  absl::Status Ip(const std::vector<std::string>& args) const;
  // `ip netns exec <name> argv...`: its standard output.
  absl::StatusOr<std::string> Exec(const std::vector<std::string>& argv) const;

 private:
  explicit TestNetns(std::string name) : name_(std::move(name)) {}
  std::string name_;
};

// A thread that lives in a network namespace: it joins it with setns(CLONE_NEWNET) and gets a
// mount namespace of its own with that namespace's sysfs on /sys (as `ip netns exec` does),
// so sockets it creates and /sys/class/net it reads belong to the test namespace while the
// rest of the process stays where it was. Threads it starts inherit both.
class NetnsThread {
 public:
  static absl::StatusOr<std::unique_ptr<NetnsThread>> Start(const std::string& netns);
  ~NetnsThread();
  NetnsThread(const NetnsThread&) = delete;
  NetnsThread& operator=(const NetnsThread&) = delete;

  // Runs `fn` on the thread and returns once it has.
  void Run(std::function<void()> fn);

 private:
  NetnsThread() = default;
  void Loop(std::string netns);
  bool HasWorkOrStop() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || !tasks_.empty(); }

  mutable absl::Mutex mu_;
  bool entered_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status enter_status_ ABSL_GUARDED_BY(mu_);
  std::deque<std::function<void()>> tasks_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace railwatch::testing
