#pragma once

// The CLI's two tables, from which everything about its command line follows: the parser, the
// "does not apply" usage error, `railwatch help`, `railwatch help COMMAND`, `COMMAND --help`
// and `railwatch --help`.
//
//   Flags()     cli/flags.cc: every flag once (name, the CliOptions field it sets, and so its
//               type and default, the value's placeholder, help, an environment default, and
//               its group: the connection flags and the diagnosis filters are named groups).
//   Commands()  cli/commands.cc: every command once (name, its forms and a line each for the
//               command list, a description, an example, the groups and flags it takes, how
//               many arguments it takes, and its Run function).
//
// Adding a flag: a line in Flags() (and its field in CliOptions); adding a command: an entry
// in Commands() and its Run function.

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "cli/commands.h"

namespace railwatch {

using CommandArgs = std::vector<std::string>;

// Flags that are listed, and taken, together.
enum class FlagGroup {
  kConnection,  // every command that asks the daemon: --server, TLS, token, --timeout, --json
  kFilter,      // which diagnoses: diagnoses, watch
  kCommand,     // a flag each command that takes it names
};

// Where a flag's value goes: the CliOptions field (its type is the flag's type).
using FlagField = std::variant<bool*, int*, double*, std::string*>;

struct FlagSpec {
  std::string name;  // without "--"
  FlagGroup group = FlagGroup::kCommand;
  std::string value_name;  // "HOST:PORT" (empty for a boolean)
  std::string help;
  std::string env;      // the default when the flag is not given and this variable is set
  std::string shipped;  // the default when not given: ShippedPath(shipped)
  std::function<FlagField(CliOptions&)> field;

  bool IsBool() const;
  // Its value in `o`, as text ("false", "5", "1m").
  std::string ValueIn(const CliOptions& o) const;
  // What the flag is when not given: "5", "$RAILWATCH_SERVER, else 127.0.0.1:9740", "" when
  // there is none worth showing.
  std::string DefaultText() const;

  // Builders for the table's lines.
  FlagSpec& Group(FlagGroup g) {
    group = g;
    return *this;
  }
  FlagSpec& Env(std::string variable) {
    env = std::move(variable);
    return *this;
  }
  FlagSpec& Shipped(std::string path) {
    shipped = std::move(path);
    return *this;
  }
};

// A flag of CliOptions (`member`) or of its TlsOptions.
template <typename T>
FlagSpec Flag(std::string name, T CliOptions::*member, std::string value_name, std::string help) {
  FlagSpec f;
  f.name = std::move(name);
  f.value_name = std::move(value_name);
  f.help = std::move(help);
  f.field = [member](CliOptions& o) -> FlagField { return &(o.*member); };
  return f;
}
template <typename T>
FlagSpec Flag(std::string name, T TlsOptions::*member, std::string value_name, std::string help) {
  FlagSpec f;
  f.name = std::move(name);
  f.value_name = std::move(value_name);
  f.help = std::move(help);
  f.field = [member](CliOptions& o) -> FlagField { return &(o.tls.*member); };
  return f;
}

// Every flag of the CLI (cli/flags.cc).
const std::vector<FlagSpec>& Flags();
// nullptr for a name that is no flag.
const FlagSpec* FindFlag(std::string_view name);
// The group's title in help texts: "Connection (every command that asks the daemon)".
std::string FlagGroupTitle(FlagGroup group);

using RunFunction = int (*)(const CommandArgs& args, const CliOptions& options, std::ostream& out,
                            std::ostream& err);

struct CommandSpec {
  // A way to call the command, with its line in `railwatch help`.
  struct FormLine {
    std::string synopsis;  // after "railwatch ": "explain ID", "agents forget AGENT_ID"
    std::string summary;
  };
  // A flag the command takes, with what it means to this command when that is more than the
  // flag's own help ("at most N (default: all)" for diagnoses' --limit).
  struct TakenFlag {
    std::string name;
    std::string help;
  };

  std::string name;
  RunFunction run = nullptr;
  std::vector<FormLine> forms;
  std::string description;
  std::string example;
  std::vector<FlagGroup> groups;  // kConnection: the command asks the daemon
  std::vector<TakenFlag> flags;
  // How many arguments after the command name; outside it, a usage error with `args_problem`.
  int min_args = 0;
  int max_args = -1;  // -1: any number
  std::string args_problem;

  bool AsksDaemon() const;
  // Every flag it takes, its groups' included; sorted.
  std::vector<std::string> FlagNames() const;

  // Builders for the table's entries.
  CommandSpec& Form(std::string synopsis, std::string summary) {
    forms.push_back({std::move(synopsis), std::move(summary)});
    return *this;
  }
  CommandSpec& Describe(std::string text) {
    description = std::move(text);
    return *this;
  }
  CommandSpec& Example(std::string text) {
    example = std::move(text);
    return *this;
  }
  CommandSpec& Takes(FlagGroup group) {
    groups.push_back(group);
    return *this;
  }
  CommandSpec& Takes(std::string flag, std::string help = "") {
    flags.push_back({std::move(flag), std::move(help)});
    return *this;
  }
  CommandSpec& Args(int min, int max, std::string problem) {
    min_args = min;
    max_args = max;
    args_problem = std::move(problem);
    return *this;
  }
};

inline CommandSpec Command(std::string name, RunFunction run) {
  CommandSpec c;
  c.name = std::move(name);
  c.run = run;
  return c;
}

// Every command of the CLI (cli/commands.cc), in the order `railwatch help` lists them.
const std::vector<CommandSpec>& Commands();
// nullptr for a name that is no command.
const CommandSpec* FindCommand(std::string_view name);

}  // namespace railwatch
