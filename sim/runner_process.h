#pragma once

// The processes a scenario run starts: each in a process group of its own (so that stopping it
// stops whatever it started), with its output in a log file, killed by the kernel if the runner
// dies first (PR_SET_PDEATHSIG), never left behind.

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace railwatch::sim {

class Child {
 public:
  // Starts argv[0] (a path) with argv; stdout and stderr go to `log_path`, stdin is /dev/null.
  // Signals blocked in the caller are unblocked in the child.
  static absl::StatusOr<std::unique_ptr<Child>> Start(std::string name,
                                                      const std::vector<std::string>& argv,
                                                      const std::string& log_path);
  ~Child();  // kills the group when still running
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  const std::string& name() const { return name_; }
  const std::string& log_path() const { return log_path_; }
  pid_t pid() const { return pid_; }

  // Still running; reaps it (keeping its exit status) once it has exited.
  bool Running();
  // "exited with status 1", "killed by signal 9".
  std::string ExitDescription() const;
  // The last `lines` lines of its log, each indented.
  std::string LogTail(int lines) const;

 private:
  Child(std::string name, pid_t pid, std::string log_path)
      : name_(std::move(name)), pid_(pid), log_path_(std::move(log_path)) {}
  friend void StopAll(const std::vector<Child*>& children, absl::Duration grace);

  std::string name_;
  pid_t pid_;
  std::string log_path_;
  bool reaped_ = false;
  int status_ = 0;
};

// SIGTERM to every child that runs, SIGKILL to the groups of those still running after `grace`;
// then SIGKILL to every group (what a child started and left behind). Returns when all are
// reaped.
void StopAll(const std::vector<Child*>& children, absl::Duration grace);

}  // namespace railwatch::sim
