#pragma once

// railwatchd's state directory (--state_dir): where the engine keeps its active diagnoses so
// that a restart neither pages again nor forgets them (docs/OPERATIONS.md, "State").

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace railwatch {

// An open state directory, locked for this process (flock on <dir>/railwatchd.lock) so that
// two daemons never share one. Unlocked when destroyed.
class StateDir {
 public:
  // `create`: make the directory (and its parents) when missing; else a missing directory is
  // an error (NotFound). Fails when it is not a writable directory or another process holds
  // its lock (FailedPrecondition, naming that process).
  static absl::StatusOr<std::unique_ptr<StateDir>> Open(const std::string& dir, bool create);
  ~StateDir();
  StateDir(const StateDir&) = delete;
  StateDir& operator=(const StateDir&) = delete;

  const std::string& path() const { return path_; }
  // The engine's diagnoses: <dir>/diagnoses.json.
  std::string diagnoses_file() const { return path_ + "/diagnoses.json"; }

 private:
  StateDir(std::string path, int lock_fd) : path_(std::move(path)), lock_fd_(lock_fd) {}
  std::string path_;
  int lock_fd_ = -1;
};

}  // namespace railwatch
