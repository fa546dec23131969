#pragma once

// Runs a program with a deadline and collects what it prints: the host agent's lldpcli and the
// daemon's squeue. No shell: argv[0] is looked up on the PATH, arguments are passed as given.

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace railwatch {

struct ProgramOutput {
  int exit_code = 0;  // when it exited; -1 when a signal ended it
  int signal = 0;     // the signal that ended it, else 0
  std::string out, err;
};

// Runs `argv` with /dev/null as standard input. Each of its outputs is kept up to
// `max_output` bytes (the rest is read and dropped). Errors: NotFound when the program does not
// exist (exit 127 from exec), DeadlineExceeded when it ran past `timeout` (it is killed).
// A program that ran and failed is not an error: its exit code says so.
absl::StatusOr<ProgramOutput> RunProgram(const std::vector<std::string>& argv,
                                         absl::Duration timeout,
                                         size_t max_output = size_t{16} << 20);

}  // namespace railwatch
