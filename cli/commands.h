#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace railwatch {

// Exit codes that scripts can rely on.
enum ExitCode : int {
  kExitOk = 0,
  kExitError = 1,        // the request failed for another reason
  kExitUsage = 2,        // bad command line
  kExitUnavailable = 3,  // the daemon could not be reached
  kExitNotFound = 4,     // the thing asked for does not exist
  kExitInvalid = 5,      // input (such as a rules file) is invalid
};

struct CliOptions {
  std::string server = "127.0.0.1:9740";
  bool json = false;
  bool markdown = false;  // metrics: Markdown (docs/METRICS.md) instead of a table
  double timeout_seconds = 5;
  std::string state = "active";  // diagnoses: active (pending+firing), firing, resolved, all
  // gnmi decode
  std::string gnmi_format = "auto";
  std::string gnmi_profile;
  std::string gnmi_profiles_dir;
  // rules validate|list|describe: read when no path is given
  std::string rules_dir;
};

// Runs one command (args[0] is the command name); writes results to `out` and problems to
// `err`; returns an ExitCode.
int RunCommand(const std::vector<std::string>& args, const CliOptions& options, std::ostream& out,
               std::ostream& err);

// Help text for `railwatch help` and usage errors.
std::string CommandHelp();

}  // namespace railwatch
