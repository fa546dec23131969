#pragma once

// The commands that ask a running railwatchd (its gRPC Query service). Each takes the
// command's arguments (args[0] is the command name; RunCommand has checked their number
// against the command's entry in Commands(), cli/commands.cc), writes its result to `out` and
// problems to `err`, and returns an ExitCode.
#include <iosfwd>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cli/command_table.h"
#include "cli/commands.h"
#include "railwatch/v1/query.pb.h"

namespace railwatch {

// cli/diagnoses.cc
int RunDiagnoses(const CommandArgs& args, const CliOptions& o, std::ostream& out,
                 std::ostream& err);
int RunWatch(const CommandArgs& args, const CliOptions& o, std::ostream& out, std::ostream& err);
// cli/explain.cc
int RunExplain(const CommandArgs& args, const CliOptions& o, std::ostream& out, std::ostream& err);
// cli/agents.cc
int RunAgents(const CommandArgs& args, const CliOptions& o, std::ostream& out, std::ostream& err);
int RunPlaybooks(const CommandArgs& args, const CliOptions& o, std::ostream& out,
                 std::ostream& err);
// cli/top.cc
int RunTop(const CommandArgs& args, const CliOptions& o, std::ostream& out, std::ostream& err);
// cli/fabric.cc
int RunSeries(const CommandArgs& args, const CliOptions& o, std::ostream& out, std::ostream& err);
int RunTopology(const CommandArgs& args, const CliOptions& o, std::ostream& out, std::ostream& err);

// --state, --severity, --playbook, --host, --switch and --since as the request's filter;
// InvalidArgument names the flag that is wrong.
absl::Status BuildDiagnosisFilter(const CliOptions& o, absl::Time now, v1::DiagnosisFilter* filter);

// Writes "usage: ..." for a command given the wrong arguments and returns kExitUsage.
int UsageError(const std::string& command, const std::string& problem, std::ostream& err);

}  // namespace railwatch
