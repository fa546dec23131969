#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace railwatch {

// Exit codes that scripts can rely on (docs/CLI.md).
enum ExitCode : int {
  kExitOk = 0,
  kExitError = 1,        // the request failed for another reason
  kExitUsage = 2,        // bad command line (flags, arguments, unreadable TLS files)
  kExitUnavailable = 3,  // the daemon could not be reached (or the TLS handshake failed)
  kExitNotFound = 4,     // the thing asked for does not exist
  kExitInvalid = 5,      // input (such as a rules file or a query) is invalid
  kExitDenied = 6,       // the daemon refused the credentials (none, wrong) or the role
};

// How to reach railwatchd over TLS. Any of the files implies TLS.
struct TlsOptions {
  bool enabled = false;
  std::string ca_file;    // trust this CA; empty: the system roots
  std::string cert_file;  // client certificate (mTLS), with key_file
  std::string key_file;
  std::string server_name;  // the name checked against the server's certificate
};

// What the command line says: one field per flag. Each field's flag (name, help, and the
// groups and commands that take it) is a line of Flags() in cli/flags.cc; the field's
// initialiser is the flag's default.
struct CliOptions {
  std::string server = "127.0.0.1:9740";
  TlsOptions tls;
  // Query API bearer token (--token, else $RAILWATCH_TOKEN), or the file holding it
  // (--token_file, read when the command connects); empty: none. docs/SECURITY.md.
  std::string token;
  std::string token_file;
  double timeout_seconds = 5;
  bool json = false;
  bool markdown = false;  // metrics: Markdown (docs/METRICS.md) instead of a table

  // diagnoses and watch: which diagnoses.
  std::string state = "active";  // active (pending+firing), firing, pending, resolved, all
  std::string severity;          // comma-separated: critical,warning,info
  std::string playbook;          // comma-separated names
  std::string host;
  std::string switch_name;
  std::string job;
  std::string since;  // 1h (that long ago) or RFC 3339
  // diagnoses: at most this many (0: all); top: rows (default 10); series: series.
  // -1: the command's default.
  int limit = -1;

  bool runbook = false;    // explain: print the full runbook text
  bool reconnect = false;  // watch: reconnect with capped backoff instead of exiting
  // watch --reconnect: the first delay; it grows x1.6 up to reconnect_max, jittered.
  absl::Duration reconnect_initial = absl::Milliseconds(500);
  absl::Duration reconnect_max = absl::Seconds(30);
  // watch: notified on SIGINT/SIGTERM (main) or by a test; cancels the stream, exit 0.
  absl::Notification* interrupt = nullptr;

  std::string window = "1m";  // top: the rate window
  std::string range;          // series: how far back (default 5m), or --start/--end
  std::string start;
  std::string end;
  bool jobs = false;  // topology: the jobs only
  // topology: which map (docs/TOPOLOGY.md), the file against discovery, or a topology file.
  bool discovered = false;
  bool declared = false;
  bool diff = false;
  std::string output;  // -o: "" (a table) or "yaml"

  // gnmi decode
  std::string gnmi_format = "auto";
  std::string gnmi_profile;
  std::string gnmi_profiles_dir;
  // rules validate|list|describe: read when no path is given
  std::string rules_dir;
};

// Runs one command (args[0] is the command name) through its entry in Commands()
// (cli/commands.cc); writes results to `out` and problems to `err`; returns an ExitCode.
// "--help" or "-h" among the args prints the command's usage; a number of arguments the
// command does not take is a usage error.
int RunCommand(const std::vector<std::string>& args, const CliOptions& options, std::ostream& out,
               std::ostream& err);

// Help text for `railwatch help` and usage errors: every command in a line or two (cli/help.cc,
// from Commands()).
std::string CommandHelp();

// One command's usage, flags and an example (`railwatch help COMMAND`, `COMMAND --help`);
// empty for an unknown command.
std::string CommandUsage(const std::string& command);

// The flags `command` takes (names without "--", sorted): its own and, for a command that
// asks the daemon, the connection flags. Empty for an unknown command.
std::vector<std::string> CommandFlags(const std::string& command);

// InvalidArgument naming every flag in `flags_set` (names without "--") that `command` does
// not take, and what it takes: the CLI exits 2 with it rather than ignore a flag that does
// not apply. OK for an unknown command (RunCommand reports that).
absl::Status CheckCommandFlags(const std::string& command,
                               const std::vector<std::string>& flags_set);

}  // namespace railwatch
