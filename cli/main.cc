// railwatch: the command-line client. Wiring only; commands live in cli/commands.cc.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "cli/commands.h"

ABSL_FLAG(std::string, server, "", "railwatchd gRPC address (default $RAILWATCH_SERVER or 127.0.0.1:9740)");
ABSL_FLAG(bool, json, false, "print JSON instead of tables");
ABSL_FLAG(bool, markdown, false, "metrics: print docs/METRICS.md");
ABSL_FLAG(double, timeout, 5, "request deadline in seconds");
ABSL_FLAG(std::string, state, "active", "diagnoses: active, firing, pending, resolved or all");
ABSL_FLAG(std::string, format, "auto",
          "gnmi decode: auto, protojson, prototext, gnmic-json, gnmic-event, gnmi-cli, gnmic-debug");
ABSL_FLAG(std::string, profile, "", "gnmi decode: a profile name or a profile .yaml file");
ABSL_FLAG(std::string, profiles_dir, RAILWATCH_GNMI_PROFILES_DIR,
          "gnmi decode: where --profile=NAME is looked up");
ABSL_FLAG(std::string, rules, RAILWATCH_DEFAULT_RULES,
          "rules validate|list|describe: playbooks read when no path is given");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(railwatch::CommandHelp());
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  std::vector<std::string> args(positional.begin() + 1, positional.end());

  railwatch::CliOptions options;
  options.server = absl::GetFlag(FLAGS_server);
  if (options.server.empty()) {
    const char* env = std::getenv("RAILWATCH_SERVER");
    options.server = env && *env ? env : "127.0.0.1:9740";
  }
  options.json = absl::GetFlag(FLAGS_json);
  options.markdown = absl::GetFlag(FLAGS_markdown);
  options.timeout_seconds = absl::GetFlag(FLAGS_timeout);
  options.state = absl::GetFlag(FLAGS_state);
  options.gnmi_format = absl::GetFlag(FLAGS_format);
  options.gnmi_profile = absl::GetFlag(FLAGS_profile);
  options.gnmi_profiles_dir = absl::GetFlag(FLAGS_profiles_dir);
  options.rules_dir = absl::GetFlag(FLAGS_rules);
  return railwatch::RunCommand(args, options, std::cout, std::cerr);
}
