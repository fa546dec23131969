#pragma once

// `railwatch rules validate|list|describe|test`: playbook files checked, listed, described and
// unit-tested locally; no daemon is involved (docs/PLAYBOOKS.md, "The rules commands").

#include <iosfwd>
#include <string>
#include <vector>

namespace railwatch {

struct RulesCommand {
  // After "rules": the subcommand and its arguments.
  std::vector<std::string> args;
  bool json = false;
  // Rules read when no path is given (validate, list, describe): the daemon's default.
  std::string default_rules;
};

// validate [PATHS...]: every problem as file:line:column: error[code]: message, then a count;
// kExitInvalid on errors.
// list [PATHS...]: name, severity, for, tags, source (--json: an array).
// describe NAME [PATHS...]: one playbook in full; kExitNotFound when no playbook has that name.
// test FILES|DIRS...: runs playbook test files (a directory: its *.test.yaml); "ok FILE: N
// tests" or the failures; kExitInvalid when a test fails or a file has problems.
// kExitUsage for an unknown subcommand or missing arguments.
int RunRules(const RulesCommand& cmd, std::ostream& out, std::ostream& err);

}  // namespace railwatch
