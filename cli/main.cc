// railwatch: the command-line client. Wiring only: the flags (cli/flags.cc), then the command
// (cli/commands.cc).
#include <iostream>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"
#include "cli/commands.h"
#include "cli/flags.h"
#include "common/signals.h"

int main(int argc, char** argv) {
  absl::StatusOr<railwatch::CommandLine> line = railwatch::ParseCliFlags(argc, argv);
  if (!line.ok()) {
    std::cerr << "railwatch: " << line.status().message()
              << "\n(`railwatch help` lists the commands, `railwatch --help` every flag)\n";
    return railwatch::kExitUsage;
  }
  std::vector<std::string> args = line->args;
  if (line->helpfull || (line->help && args.empty())) {
    // `railwatch --help`: the commands, then every flag with its default.
    std::cout << railwatch::CommandHelp() << "\n" << railwatch::FlagsHelp();
    return railwatch::kExitOk;
  }
  if (!args.empty() && !line->help) {
    // A flag the command does not take is an error, not silently ignored.
    if (absl::Status s = railwatch::CheckCommandFlags(args[0], line->flags_set); !s.ok()) {
      std::cerr << "railwatch " << args[0] << ": " << s.message() << "\n\n"
                << railwatch::CommandUsage(args[0]);
      return railwatch::kExitUsage;
    }
  }
  if (line->help) {
    // `railwatch COMMAND --help`: that command's usage.
    args.insert(args.begin(), "help");
    args.resize(std::min<size_t>(args.size(), 2));
  }
  railwatch::CliOptions& options = line->options;
  if (!args.empty() && args[0] == "watch") {
    // Before any gRPC thread exists: Ctrl-C cancels the stream and watch exits 0. Other
    // commands keep the default (Ctrl-C ends them at once).
    // Static: it outlives the signal thread, and LeakSanitizer sees it reachable (a `new`
    // one held only by `options` was reported as a leak at exit under ASan).
    static absl::Notification interrupt;
    railwatch::NotifyOnTerminationSignal(interrupt);
    options.interrupt = &interrupt;
  }
  return railwatch::RunCommand(args, options, std::cout, std::cerr);
}
