#include "cli/flags.h"

#include <algorithm>
#include <cstdlib>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/shipped_data.h"

ABSL_FLAG(std::string, server, "",
          "railwatchd's gRPC address (default $RAILWATCH_SERVER, else 127.0.0.1:9740)");
ABSL_FLAG(double, timeout, 5, "per-request deadline in seconds");
ABSL_FLAG(bool, json, false, "print JSON instead of tables");
ABSL_FLAG(bool, tls, false, "connect with TLS (the system's roots unless --tls_ca)");
ABSL_FLAG(std::string, tls_ca, "", "PEM file of the CA that signed the daemon's certificate");
ABSL_FLAG(std::string, tls_cert, "", "PEM client certificate for mutual TLS (with --tls_key)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert");
ABSL_FLAG(std::string, token, "",
          "Query API bearer token (default $RAILWATCH_TOKEN); prefer --token_file, which "
          "keeps it out of the process list");
ABSL_FLAG(std::string, token_file, "", "file holding the Query API bearer token (one line)");
ABSL_FLAG(std::string, tls_server_name, "",
          "the name the daemon's certificate must carry (default: the host of --server)");
ABSL_FLAG(bool, markdown, false, "metrics: print docs/METRICS.md");
ABSL_FLAG(std::string, state, "active",
          "diagnoses, watch: active (pending and firing), firing, pending, resolved or all");
ABSL_FLAG(std::string, severity, "", "diagnoses, watch: critical,warning,info (any of them)");
ABSL_FLAG(std::string, playbook, "", "diagnoses, watch: playbook names, comma-separated");
ABSL_FLAG(std::string, host, "", "diagnoses, watch: the culprit's host");
ABSL_FLAG(std::string, switch, "", "diagnoses, watch: the culprit's switch or leaf");
ABSL_FLAG(std::string, since, "",
          "diagnoses, watch: active or resolved since: 30m, 2h (ago) or RFC 3339");
ABSL_FLAG(int, limit, -1,
          "diagnoses: at most N (default all); top: rows (default 10); series: series");
ABSL_FLAG(bool, runbook, false, "explain: print the whole runbook");
ABSL_FLAG(bool, reconnect, false, "watch: reconnect with capped backoff when the stream ends");
ABSL_FLAG(std::string, window, "1m", "top: the window rates are taken over");
ABSL_FLAG(std::string, range, "", "series: how far back (default 5m)");
ABSL_FLAG(std::string, start, "", "series: from (RFC 3339, or a duration ago)");
ABSL_FLAG(std::string, end, "", "series: to (RFC 3339, or a duration ago; default now)");
ABSL_FLAG(bool, jobs, false, "topology: list the jobs");
ABSL_FLAG(std::string, format, "auto",
          "gnmi decode: auto, protojson, prototext, gnmic-json, gnmic-event, gnmi-cli, gnmic-debug");
ABSL_FLAG(std::string, profile, "", "gnmi decode: a profile name or a profile .yaml file");
ABSL_FLAG(std::string, profiles_dir, "",
          "gnmi decode: where --profile=NAME is looked up (default: the shipped profiles)");
ABSL_FLAG(std::string, rules, "",
          "rules validate|list|describe: playbooks read when no path is given; triage: the "
          "playbooks the log's events are played through (default: the shipped playbooks, as "
          "railwatchd finds them)");

namespace railwatch {
namespace {

// The flags this file defines (absl also registers its own, and so may other libraries).
bool IsCliFlag(const absl::CommandLineFlag& flag) {
  return absl::EndsWith(flag.Filename(), "cli/flags.cc");
}

// Sets one flag from "name" or "name=value" (dashes stripped); a non-boolean flag given
// without "=" takes the next argument (and moves `i` past it). Adds the flag's name to `set`.
absl::Status SetFlag(absl::string_view text, int& i, int argc, char** argv,
                     std::vector<std::string>& set) {
  const size_t eq = text.find('=');
  absl::string_view name = text.substr(0, eq);
  absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  std::string value;
  if (flag == nullptr && eq == absl::string_view::npos && absl::StartsWith(name, "no")) {
    flag = absl::FindCommandLineFlag(name.substr(2));
    if (flag == nullptr || !flag->IsOfType<bool>()) flag = nullptr;
    value = "false";
  }
  if (flag == nullptr || flag->IsRetired()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown flag --", name));
  }
  if (eq != absl::string_view::npos) {
    value = std::string(text.substr(eq + 1));
  } else if (value.empty() && flag->IsOfType<bool>()) {
    value = "true";
  } else if (value.empty()) {
    if (i + 1 >= argc) return absl::InvalidArgumentError(absl::StrCat("--", name, " wants a value"));
    value = argv[++i];
  }
  std::string error;
  if (!flag->ParseFrom(value, &error)) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag->Name(), "=", value, ": ", error));
  }
  set.push_back(std::string(flag->Name()));
  return absl::OkStatus();
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
      return line;
    }
    absl::Status s = SetFlag(arg, i, argc, argv, line.flags_set);
    if (!s.ok()) return s;
  }
  return line;
}

CliOptions OptionsFromFlags() {
  CliOptions o;
  o.server = absl::GetFlag(FLAGS_server);
  if (o.server.empty()) {
    const char* env = std::getenv("RAILWATCH_SERVER");
    o.server = env != nullptr && *env != '\0' ? env : "127.0.0.1:9740";
  }
  o.timeout_seconds = absl::GetFlag(FLAGS_timeout);
  o.json = absl::GetFlag(FLAGS_json);
  o.tls.enabled = absl::GetFlag(FLAGS_tls);
  o.tls.ca_file = absl::GetFlag(FLAGS_tls_ca);
  o.tls.cert_file = absl::GetFlag(FLAGS_tls_cert);
  o.tls.key_file = absl::GetFlag(FLAGS_tls_key);
  o.tls.server_name = absl::GetFlag(FLAGS_tls_server_name);
  o.token = absl::GetFlag(FLAGS_token);
  o.token_file = absl::GetFlag(FLAGS_token_file);
  if (o.token.empty() && o.token_file.empty()) {
    const char* env = std::getenv("RAILWATCH_TOKEN");
    if (env != nullptr) o.token = env;
  }
  o.markdown = absl::GetFlag(FLAGS_markdown);
  o.state = absl::GetFlag(FLAGS_state);
  o.severity = absl::GetFlag(FLAGS_severity);
  o.playbook = absl::GetFlag(FLAGS_playbook);
  o.host = absl::GetFlag(FLAGS_host);
  o.switch_name = absl::GetFlag(FLAGS_switch);
  o.since = absl::GetFlag(FLAGS_since);
  o.limit = absl::GetFlag(FLAGS_limit);
  o.runbook = absl::GetFlag(FLAGS_runbook);
  o.reconnect = absl::GetFlag(FLAGS_reconnect);
  o.window = absl::GetFlag(FLAGS_window);
  o.range = absl::GetFlag(FLAGS_range);
  o.start = absl::GetFlag(FLAGS_start);
  o.end = absl::GetFlag(FLAGS_end);
  o.jobs = absl::GetFlag(FLAGS_jobs);
  o.gnmi_format = absl::GetFlag(FLAGS_format);
  o.gnmi_profile = absl::GetFlag(FLAGS_profile);
  o.gnmi_profiles_dir = absl::GetFlag(FLAGS_profiles_dir);
  if (o.gnmi_profiles_dir.empty()) o.gnmi_profiles_dir = ShippedPath("profiles/gnmi");
  o.rules_dir = absl::GetFlag(FLAGS_rules);
  if (o.rules_dir.empty()) o.rules_dir = ShippedPath("rules");
  return o;
}

std::string FlagsHelp() {
  std::vector<const absl::CommandLineFlag*> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (IsCliFlag(*flag)) flags.push_back(flag);
  }
  std::sort(flags.begin(), flags.end(),
            [](const auto* a, const auto* b) { return a->Name() < b->Name(); });
  std::string text = "Flags:\n";
  for (const absl::CommandLineFlag* f : flags) {
    absl::StrAppend(&text, "  --", f->Name(), " (default \"", f->DefaultValue(), "\")\n      ",
                    f->Help(), "\n");
  }
  return text;
}

}  // namespace railwatch
