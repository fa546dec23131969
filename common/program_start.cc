// StartProgram (common/program.h) and the --log_level flag every long-running program takes.
// A file of its own in railwatch_program: only a binary that calls StartProgram links it, and
// with it the flag.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/flags/flag.h"
#include "common/logging.h"
#include "common/program.h"
#include "common/signals.h"

ABSL_FLAG(std::string, log_level, "info", "trace, debug, info, warn or error");

namespace railwatch {

std::vector<char*> StartProgram(int argc, char** argv, const ProgramInfo& info,
                                absl::Notification& stop) {
  NotifyOnTerminationSignal(stop);
  std::vector<char*> args = ParseProgramFlags(argc, argv, info);
  ApplyProcessDefaults();
  if (absl::Status s = InitLogging(info.name, absl::GetFlag(FLAGS_log_level)); !s.ok()) {
    std::fprintf(stderr, "%s: %s\n", info.name.c_str(), std::string(s.message()).c_str());
    std::exit(2);
  }
  return args;
}

}  // namespace railwatch
