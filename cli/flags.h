#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/commands.h"

namespace railwatch {

struct CommandLine {
  std::vector<std::string> args;       // the command and its arguments, without the flags
  bool help = false;                   // --help, -h: the command's usage (exit 0)
  bool helpfull = false;               // --helpfull: every flag
  std::vector<std::string> flags_set;  // the flags given (names without "--"), in order
  CliOptions options;                  // the flags' values, defaults and environment included
};

// Reads argv through the flag table (Flags(), cli/flags.cc). Flags may come before or after
// the command, as --flag=value, --flag value, --flag / --noflag / --flag=false for booleans
// (one dash works too); "--" ends them. A flag not given takes its environment variable
// ($RAILWATCH_SERVER, $RAILWATCH_TOKEN) when that is set, else its default. It does not exit:
// an unknown flag (with "did you mean" when one is close) or a bad value is InvalidArgument
// (the CLI exits 2 with it), and --help is the caller's to answer per command.
absl::StatusOr<CommandLine> ParseCliFlags(int argc, char** argv);

// `railwatch --help` (and --helpfull) after the command list: every flag, by group, with its
// default and help, and the commands that take it.
std::string FlagsHelp();

}  // namespace railwatch
