// The CLI's commands as the command line sees them: each command's usage and the flags it
// takes, in one entry of Specs() below. `railwatch help COMMAND` prints the usage; a flag the
// command does not take is a usage error (CheckCommandFlags). docs/CLI.md says the same at
// more length. (What a command does is its Run function: commands.cc dispatches.)
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/commands.h"

namespace railwatch {
namespace {

constexpr char kConnectionFlags[] = R"(
Connection (every command that asks the daemon):
  --server=HOST:PORT     railwatchd's gRPC address (default $RAILWATCH_SERVER, else 127.0.0.1:9740)
  --timeout=SECONDS      per-request deadline (default 5)
  --tls                  use TLS (the system's roots, unless --tls_ca)
  --tls_ca=FILE          trust this CA (PEM); implies --tls
  --tls_cert=FILE --tls_key=FILE
                         client certificate and key for mutual TLS; imply --tls
  --tls_server_name=NAME the name the server's certificate must carry (default: the host of --server)
  --token_file=FILE      Query API bearer token from FILE (or --token=TOKEN, $RAILWATCH_TOKEN)
  --json                 print JSON (the API's field names) instead of a table
)";

constexpr char kFilterFlags[] = R"(
  --state=S              active (pending and firing; the default), firing, pending, resolved, all
  --severity=LIST        critical,warning,info (any of them)
  --playbook=LIST        playbook names, comma-separated
  --host=HOST            the culprit's host
  --switch=SWITCH        the culprit's switch (or leaf)
  --since=WHEN           still active, or resolved since WHEN: 30m, 2h, 1d (ago) or RFC 3339
)";

// The flags of every command that asks the daemon (kConnectionFlags says what they do).
constexpr std::string_view kConnectionFlagNames[] = {
    "server", "timeout", "tls", "tls_ca", "tls_cert", "tls_key", "tls_server_name", "token",
    "token_file", "json"};

struct CommandSpec {
  std::string name;
  std::string usage;
  bool asks_daemon = false;  // takes the connection flags
  // Its own flags (their names without "--"); the usage above says what each does.
  std::vector<std::string_view> flags;
};

const std::vector<CommandSpec>& Specs() {
  static const std::vector<std::string_view> kFilter = {"state", "severity", "playbook",
                                                        "host",  "switch",   "since"};
  auto with = [](std::vector<std::string_view> a, std::vector<std::string_view> b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  static const std::vector<CommandSpec> specs = {
      {"diagnoses", std::string(R"(usage: railwatch diagnoses [flags]

Diagnoses that match the filters, newest first.
)") + kFilterFlags + R"(  --limit=N              at most N (default: all)

  ID            STATE   SEVERITY  PLAYBOOK   CULPRIT                                SINCE    SUMMARY
  3f2a9c01b7de  firing  critical  pfc_storm  device=mlx5_3 host=gpu-node-004 port=1  2m ago   PFC storm from gpu-node-004 mlx5_3
)", true, with(kFilter, {"limit"})},
      {"explain", R"(usage: railwatch explain ID [--runbook] [--json]

One diagnosis in full: culprit, where, since when, blast radius (hosts, jobs, GPUs, $/minute),
a timeline of its evidence (series with their readings, events with their log lines,
symptoms it explains, pending/firing/resolved), and the runbook's commands with the culprit
filled in.
  --runbook              print the whole runbook (Markdown) instead of its commands
)", true, {"runbook"}},
      {"watch", std::string(R"(usage: railwatch watch [flags]

The matching diagnoses now (INITIAL), then SYNCED, then every change as it happens (PENDING,
FIRING, RESOLVED, CLEARED), one line each, until Ctrl-C (exit 0) or the daemon ends the stream
(exit 0, or 3 when it became unreachable).
)") + kFilterFlags + R"(  --reconnect            reconnect when the stream ends (backoff from 0.5s to 30s)
  --json                 one JSON object per line (JSON Lines)

  12:03:04  FIRING    pfc_storm           critical  gpu-node-004 mlx5_3 1        PFC storm from gpu-node-004 mlx5_3  [3f2a9c01b7de]
)", true, with(kFilter, {"reconnect"})},
      {"agents", R"(usage: railwatch agents [--json]
       railwatch agents forget AGENT_ID

Agents: role, host, HEALTH (ok, degraded, silent, disconnected), last seen, lag, series,
points, version, peer, and why an agent is not ok (PROBLEMS); then switch agents' gNMI targets.
forget: remove a decommissioned (disconnected) agent from the list and its railwatch_agent_*
metrics; needs the admin role when the daemon checks credentials (docs/SECURITY.md).
)", true, {}},
      {"top", R"(usage: railwatch top pfc|ecn|errors [--limit=10] [--window=1m] [--json]

The worst ports now, by rate over the window:
  pfc      PFC pause frames per port, priority and direction (hosts and switches)
  ecn      ECN-marked packets per switch queue, ECN-marked packets received and CNPs sent per NIC
  errors   the error counters of each port added up (symbol, receive, link downed,
           out of sequence, sequence NAKs, ACK timeouts; switch in/out errors and discards),
           with each counter's share
Columns: WHERE (host or switch), PORT (device/port or interface), PRIORITY or QUEUE,
DIRECTION, RATE/s, and RAIL and LEAF when the daemon has a topology.
)", true, {"limit", "window"}},
      {"series", R"(usage: railwatch series QUERY [--range=5m | --start=WHEN [--end=WHEN]] [--limit=N] [--json]

A selector (fabric_pfc_pause_frames_total{host="gpu-node-004",direction="tx"}, or just
{host="gpu-node-004"}): each series with its point count, first and last value.
An expression of the condition language (rate(fabric_roce_cnp_sent_total[1m]) > 100): the
labels and value of each element, now (or at --end).
  --range=D              the last D (default 5m)
  --start=WHEN --end=WHEN   RFC 3339 or a duration ago (15m); --end defaults to now
  --limit=N              at most N series (the daemon's default is 1000)
  --json                 the series with every point
)", true, {"range", "start", "end", "limit"}},
      {"topology", R"(usage: railwatch topology [--jobs] [--json]

The topology the daemon was given: hosts and their NICs (rail, switch port), switches and the
links between them. --jobs lists the jobs instead (from the topology file's jobs: section, or
learnt from NCCL logs), with their GPUs, ranks, hosts and source.
)", true, {"jobs"}},
      {"playbooks", R"(usage: railwatch playbooks [--json]

The playbooks the running daemon loaded: severity, enabled, diagnoses pending and firing now,
`for`, and where each is defined. (`railwatch rules list` reads rules files without a daemon.)
)", true, {}},
      {"rules", R"(usage: railwatch rules validate|list|describe|test ...

  rules validate [PATH...]      check playbook files (default: the shipped rules, or --rules=PATHS);
                                every problem as file:line:column: error[code]: message (exit 5)
  rules list [PATH...]          the playbooks: severity, for, tags, where each is defined
  rules describe NAME [PATH...] one playbook in full: condition as written and canonical, the
                                series and events it reads, culprit, grouping, blast radius
  rules test FILE|DIR...        run playbook unit tests (*.test.yaml); failures name file:line
No daemon is needed. --json for machine-readable output.
)", false, {"rules", "json"}},
      {"triage", R"(usage: railwatch triage FILE... [--json] [--rules=DIR]

Offline triage of NCCL, PyTorch, NCCL RAS and nccl-tests logs (- is stdin): what failed, where,
what the lines mean, what to run next. No daemon is needed. The events are played through the
daemon's playbooks (--rules, default the shipped rules) on a fake clock: a playbook that fires
(nccl_failure, nic_gone ...) names the diagnosis, its runbook and the runbook's commands.
Pasted `rdma statistic show`, `rdma link show`, `rdma -j` and ibstatus output (alone or inside
a log) is recognised too: retries, completion errors, out_of_buffer and links down, per
device/port.
)", false, {"json", "rules"}},
      {"gnmi", R"(usage: railwatch gnmi decode FILE...|- [--format=F] [--profile=NAME|FILE.yaml] [--profiles_dir=DIR] [--json]

Captured gNMI notifications (protojson, prototext, gnmic json/event/debug log, gnmi_cli) ->
leaves: path = value @ time; with --profile, the canonical series each leaf maps to (or
"unmapped"). --format=auto|protojson|prototext|gnmic-json|gnmic-event|gnmi-cli|gnmic-debug.
--json prints the leaves as JSON.
)", false, {"format", "profile", "profiles_dir", "json"}},
      {"metrics", R"(usage: railwatch metrics [--markdown]

The canonical series and where each comes from, per driver (--markdown: docs/METRICS.md).
)", false, {"markdown"}},
      {"version", "usage: railwatch version\n\nPrints the version.\n", false, {}},
      {"help", "usage: railwatch help [COMMAND]\n\nThe command list, or one command's usage.\n",
       false, {}},
  };
  return specs;
}

const CommandSpec* FindSpec(std::string_view command) {
  for (const CommandSpec& spec : Specs()) {
    if (spec.name == command) return &spec;
  }
  return nullptr;
}

}  // namespace

std::string CommandUsage(const std::string& command) {
  const CommandSpec* spec = FindSpec(command);
  if (spec == nullptr) return "";
  return spec->asks_daemon ? spec->usage + kConnectionFlags : spec->usage;
}

std::vector<std::string> CommandFlags(const std::string& command) {
  std::vector<std::string> out;
  const CommandSpec* spec = FindSpec(command);
  if (spec == nullptr) return out;
  for (std::string_view f : spec->flags) out.emplace_back(f);
  if (spec->asks_daemon) {
    for (std::string_view f : kConnectionFlagNames) out.emplace_back(f);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

absl::Status CheckCommandFlags(const std::string& command,
                               const std::vector<std::string>& flags_set) {
  if (FindSpec(command) == nullptr) return absl::OkStatus();  // RunCommand says it is unknown
  const std::vector<std::string> takes = CommandFlags(command);
  std::vector<std::string> wrong;
  for (const std::string& flag : flags_set) {
    if (!std::binary_search(takes.begin(), takes.end(), flag) &&
        std::find(wrong.begin(), wrong.end(), "--" + flag) == wrong.end()) {
      wrong.push_back("--" + flag);
    }
  }
  if (wrong.empty()) return absl::OkStatus();
  const CommandSpec& spec = *FindSpec(command);
  std::vector<std::string> own(spec.flags.begin(), spec.flags.end());
  std::sort(own.begin(), own.end());
  std::string what = own.empty() ? "" : absl::StrCat("--", absl::StrJoin(own, ", --"));
  if (spec.asks_daemon) absl::StrAppend(&what, own.empty() ? "" : " and ", "the connection flags");
  if (what.empty()) what = "no flags";
  return absl::InvalidArgumentError(
      absl::StrCat(absl::StrJoin(wrong, ", "), wrong.size() == 1 ? " does" : " do",
                   " not apply to `", command, "`: it takes ", what));
}

std::string CommandHelp() {
  return R"(railwatch: ask the railwatch daemon what is wrong with the fabric, and triage offline.

Usage: railwatch [flags] COMMAND [args] [flags]

Ask the daemon:
  diagnoses            list diagnoses (default: pending and firing); filters --state, --severity,
                       --playbook, --host, --switch, --since, --limit
  explain ID           one diagnosis in full: evidence timeline, blast radius, runbook commands
  watch                diagnoses as they change, live (same filters; --reconnect)
  agents               agents: health, problems, last seen, lag, series; gNMI targets
  agents forget ID     remove a decommissioned agent (admin)
  top pfc|ecn|errors   the worst ports now (--limit=10, --window=1m)
  series QUERY         stored samples of a selector, or the value of an expression
  topology             hosts, NICs, rails, switches and links; --jobs: the jobs
  playbooks            the playbooks loaded, with their pending and firing diagnoses

Without a daemon:
  rules validate|list|describe|test ...
                       check, list, describe and unit-test playbook files
  triage FILE...       offline triage of NCCL, PyTorch, NCCL RAS and nccl-tests logs (- is stdin)
  gnmi decode FILE...  captured gNMI notifications -> leaves (and canonical series with --profile)
  metrics [--markdown] the canonical series and where each comes from, per driver
  version              print the version
  help [COMMAND]       this text, or one command's usage (so does COMMAND --help)

Flags: --server=HOST:PORT (or $RAILWATCH_SERVER; default 127.0.0.1:9740), --timeout=SECONDS,
--json, --tls, --tls_ca=FILE, --tls_cert=FILE, --tls_key=FILE, --tls_server_name=NAME,
--token_file=FILE (or $RAILWATCH_TOKEN); --helpfull lists every flag.

Exit codes: 0 ok, 1 request failed, 2 usage (bad flags or arguments, unreadable TLS files),
3 daemon unreachable (or TLS handshake failed), 4 not found, 5 invalid input (rules file, query),
6 refused (no or wrong credentials, or a role too low).
)";
}

}  // namespace railwatch
