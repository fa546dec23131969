// The CLI's flags: each declared once, in Flags() below, and the one parser that reads them.
// Which command takes which flag is that command's entry in Commands() (cli/commands.cc).
#include "cli/flags.h"

#include <algorithm>
#include <cstdlib>
#include <type_traits>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/command_table.h"
#include "common/shipped_data.h"
#include "common/text.h"

namespace railwatch {

const std::vector<FlagSpec>& Flags() {
  using G = FlagGroup;
  static const std::vector<FlagSpec> flags = {
      // Connection: every command that asks the daemon takes them all.
      Flag("server", &CliOptions::server, "HOST:PORT", "railwatchd's gRPC address")
          .Group(G::kConnection)
          .Env("RAILWATCH_SERVER"),
      Flag("timeout", &CliOptions::timeout_seconds, "SECONDS",
           "per-request deadline; watch has none on its stream")
          .Group(G::kConnection),
      Flag("tls", &TlsOptions::enabled, "", "use TLS (the system's roots, unless --tls_ca)")
          .Group(G::kConnection),
      Flag("tls_ca", &TlsOptions::ca_file, "FILE", "trust this CA (PEM); implies --tls")
          .Group(G::kConnection),
      Flag("tls_cert", &TlsOptions::cert_file, "FILE",
           "client certificate (PEM) for mutual TLS, with --tls_key; implies --tls")
          .Group(G::kConnection),
      Flag("tls_key", &TlsOptions::key_file, "FILE", "the private key of --tls_cert (PEM)")
          .Group(G::kConnection),
      Flag("tls_server_name", &TlsOptions::server_name, "NAME",
           "the name the daemon's certificate must carry (default: the host of --server)")
          .Group(G::kConnection),
      Flag("token_file", &CliOptions::token_file, "FILE",
           "Query API bearer token from FILE (its first line)")
          .Group(G::kConnection),
      Flag("token", &CliOptions::token, "TOKEN",
           "the token itself (--token_file keeps it out of `ps`)")
          .Group(G::kConnection)
          .Env("RAILWATCH_TOKEN"),
      Flag("json", &CliOptions::json, "", "print JSON (the API's field names) instead of a table")
          .Group(G::kConnection),

      // Which diagnoses: diagnoses, watch.
      Flag("state", &CliOptions::state, "S",
           "active (pending and firing; the default), firing, pending, resolved, all")
          .Group(G::kFilter),
      Flag("severity", &CliOptions::severity, "LIST", "critical,warning,info (any of them)")
          .Group(G::kFilter),
      Flag("playbook", &CliOptions::playbook, "LIST", "playbook names, comma-separated")
          .Group(G::kFilter),
      Flag("host", &CliOptions::host, "HOST", "the culprit's host").Group(G::kFilter),
      Flag("switch", &CliOptions::switch_name, "SWITCH", "the culprit's switch (or leaf)")
          .Group(G::kFilter),
      Flag("job", &CliOptions::job, "JOB",
           "a job the diagnosis hurts: one of its blast radius' jobs, or the culprit's job")
          .Group(G::kFilter),
      Flag("since", &CliOptions::since, "WHEN",
           "still active, or resolved since WHEN: 30m, 2h, 1d (ago) or RFC 3339")
          .Group(G::kFilter),

      // Flags each command that takes them names (Commands()).
      Flag("limit", &CliOptions::limit, "N",
           "at most N rows or series (-1: the command's default)"),
      Flag("runbook", &CliOptions::runbook, "",
           "print the whole runbook (Markdown) instead of its commands"),
      Flag("reconnect", &CliOptions::reconnect, "",
           "reconnect when the stream ends (backoff from 0.5s to 30s)"),
      Flag("window", &CliOptions::window, "D", "the window rates are taken over"),
      Flag("range", &CliOptions::range, "D", "the last D (default 5m)"),
      Flag("start", &CliOptions::start, "WHEN", "from: RFC 3339 or a duration ago (15m)"),
      Flag("end", &CliOptions::end, "WHEN", "to: RFC 3339 or a duration ago (default: now)"),
      Flag("jobs", &CliOptions::jobs, "", "list the jobs instead"),
      Flag("discovered", &CliOptions::discovered, "",
           "the map discovery built (NIC identities, LLDP), not the one in use"),
      Flag("declared", &CliOptions::declared, "", "the topology file's map, as the daemon read it"),
      Flag("diff", &CliOptions::diff, "",
           "where the topology file and discovery disagree (conflicts raise topology_mismatch)"),
      Flag("o", &CliOptions::output, "FORMAT",
           "yaml: print the map as a topology file (the format railwatchd reads)"),
      Flag("format", &CliOptions::gnmi_format, "F",
           "auto, protojson, prototext, gnmic-json, gnmic-event, gnmi-cli or gnmic-debug"),
      Flag("profile", &CliOptions::gnmi_profile, "NAME|FILE.yaml",
           "a gNMI profile (name or file): the canonical series each leaf maps to"),
      Flag("profiles_dir", &CliOptions::gnmi_profiles_dir, "DIR",
           "where --profile=NAME is looked up")
          .Shipped("profiles/gnmi"),
      Flag("rules", &CliOptions::rules_dir, "PATHS",
           "playbook files or directories, comma-separated")
          .Shipped("rules"),
      Flag("markdown", &CliOptions::markdown, "", "print docs/METRICS.md (Markdown)"),
  };
  return flags;
}

const FlagSpec* FindFlag(std::string_view name) {
  for (const FlagSpec& f : Flags()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string FlagGroupTitle(FlagGroup group) {
  switch (group) {
    case FlagGroup::kConnection:
      return "Connection (every command that asks the daemon)";
    case FlagGroup::kFilter:
      return "Which diagnoses (diagnoses, watch)";
    case FlagGroup::kCommand:
      break;
  }
  return "Command flags";
}

bool FlagSpec::IsBool() const {
  CliOptions scratch;
  return std::holds_alternative<bool*>(field(scratch));
}

std::string FlagSpec::ValueIn(const CliOptions& o) const {
  CliOptions copy = o;
  return std::visit(
      [](auto* value) -> std::string {
        using T = std::remove_pointer_t<decltype(value)>;
        if constexpr (std::is_same_v<T, bool>) {
          return *value ? "true" : "false";
        } else if constexpr (std::is_same_v<T, std::string>) {
          return *value;
        } else {
          return absl::StrCat(*value);
        }
      },
      field(copy));
}

std::string FlagSpec::DefaultText() const {
  if (!shipped.empty()) return ShippedPath(shipped);
  const std::string value = ValueIn(CliOptions());
  if (!env.empty()) return value.empty() ? "$" + env : absl::StrCat("$", env, ", else ", value);
  return value;
}

namespace {

// Sets `flag` in `o` from `value`; the error says which flag and why.
absl::Status SetFlagValue(const FlagSpec& flag, const std::string& value, CliOptions& o) {
  const auto bad = [&](absl::string_view want) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag.name, "=", value, ": ", want));
  };
  FlagField field = flag.field(o);
  if (bool** b = std::get_if<bool*>(&field)) {
    if (!absl::SimpleAtob(value, *b)) return bad("want true or false");
  } else if (int** i = std::get_if<int*>(&field)) {
    if (!absl::SimpleAtoi(value, *i)) return bad("want an integer");
  } else if (double** d = std::get_if<double*>(&field)) {
    if (!absl::SimpleAtod(value, *d)) return bad("want a number");
  } else {
    *std::get<std::string*>(field) = value;
  }
  return absl::OkStatus();
}

absl::Status UnknownFlag(absl::string_view name) {
  std::vector<std::string> names;
  for (const FlagSpec& f : Flags()) names.push_back(f.name);
  for (const char* own : {"help", "helpfull", "version"}) names.emplace_back(own);
  const std::string hint = ClosestWord(name, names);
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown flag --", name, hint.empty() ? "" : absl::StrCat(" (did you mean --", hint, "?)")));
}

// Sets one flag from "name" or "name=value" (dashes stripped); a non-boolean flag given
// without "=" takes the next argument (and moves `i` past it).
absl::Status ReadFlag(absl::string_view text, int& i, int argc, char** argv, CommandLine& line) {
  const size_t eq = text.find('=');
  const absl::string_view name = text.substr(0, eq);
  const FlagSpec* flag = FindFlag(std::string(name));
  std::string value;
  if (flag == nullptr && eq == absl::string_view::npos && absl::StartsWith(name, "no")) {
    flag = FindFlag(std::string(name.substr(2)));
    if (flag != nullptr && !flag->IsBool()) flag = nullptr;
    value = "false";
  }
  if (flag == nullptr) return UnknownFlag(name);
  if (eq != absl::string_view::npos) {
    value = std::string(text.substr(eq + 1));
  } else if (value.empty() && flag->IsBool()) {
    value = "true";
  } else if (value.empty()) {
    if (i + 1 >= argc)
      return absl::InvalidArgumentError(absl::StrCat("--", name, " wants a value"));
    value = argv[++i];
  }
  if (absl::Status s = SetFlagValue(*flag, value, line.options); !s.ok()) return s;
  line.flags_set.push_back(flag->name);
  return absl::OkStatus();
}

// A flag not given: its environment variable when set, or the shipped data's path.
void ApplyDefaults(CommandLine& line) {
  for (const FlagSpec& flag : Flags()) {
    if (std::find(line.flags_set.begin(), line.flags_set.end(), flag.name) !=
        line.flags_set.end()) {
      continue;
    }
    const char* env = flag.env.empty() ? nullptr : std::getenv(flag.env.c_str());
    if (env != nullptr && *env != '\0') {
      // An environment value that does not parse is left out, as if unset.
      (void)SetFlagValue(flag, env, line.options);
    } else if (!flag.shipped.empty()) {
      (void)SetFlagValue(flag, ShippedPath(flag.shipped), line.options);
    }
  }
}

}  // namespace

absl::StatusOr<CommandLine> ParseCliFlags(int argc, char** argv) {
  CommandLine line;
  bool flags_done = false;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (flags_done || arg == "-" || !absl::StartsWith(arg, "-")) {
      line.args.emplace_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_done = true;
      continue;
    }
    arg.remove_prefix(absl::StartsWith(arg, "--") ? 2 : 1);
    if (arg == "help" || arg == "h") {
      line.help = true;
      continue;
    }
    if (arg == "helpfull") {
      line.helpfull = true;
      continue;
    }
    if (arg == "version") {  // `railwatch --version`, as every other program here takes it
      line.args = {"version"};
      break;
    }
    if (absl::Status s = ReadFlag(arg, i, argc, argv, line); !s.ok()) return s;
  }
  ApplyDefaults(line);
  return line;
}

std::string FlagsHelp() {
  std::string text = "Flags (`railwatch help COMMAND` lists the ones a command takes):\n";
  for (FlagGroup group : {FlagGroup::kConnection, FlagGroup::kFilter, FlagGroup::kCommand}) {
    absl::StrAppend(&text, "\n", FlagGroupTitle(group), ":\n");
    for (const FlagSpec& f : Flags()) {
      if (f.group != group) continue;
      absl::StrAppend(
          &text, "  --", f.name, " (default \"", f.DefaultText(), "\")\n      ",
          f.value_name.empty() ? "" : absl::StrCat("--", f.name, "=", f.value_name, ": "), f.help,
          "\n");
      if (group != FlagGroup::kCommand) continue;
      std::vector<std::string> takers;
      for (const CommandSpec& c : Commands()) {
        const std::vector<std::string> takes = c.FlagNames();
        if (std::binary_search(takes.begin(), takes.end(), f.name)) takers.push_back(c.name);
      }
      absl::StrAppend(&text, "      (", absl::StrJoin(takers, ", "), ")\n");
    }
  }
  return text;
}

}  // namespace railwatch
