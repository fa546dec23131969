// What the CLI says about its commands and flags, all of it read from the two tables
// (cli/command_table.h): the command list (`railwatch help`), one command's usage
// (`railwatch help COMMAND`, `COMMAND --help`), the flags a command takes, and the usage error
// for a flag it does not take.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/command_table.h"
#include "cli/commands.h"

namespace railwatch {
namespace {

constexpr size_t kHelpColumn = 23;  // where a flag's or a command's help starts
constexpr size_t kHelpWidth = 100;

// "  --state=S              active ...\n": the flag, its value's placeholder, then `help` (or
// the flag's own) and its default when the help does not say it, on the next line when the
// flag is too long to leave room.
std::string FlagUsageLine(const FlagSpec& f, const std::string& help_override) {
  std::string head = absl::StrCat("  --", f.name, f.value_name.empty() ? "" : "=", f.value_name);
  std::string help = help_override.empty() ? f.help : help_override;
  const std::string fallback = f.DefaultText();
  if (!absl::StrContains(help, "default") && !fallback.empty() && fallback != "false" &&
      fallback != "-1") {
    absl::StrAppend(&help, " (default ", fallback, ")");
  }
  if (head.size() + 1 > kHelpColumn) {
    absl::StrAppend(&head, "\n");
    head.append(kHelpColumn, ' ');
  } else {
    head.resize(kHelpColumn, ' ');
  }
  return absl::StrCat(head, help, "\n");
}

// Words joined into lines of at most kHelpWidth columns, each after `indent`.
std::string WrapWords(const std::vector<std::string>& words, const std::string& indent) {
  std::string text, line;
  for (const std::string& word : words) {
    if (!line.empty() && indent.size() + line.size() + 1 + word.size() > kHelpWidth) {
      absl::StrAppend(&text, indent, line, "\n");
      line.clear();
    }
    absl::StrAppend(&line, line.empty() ? "" : " ", word);
  }
  if (!line.empty()) absl::StrAppend(&text, indent, line, "\n");
  return text;
}

bool TakesGroup(const CommandSpec& spec, FlagGroup group) {
  return std::find(spec.groups.begin(), spec.groups.end(), group) != spec.groups.end();
}

std::string CommandList(bool asks_daemon) {
  std::string text;
  for (const CommandSpec& spec : Commands()) {
    if (spec.AsksDaemon() != asks_daemon) continue;
    for (const CommandSpec::FormLine& form : spec.forms) {
      std::string head = absl::StrCat("  ", form.synopsis);
      if (head.size() + 1 > kHelpColumn) {
        absl::StrAppend(&head, "\n");
        head.append(kHelpColumn, ' ');
      } else {
        head.resize(kHelpColumn, ' ');
      }
      absl::StrAppend(&text, head, form.summary, "\n");
    }
  }
  return text;
}

}  // namespace

bool CommandSpec::AsksDaemon() const { return TakesGroup(*this, FlagGroup::kConnection); }

std::vector<std::string> CommandSpec::FlagNames() const {
  std::vector<std::string> out;
  for (const TakenFlag& f : flags) out.push_back(f.name);
  for (const FlagSpec& f : Flags()) {
    if (f.group != FlagGroup::kCommand && TakesGroup(*this, f.group)) out.push_back(f.name);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

const CommandSpec* FindCommand(std::string_view name) {
  for (const CommandSpec& spec : Commands()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

std::string CommandUsage(const std::string& command) {
  const CommandSpec* spec = FindCommand(command);
  if (spec == nullptr) return "";
  std::string text;
  for (const CommandSpec::FormLine& form : spec->forms) {
    absl::StrAppend(&text, text.empty() ? "usage: railwatch " : "       railwatch ", form.synopsis,
                    text.empty() && !spec->FlagNames().empty() ? " [flags]" : "", "\n");
  }
  absl::StrAppend(&text, "\n", spec->description);
  if (!absl::EndsWith(spec->description, "\n")) absl::StrAppend(&text, "\n");

  std::string own;
  if (TakesGroup(*spec, FlagGroup::kFilter)) {
    for (const FlagSpec& f : Flags()) {
      if (f.group == FlagGroup::kFilter) absl::StrAppend(&own, FlagUsageLine(f, ""));
    }
  }
  for (const CommandSpec::TakenFlag& taken : spec->flags) {
    if (const FlagSpec* f = FindFlag(taken.name))
      absl::StrAppend(&own, FlagUsageLine(*f, taken.help));
  }
  if (!own.empty()) absl::StrAppend(&text, "\nFlags:\n", own);
  if (spec->AsksDaemon()) {
    absl::StrAppend(&text, "\n", FlagGroupTitle(FlagGroup::kConnection), ":\n");
    for (const FlagSpec& f : Flags()) {
      if (f.group == FlagGroup::kConnection) absl::StrAppend(&text, FlagUsageLine(f, ""));
    }
  }
  if (!spec->example.empty()) {
    absl::StrAppend(&text, "\nExample:\n");
    for (absl::string_view line : absl::StrSplit(spec->example, '\n', absl::SkipEmpty())) {
      absl::StrAppend(&text, "  ", line, "\n");
    }
  }
  return text;
}

std::vector<std::string> CommandFlags(const std::string& command) {
  const CommandSpec* spec = FindCommand(command);
  return spec == nullptr ? std::vector<std::string>() : spec->FlagNames();
}

absl::Status CheckCommandFlags(const std::string& command,
                               const std::vector<std::string>& flags_set) {
  const CommandSpec* spec = FindCommand(command);
  if (spec == nullptr) return absl::OkStatus();  // RunCommand says it is unknown
  const std::vector<std::string> takes = spec->FlagNames();
  std::vector<std::string> wrong;
  for (const std::string& flag : flags_set) {
    if (!std::binary_search(takes.begin(), takes.end(), flag) &&
        std::find(wrong.begin(), wrong.end(), "--" + flag) == wrong.end()) {
      wrong.push_back("--" + flag);
    }
  }
  if (wrong.empty()) return absl::OkStatus();
  // What it takes: its own flags by name, the connection flags as a group.
  std::vector<std::string> own;
  for (const std::string& name : takes) {
    const FlagSpec* f = FindFlag(name);
    if (!spec->AsksDaemon() || f == nullptr || f->group != FlagGroup::kConnection) {
      own.push_back(name);
    }
  }
  std::string what = own.empty() ? "" : absl::StrCat("--", absl::StrJoin(own, ", --"));
  if (spec->AsksDaemon())
    absl::StrAppend(&what, own.empty() ? "" : " and ", "the connection flags");
  if (what.empty()) what = "no flags";
  return absl::InvalidArgumentError(absl::StrCat(absl::StrJoin(wrong, ", "),
                                                 wrong.size() == 1 ? " does" : " do",
                                                 " not apply to `", command, "`: it takes ", what));
}

std::string CommandHelp() {
  std::vector<std::string> connection;
  for (const FlagSpec& f : Flags()) {
    if (f.group != FlagGroup::kConnection) continue;
    connection.push_back(absl::StrCat("--", f.name, f.value_name.empty() ? "" : "=", f.value_name,
                                      f.env.empty() ? "" : absl::StrCat(" ($", f.env, ")"), ","));
  }
  if (!connection.empty()) connection.back().back() = '.';
  return absl::StrCat(
      "railwatch: ask the railwatch daemon what is wrong with the fabric, and triage offline.\n\n"
      "Usage: railwatch [flags] COMMAND [args] [flags]\n\n"
      "Ask the daemon:\n",
      CommandList(true), "\nWithout a daemon:\n", CommandList(false),
      "\nEach command takes its own flags (`railwatch help COMMAND` lists them); the commands "
      "that\nask the daemon also take the connection flags:\n",
      WrapWords(connection, "  "),
      "`railwatch --help` lists every flag with its default.\n\n"
      "Exit codes: 0 ok, 1 request failed, 2 usage (bad flags or arguments, unreadable TLS "
      "files),\n3 daemon unreachable (or TLS handshake failed), 4 not found, 5 invalid input "
      "(rules file, query),\n6 refused (no or wrong credentials, or a role too low).\n");
}

}  // namespace railwatch
