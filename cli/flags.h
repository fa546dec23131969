#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/commands.h"

namespace railwatch {

struct CommandLine {
  std::vector<std::string> args;  // the command and its arguments, without the flags
  bool help = false;              // --help, -h: the command's usage (exit 0)
  bool helpfull = false;          // --helpfull: every flag
  std::vector<std::string> flags_set;  // the flags given (names without "--"), in order
};

// Sets the CLI's flags (cli/flags.cc) from argv. Flags may come before or after the command,
// as --flag=value, --flag value, --flag / --noflag for booleans; "--" ends them. Unlike absl's
// parser, it does not exit: an unknown flag or a bad value is InvalidArgument (the CLI exits 2
// with it), and --help is the caller's to answer per command.
absl::StatusOr<CommandLine> ParseCliFlags(int argc, char** argv);

// The options the flags (and $RAILWATCH_SERVER) give.
CliOptions OptionsFromFlags();

// --helpfull: every flag of the CLI with its default and help.
std::string FlagsHelp();

}  // namespace railwatch
