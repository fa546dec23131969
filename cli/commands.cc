// The CLI's commands, each declared once in Commands() below: its forms and their line in
// `railwatch help`, what it does, an example, the flags it takes (by name, or as a group of
// Flags() in cli/flags.cc), how many arguments it takes, and its Run function. Help, usage
// errors and dispatch all read this table (cli/help.cc). The Run functions live by idea in
// diagnoses.cc, explain.cc, agents.cc, top.cc, fabric.cc (the daemon's Query API) and rules.cc,
// triage.cc, gnmi_decode.cc (offline); the small ones are here.
#include "cli/commands.h"

#include <algorithm>
#include <iostream>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "cli/command_table.h"
#include "cli/gnmi_decode.h"
#include "cli/query_commands.h"
#include "cli/rules.h"
#include "cli/triage.h"
#include "common/metrics_doc.h"
#include "common/text.h"
#include "common/version.h"

namespace railwatch {
namespace {

CommandArgs ArgsAfter(const CommandArgs& args, size_t n) {
  return CommandArgs(args.begin() + std::min(n, args.size()), args.end());
}

int RunRulesCommand(const CommandArgs& args, const CliOptions& o, std::ostream& out,
                    std::ostream& err) {
  return RunRules(RulesCommand{ArgsAfter(args, 1), o.json, o.rules_dir}, out, err);
}

int RunTriageCommand(const CommandArgs& args, const CliOptions& o, std::ostream& out,
                     std::ostream& err) {
  return RunTriage(ArgsAfter(args, 1), o.json, std::cin, out, err, o.rules_dir);
}

int RunGnmiCommand(const CommandArgs& args, const CliOptions& o, std::ostream& out,
                   std::ostream& err) {
  if (args.size() < 2 || args[1] != "decode") {
    err << "usage: railwatch gnmi decode FILE...|- [--format=F] [--profile=NAME|FILE.yaml]\n";
    return kExitUsage;
  }
  GnmiDecodeCommand decode{ArgsAfter(args, 2), o.gnmi_format, o.gnmi_profile, o.gnmi_profiles_dir,
                           o.json};
  return RunGnmiDecode(decode, std::cin, out, err);
}

int RunMetricsCommand(const CommandArgs&, const CliOptions& o, std::ostream& out, std::ostream&) {
  out << (o.markdown ? RenderMetricsMarkdown() : RenderMetricsTable());
  return kExitOk;
}

int RunVersionCommand(const CommandArgs&, const CliOptions&, std::ostream& out, std::ostream&) {
  out << "railwatch " << kVersion << "\n";
  return kExitOk;
}

int RunHelpCommand(const CommandArgs& args, const CliOptions&, std::ostream& out,
                   std::ostream& err) {
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

bool AsksForHelp(const CommandArgs& args) {
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h" || a == "-help") return true;
  }
  return false;
}

}  // namespace

const std::vector<CommandSpec>& Commands() {
  using G = FlagGroup;
  constexpr int kAny = -1;
  static const std::vector<CommandSpec> commands = {
      // Ask the daemon.
      Command("diagnoses", RunDiagnoses)
          .Form("diagnoses", "list diagnoses (default: pending and firing), filtered")
          .Describe("Diagnoses that match the filters, newest first.")
          .Takes(G::kFilter)
          .Takes("limit", "at most N (default: all)")
          .Takes(G::kConnection)
          .Args(0, 0, "takes no arguments")
          .Example(R"($ railwatch diagnoses --state=firing
ID            STATE   SEVERITY  PLAYBOOK   CULPRIT                                SINCE    SUMMARY
3f2a9c01b7de  firing  critical  pfc_storm  device=mlx5_3 host=gpu-node-004 port=1  2m ago   PFC storm from gpu-node-004 mlx5_3)"),
      Command("explain", RunExplain)
          .Form("explain ID",
                "one diagnosis in full: evidence timeline, blast radius, runbook "
                "commands")
          .Describe(
              R"(One diagnosis in full: culprit, where, since when, blast radius (hosts, jobs, GPUs, $/minute),
a timeline of its evidence (series with their readings, events with their log lines,
symptoms it explains, pending/firing/resolved), and the runbook's commands with the culprit
filled in.)")
          .Takes("runbook")
          .Takes(G::kConnection)
          .Args(1, 1, "wants one diagnosis ID (`railwatch diagnoses` lists them)")
          .Example("$ railwatch explain 3f2a9c01b7de --runbook"),
      Command("watch", RunWatch)
          .Form("watch", "diagnoses as they change, live (the same filters)")
          .Describe(
              R"(The matching diagnoses now (INITIAL), then SYNCED, then every change as it happens (PENDING,
FIRING, RESOLVED, CLEARED), one line each, until Ctrl-C (exit 0) or the daemon ends the stream
(exit 0, or 3 when it became unreachable). With --json, one JSON object per line (JSON Lines).)")
          .Takes(G::kFilter)
          .Takes("reconnect")
          .Takes(G::kConnection)
          .Args(0, 0, "takes no arguments")
          .Example(R"($ railwatch watch --severity=critical
12:03:04  FIRING    pfc_storm           critical  gpu-node-004 mlx5_3 1        PFC storm from gpu-node-004 mlx5_3  [3f2a9c01b7de])"),
      Command("agents", RunAgents)
          .Form("agents", "agents: health, problems, last seen, lag, series; gNMI targets")
          .Form("agents forget AGENT_ID", "remove a decommissioned agent (admin)")
          .Describe(
              R"(Agents: role, host, HEALTH (ok, degraded, silent, disconnected), last seen, lag, series,
points, version, peer, and why an agent is not ok (PROBLEMS); then switch agents' gNMI targets.
forget: remove a decommissioned (disconnected) agent from the list and its railwatch_agent_*
metrics; needs the admin role when the daemon checks credentials (docs/SECURITY.md).)")
          .Takes(G::kConnection)
          .Example("$ railwatch agents forget gpu-node-117\n"
                   "Forgot agent gpu-node-117 (gpu-node-117, last seen 3d ago)."),
      Command("top", RunTop)
          .Form("top pfc|ecn|errors", "the worst ports now")
          .Describe(R"(The worst ports now, by rate over the window:
  pfc      PFC pause frames per port, priority and direction (hosts and switches)
  ecn      ECN-marked packets per switch queue, ECN-marked packets received and CNPs sent per NIC
  errors   the error counters of each port added up (symbol, receive, link downed,
           out of sequence, sequence NAKs, ACK timeouts; switch in/out errors and discards),
           with each counter's share
Columns: WHERE (host or switch), PORT (device/port or interface), PRIORITY or QUEUE,
DIRECTION, RATE/s, and RAIL and LEAF when the daemon has a topology.)")
          .Takes("limit", "at most N ports (default 10)")
          .Takes("window")
          .Takes(G::kConnection)
          .Args(1, 1, "wants one of pfc, ecn, errors")
          .Example(R"($ railwatch top pfc --limit=2
WHERE    PORT        PRIORITY  DIRECTION  RATE/s  RAIL  LEAF
leaf-r2  Ethernet8   3         rx         8246.4  2     leaf-r2
spine-1  Ethernet3   3         rx         1276.5  -     leaf-r2)"),
      Command("series", RunSeries)
          .Form("series QUERY", "stored samples of a selector, or the value of an expression")
          .Describe(
              R"(A selector (fabric_pfc_pause_frames_total{host="gpu-node-004",direction="tx"}, or just
{host="gpu-node-004"}): each series with its point count, first and last value.
An expression of the condition language (rate(fabric_roce_cnp_sent_total[1m]) > 100): the
labels and value of each element, now (or at --end). With --json, every point.)")
          .Takes("range")
          .Takes("start")
          .Takes("end")
          .Takes("limit", "at most N series (the daemon's default is 1000)")
          .Takes(G::kConnection)
          .Args(1, kAny, "wants a selector or an expression (quote it for the shell)")
          .Example(
              R"($ railwatch series 'rate(fabric_pfc_pause_frames_total{direction="rx"}[30s]) > 1000'
direction  interface  priority  switch   VALUE
rx         Ethernet8  3         leaf-r2  8246.4)"),
      Command("topology", RunTopology)
          .Form("topology", "hosts, NICs, rails, switches and links; --jobs: the jobs")
          .Describe(
              R"(The fabric map the daemon uses: hosts and their NICs (rail, switch port), switches and the
links between them, each cable with where it comes from (both ends, one end, declared). The
map is discovered from what the agents report (NIC identities, LLDP neighbours) and the
topology file pins it (docs/TOPOLOGY.md). --discovered shows discovery's map alone, --declared
the file's; --diff lists where they disagree; -o yaml prints the map as a topology file to
review and commit. --jobs lists the jobs instead (from the topology file's jobs: section,
Slurm, the kubelets' pods, or learnt from NCCL logs), with their GPUs, ranks, hosts and
source.)")
          .Takes("jobs")
          .Takes("discovered")
          .Takes("declared")
          .Takes("diff")
          .Takes("o")
          .Takes(G::kConnection)
          .Args(0, 0, "takes no arguments")
          .Example(R"($ railwatch topology --jobs
JOB    GPUS  RANKS  HOSTS                                                   SOURCE    LAST SEEN
train  32    32     gpu-node-001,gpu-node-002,gpu-node-003,gpu-node-004 +4  topology  -
$ railwatch topology --diff
WHERE              WHAT         DECLARED           DISCOVERED         CONFLICT
gpu-node-003/mlx5_1  switch port  leaf-r1/Ethernet8  leaf-r1/Ethernet12  yes
$ railwatch topology --discovered -o yaml > topology.yaml)"),
      Command("playbooks", RunPlaybooks)
          .Form("playbooks", "the playbooks loaded, with their pending and firing diagnoses")
          .Describe(
              R"(The playbooks the running daemon loaded: severity, enabled, diagnoses pending and firing now,
`for`, and where each is defined. (`railwatch rules list` reads rules files without a daemon.))")
          .Takes(G::kConnection)
          .Args(0, 0, "takes no arguments")
          .Example(R"($ railwatch playbooks
NAME       SEVERITY  ENABLED  PENDING  FIRING  FOR  SOURCE
pfc_storm  critical  yes      0        1       0s   /etc/railwatch/rules/pfc-storm.yaml:17:3)"),

      // Without a daemon.
      Command("rules", RunRulesCommand)
          .Form("rules validate|list|describe|test ...",
                "check, list, describe and unit-test playbook files")
          .Describe(
              R"(  rules validate [PATH...]      check playbook files (default: the shipped rules, or --rules=PATHS);
                                every problem as file:line:column: error[code]: message (exit 5)
  rules list [PATH...]          the playbooks: severity, for, tags, where each is defined
  rules describe NAME [PATH...] one playbook in full: condition as written and canonical, the
                                series and events it reads, culprit, grouping, blast radius
  rules test FILE|DIR...        run playbook unit tests (*.test.yaml); failures name file:line
No daemon is needed.)")
          .Takes("rules", "playbooks read when no path is given")
          .Takes("json", "machine-readable output")
          .Example("$ railwatch rules describe pfc_storm --rules=/etc/railwatch/rules"),
      Command("triage", RunTriageCommand)
          .Form("triage FILE...",
                "offline triage of NCCL, PyTorch, NCCL RAS and nccl-tests "
                "logs (- is stdin)")
          .Describe(
              R"(Offline triage of NCCL, PyTorch, NCCL RAS and nccl-tests logs (- is stdin): what failed, where,
what the lines mean, what to run next. No daemon is needed. The events are played through the
daemon's playbooks (--rules) on a fake clock: a playbook that fires (nccl_failure, nic_gone ...)
names the diagnosis, its runbook and the runbook's commands.
Pasted `rdma statistic show`, `rdma link show`, `rdma -j` and ibstatus output (alone or inside
a log) is recognised too: retries, completion errors, out_of_buffer and links down, per
device/port. So is InfiniBand tool output, one tool per file or paste (ibnetdiscover and -p,
perfquery, ibqueryerrors, iblinkinfo, ibdiagnet2.db_csv): ports that discarded packets, link
errors and link-downs, counters stuck at all ones, where credits ran out, links below the
fabric's usual width or speed (docs/INFINIBAND.md). And optics, FEC and PHY tool output
(ethtool -m, ethtool's FEC and eth-phy statistics, mlxlink text or JSON, SONiC's transceiver
eeprom, status and fec-stats): Rx/Tx power under the module's thresholds, hot modules, flags,
Rx LOS lanes, pre-FEC BER, uncorrectable codewords, link downs, and the likely part
(docs/LINK_HEALTH.md). And kernel messages (dmesg, dmesg -T, journalctl -k, /dev/kmsg records):
NIC firmware health and syndromes, command timeouts, probe failures, PCIe AER and DPC, slot
power, downtrained PCIe links, per NIC adapter (nic_unhealthy, pcie_degraded ...).)")
          .Takes("json", "one JSON object per line: each event, each finding, then a summary")
          .Takes("rules", "the playbooks the log's events are played through")
          .Example("$ railwatch triage rank0.log rdma_statistic.txt"),
      Command("gnmi", RunGnmiCommand)
          .Form("gnmi decode FILE...",
                "captured gNMI notifications -> leaves (and canonical series with --profile)")
          .Describe(
              R"(Captured gNMI notifications (protojson, prototext, gnmic json/event/debug log, gnmi_cli) ->
leaves: path = value @ time; with --profile, the canonical series each leaf maps to (or
"unmapped"). - reads standard input.)")
          .Takes("format")
          .Takes("profile")
          .Takes("profiles_dir")
          .Takes("json", "print the leaves as JSON")
          .Example("$ railwatch gnmi decode capture.json --profile=sonic"),
      Command("metrics", RunMetricsCommand)
          .Form("metrics", "the canonical series and where each comes from, per driver")
          .Describe("The canonical series and where each comes from, per driver.")
          .Takes("markdown")
          .Args(0, 0, "takes no arguments")
          .Example("$ railwatch metrics --markdown > docs/METRICS.md"),
      Command("version", RunVersionCommand)
          .Form("version", "print the version")
          .Describe("Prints the version.")
          .Args(0, 0, "takes no arguments")
          .Example(absl::StrCat("$ railwatch version\nrailwatch ", kVersion)),
      Command("help", RunHelpCommand)
          .Form("help [COMMAND]", "this text, or one command's usage (so does COMMAND --help)")
          .Describe("The command list, or one command's usage.")
          .Example("$ railwatch help top"),
  };
  return commands;
}

int RunCommand(const std::vector<std::string>& args, const CliOptions& options, std::ostream& out,
               std::ostream& err) {
  if (args.empty()) {
    err << CommandHelp();
    return kExitUsage;
  }
  const CommandSpec* spec = FindCommand(args[0]);
  if (spec == nullptr) {
    std::vector<std::string> names;
    for (const CommandSpec& c : Commands()) names.push_back(c.name);
    const std::string hint = ClosestWord(args[0], names);
    err << "railwatch: unknown command \"" << args[0] << "\""
        << (hint.empty() ? "" : " (did you mean `" + hint + "`?)") << "\n\n"
        << CommandHelp();
    return kExitUsage;
  }
  if (AsksForHelp(args)) return RunHelpCommand({"help", spec->name}, options, out, err);
  const int n = static_cast<int>(args.size()) - 1;
  if (n < spec->min_args || (spec->max_args >= 0 && n > spec->max_args)) {
    return UsageError(spec->name, spec->args_problem, err);
  }
  return spec->run(args, options, out, err);
}

}  // namespace railwatch
