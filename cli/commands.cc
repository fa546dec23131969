// Dispatch: the command name -> the function that runs it. The commands live by idea in
// diagnoses.cc, explain.cc, agents.cc, top.cc, fabric.cc (the daemon's Query API) and rules.cc,
// triage.cc, gnmi_decode.cc (offline).
#include <iostream>
#include <ostream>

#include "cli/commands.h"
#include "cli/gnmi_decode.h"
#include "cli/query_commands.h"
#include "cli/rules.h"
#include "cli/triage.h"
#include "common/metrics_doc.h"
#include "common/version.h"

namespace railwatch {
namespace {

using QueryCommand = int (*)(const CommandArgs&, const CliOptions&, std::ostream&,
                             std::ostream&);

QueryCommand FindQueryCommand(const std::string& name) {
  static const std::pair<const char*, QueryCommand> commands[] = {
      {"diagnoses", RunDiagnoses}, {"explain", RunExplain},   {"watch", RunWatch},
      {"agents", RunAgents},       {"playbooks", RunPlaybooks}, {"top", RunTop},
      {"series", RunSeries},       {"topology", RunTopology},
  };
  for (const auto& [command, run] : commands) {
    if (name == command) return run;
  }
  return nullptr;
}

bool AsksForHelp(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h" || a == "-help") return true;
  }
  return false;
}

int Help(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.size() < 2) {
    out << CommandHelp();
    return kExitOk;
  }
  const std::string usage = CommandUsage(args[1]);
  if (usage.empty()) {
    err << "railwatch: no command \"" << args[1] << "\"\n\n" << CommandHelp();
    return kExitUsage;
  }
  out << usage;
  return kExitOk;
}

}  // namespace

int RunCommand(const std::vector<std::string>& args, const CliOptions& options, std::ostream& out,
               std::ostream& err) {
  if (args.empty()) {
    err << CommandHelp();
    return kExitUsage;
  }
  const std::string& cmd = args[0];
  if (AsksForHelp(args) && !CommandUsage(cmd).empty()) return Help({"help", cmd}, out, err);
  if (cmd == "help") return Help(args, out, err);
  if (QueryCommand run = FindQueryCommand(cmd)) return run(args, options, out, err);
  if (cmd == "rules") {
    return RunRules(RulesCommand{std::vector<std::string>(args.begin() + 1, args.end()),
                                 options.json, options.rules_dir},
                    out, err);
  }
  if (cmd == "triage") {
    return RunTriage(std::vector<std::string>(args.begin() + 1, args.end()), options.json,
                     std::cin, out, err, options.rules_dir);
  }
  if (cmd == "gnmi") {
    if (args.size() < 2 || args[1] != "decode") {
      err << "usage: railwatch gnmi decode FILE...|- [--format=F] [--profile=NAME|FILE.yaml]\n";
      return kExitUsage;
    }
    GnmiDecodeCommand decode{std::vector<std::string>(args.begin() + 2, args.end()),
                             options.gnmi_format, options.gnmi_profile,
                             options.gnmi_profiles_dir, options.json};
    return RunGnmiDecode(decode, std::cin, out, err);
  }
  if (cmd == "metrics") {
    out << (options.markdown ? RenderMetricsMarkdown() : RenderMetricsTable());
    return kExitOk;
  }
  if (cmd == "version") {
    out << "railwatch " << kVersion << "\n";
    return kExitOk;
  }
  err << "railwatch: unknown command \"" << cmd << "\"\n\n" << CommandHelp();
  return kExitUsage;
}

}  // namespace railwatch
