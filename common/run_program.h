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
  bool truncated = false;  // an output was longer than max_output: the rest was dropped
};

// Runs `argv` with /dev/null as standard input, an empty signal mask and default signal
// dispositions. Each of its outputs is kept up to `max_output` bytes (the rest is read and
// dropped: `truncated`). Errors: NotFound when it exits 127 (what a failed exec gives: no such
// program, or one that cannot run), DeadlineExceeded when it has not exited by `timeout`
// (it is killed).
// A program that ran and failed is not an error: its exit code says so.
absl::StatusOr<ProgramOutput> RunProgram(const std::vector<std::string>& argv,
                                         absl::Duration timeout,
                                         size_t max_output = size_t{16} << 20);

// In a child between fork and exec: an empty signal mask and the default disposition of
// SIGINT, SIGTERM, SIGPIPE and SIGHUP (the programs' parents block or catch them).
// Async-signal-safe.
void ResetSignalsForExec();

}  // namespace railwatch
