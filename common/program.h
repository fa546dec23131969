#pragma once

// Start-up shared by every railwatch program's main: the command line (Abseil flags) with a
// --help that lists the program's own flags in named groups with their defaults, and
// --version.
//
// Abseil's own --help lists only the flags defined in a file named after the program
// (railwatchd.cc), so for a main.cc it printed "No flags matched"; --helpfull still lists
// every flag linked in, Abseil's own included.

#include <string>
#include <string_view>
#include <vector>

#include "absl/synchronization/notification.h"

namespace railwatch {

// One section of --help: a title and the flags shown under it, in this order.
struct FlagGroup {
  std::string title;
  std::vector<std::string> flags;
};

struct ProgramInfo {
  std::string name = "";     // "railwatchd"
  std::string summary = "";  // what the program is, one or two sentences
  std::string usage = "";    // "Usage: railwatchd [--listen=ADDR] ...", one or more lines
  std::vector<FlagGroup> groups = {};
  // Shown after the flags (where the docs are, subcommands ...).
  std::string epilogue = "";
};

// The --help text: summary, usage, then each group's flags with a placeholder for the value,
// the default and the flag's help wrapped to 100 columns. A flag the program defines that no
// group names is listed under "Other flags" (tests/e2e/program_help.py fails on such a flag,
// so that every new flag is given its place).
std::string ProgramHelp(const ProgramInfo& info);

// The names of the flags this binary defines outside Abseil itself, sorted.
std::vector<std::string> ProgramFlagNames();

// Parses argc/argv (Abseil flags). --help, -help and -h print ProgramHelp and exit 0;
// --version prints "<name> <version>" and exits 0; an unknown or malformed flag prints
// Abseil's error and exits 1. Returns the positional arguments, argv[0] first.
std::vector<char*> ParseProgramFlags(int argc, char** argv, const ProgramInfo& info);

// Settings every long-running program wants once its flags are parsed: in optimised builds
// Abseil's mutex deadlock detector is off (Debian's libabsl leaves it on and it builds a lock
// graph on every acquisition); debug and sanitizer builds keep it.
void ApplyProcessDefaults();

// The start of every long-running program's main, in this order: SIGINT and SIGTERM notify
// `stop` (before any thread exists, so every thread inherits the blocked signals), the flags
// are parsed (ParseProgramFlags), ApplyProcessDefaults, and logging is set up from
// --log_level (a flag of this library: the program lists it under a group of its --help).
// A bad --log_level prints why and exits 2. Returns the positional arguments, argv[0] first.
std::vector<char*> StartProgram(int argc, char** argv, const ProgramInfo& info,
                                absl::Notification& stop);

}  // namespace railwatch
