#include "cli/commands.h"

#include <chrono>
#include <iostream>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "cli/gnmi_decode.h"
#include "cli/rules.h"
#include "cli/table.h"
#include "cli/triage.h"
#include "common/metrics_doc.h"
#include "common/text.h"
#include "common/version.h"
#include "exporters/fabric_collectable.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "railwatch/v1/query.grpc.pb.h"

namespace railwatch {
namespace {

std::string ToJson(const google::protobuf::Message& m) {
  std::string json;
  google::protobuf::util::JsonPrintOptions opts;
  opts.add_whitespace = true;
  opts.preserve_proto_field_names = true;
  (void)google::protobuf::util::MessageToJsonString(m, &json, opts);
  return json;
}

int FromStatus(const grpc::Status& s, const CliOptions& o, std::ostream& err) {
  switch (s.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      err << "railwatch: cannot reach railwatchd at " << o.server << ": " << s.error_message()
          << "\n(is the daemon running? pass --server=HOST:PORT)\n";
      return kExitUnavailable;
    case grpc::StatusCode::NOT_FOUND:
      err << "railwatch: " << s.error_message() << "\n";
      return kExitNotFound;
    default:
      err << "railwatch: request failed: " << s.error_message() << " (code "
          << static_cast<int>(s.error_code()) << ")\n";
      return kExitError;
  }
}

std::unique_ptr<v1::Query::Stub> Connect(const CliOptions& o) {
  return v1::Query::NewStub(grpc::CreateChannel(o.server, grpc::InsecureChannelCredentials()));
}

void SetDeadline(grpc::ClientContext& ctx, const CliOptions& o) {
  ctx.set_deadline(std::chrono::system_clock::now() +
                   std::chrono::milliseconds(static_cast<int64_t>(o.timeout_seconds * 1000)));
}

std::string Ago(int64_t unix_nanos) {
  if (unix_nanos == 0) return "-";
  absl::Duration d = absl::Now() - absl::FromUnixNanos(unix_nanos);
  if (d < absl::Seconds(1)) return "now";
  return HumanDuration(absl::Trunc(d, absl::Seconds(1))) + " ago";
}

std::string StateName(v1::DiagnosisState s) {
  switch (s) {
    case v1::DIAGNOSIS_STATE_PENDING: return "pending";
    case v1::DIAGNOSIS_STATE_FIRING: return "firing";
    case v1::DIAGNOSIS_STATE_RESOLVED: return "resolved";
    default: return "unknown";
  }
}

std::string CulpritText(const v1::Diagnosis& d) {
  std::vector<std::string> parts;
  for (const v1::Label& l : d.culprit()) parts.push_back(absl::StrCat(l.name(), "=", l.value()));
  return absl::StrJoin(parts, " ");
}

int Diagnoses(const CliOptions& o, std::ostream& out, std::ostream& err) {
  v1::ListDiagnosesRequest req;
  if (o.state == "active") {
    req.mutable_filter()->add_states(v1::DIAGNOSIS_STATE_PENDING);
    req.mutable_filter()->add_states(v1::DIAGNOSIS_STATE_FIRING);
  } else if (o.state == "firing") {
    req.mutable_filter()->add_states(v1::DIAGNOSIS_STATE_FIRING);
  } else if (o.state == "pending") {
    req.mutable_filter()->add_states(v1::DIAGNOSIS_STATE_PENDING);
  } else if (o.state == "resolved") {
    req.mutable_filter()->add_states(v1::DIAGNOSIS_STATE_RESOLVED);
  } else if (o.state != "all") {
    err << "railwatch: --state must be one of active, firing, pending, resolved, all\n";
    return kExitUsage;
  }
  grpc::ClientContext ctx;
  SetDeadline(ctx, o);
  v1::ListDiagnosesResponse resp;
  grpc::Status s = Connect(o)->ListDiagnoses(&ctx, req, &resp);
  if (!s.ok()) return FromStatus(s, o, err);
  if (o.json) {
    out << ToJson(resp) << "\n";
    return kExitOk;
  }
  if (resp.diagnoses().empty()) {
    out << "No " << (o.state == "all" ? "" : o.state + " ") << "diagnoses.\n";
    return kExitOk;
  }
  Table t({"ID", "STATE", "SEVERITY", "PLAYBOOK", "CULPRIT", "SINCE", "SUMMARY"});
  for (const v1::Diagnosis& d : resp.diagnoses()) {
    t.Add({d.id(), StateName(d.state()), SeverityName(d.severity()), d.playbook(), CulpritText(d),
           Ago(d.active_since_unix_nano()), d.summary()});
  }
  out << t.Render();
  return kExitOk;
}

int Explain(const std::vector<std::string>& args, const CliOptions& o, std::ostream& out,
            std::ostream& err) {
  if (args.size() != 2) {
    err << "usage: railwatch explain ID   (IDs are listed by `railwatch diagnoses`)\n";
    return kExitUsage;
  }
  v1::GetDiagnosisRequest req;
  req.set_id(args[1]);
  grpc::ClientContext ctx;
  SetDeadline(ctx, o);
  v1::Diagnosis d;
  grpc::Status s = Connect(o)->GetDiagnosis(&ctx, req, &d);
  if (!s.ok()) return FromStatus(s, o, err);
  if (o.json) {
    out << ToJson(d) << "\n";
    return kExitOk;
  }
  out << d.summary() << "\n\n";
  out << "  id        " << d.id() << "\n";
  out << "  playbook  " << d.playbook() << " (" << SeverityName(d.severity()) << ", "
      << StateName(d.state()) << ")\n";
  out << "  culprit   " << CulpritText(d) << "\n";
  if (!d.location().empty()) out << "  where     " << d.location() << "\n";
  out << "  since     " << FormatTime(d.active_since_unix_nano()) << " ("
      << Ago(d.active_since_unix_nano()) << ")\n";
  if (d.fired_at_unix_nano() != 0) {
    out << "  fired     " << FormatTime(d.fired_at_unix_nano()) << "\n";
  }
  if (d.resolved_at_unix_nano() != 0) {
    out << "  resolved  " << FormatTime(d.resolved_at_unix_nano()) << "\n";
  }
  if (!d.explained_by().empty()) {
    out << "  explained by " << d.explained_by() << " (this was a symptom of it)\n";
  }
  if (d.previous_incidents() > 0) {
    out << "  repeats   " << d.previous_incidents()
        << " earlier incident(s) of this playbook here in the last week\n";
  }
  const v1::BlastRadius& b = d.blast_radius();
  if (!b.scope().empty()) {
    out << "  blast     " << b.scope() << ": " << b.hosts_size() << " host(s)";
    if (b.gpus() > 0) {
      out << ", " << b.gpus() << " GPUs stalled, about $"
          << absl::StrFormat("%.0f", b.cost_per_minute()) << " a minute";
    }
    out << "\n";
    for (const v1::JobImpact& j : b.jobs()) {
      out << "    job " << j.job() << ": " << j.gpus() << " GPUs, " << j.ranks() << " ranks, "
          << j.hosts_size() << " host(s) in scope\n";
    }
  }
  out << "\n" << d.description() << "\n";
  int symptoms = 0;
  for (const v1::Evidence& e : d.evidence()) {
    if (e.kind() == "symptom") {
      if (symptoms++ == 0) out << "\nSymptoms it explains (" << d.explains_size() << "):\n";
      out << "  " << FormatTime(e.time_unix_nano()) << "  " << e.playbook() << "  "
          << e.series() << "\n";
      if (!e.raw().empty()) out << "      " << e.raw() << "\n";
      continue;
    }
    out << "\nEvidence: " << e.series() << "\n  " << e.summary() << "\n";
    if (!e.raw().empty()) out << "  " << e.raw() << "\n";
    for (const v1::EvidencePoint& p : e.points()) {
      out << "    " << FormatTime(p.time_unix_nano()) << "  " << absl::StrFormat("%.17g", p.value())
          << "\n";
    }
  }
  out << "\nRunbook: " << d.runbook() << "\n";
  if (!d.commands().empty()) {
    out << "Commands (culprit filled in):\n";
    for (const std::string& c : d.commands()) out << "  " << c << "\n";
  }
  return kExitOk;
}

std::string RoleName(v1::AgentRole r) {
  switch (r) {
    case v1::AGENT_ROLE_HOST: return "host";
    case v1::AGENT_ROLE_SWITCH: return "switch";
    default: return "unknown";
  }
}

int Agents(const CliOptions& o, std::ostream& out, std::ostream& err) {
  grpc::ClientContext ctx;
  SetDeadline(ctx, o);
  v1::ListAgentsResponse resp;
  grpc::Status s = Connect(o)->ListAgents(&ctx, v1::ListAgentsRequest(), &resp);
  if (!s.ok()) return FromStatus(s, o, err);
  if (o.json) {
    out << ToJson(resp) << "\n";
    return kExitOk;
  }
  if (resp.agents().empty()) {
    out << "No agents have connected.\n";
    return kExitOk;
  }
  Table t({"AGENT", "ROLE", "HOST", "STATE", "LAST SEEN", "LAG", "SERIES", "POINTS", "VERSION",
           "PEER"});
  for (const v1::AgentInfo& a : resp.agents()) {
    t.Add({a.agent_id(), RoleName(a.role()), a.hostname(),
           a.connected() ? "connected" : "disconnected", Ago(a.last_seen_unix_nano()),
           absl::StrFormat("%.3fs", a.lag_seconds()), absl::StrCat(a.series()),
           absl::StrCat(a.points_received()), a.version(), a.peer()});
  }
  out << t.Render();
  // Switch agents: one row per gNMI target.
  bool any_targets = false;
  Table targets({"AGENT", "TARGET", "STATE", "LAST UPDATE", "UPDATES", "ERRORS", "RECONNECTS",
                 "UNMAPPED"});
  for (const v1::AgentInfo& a : resp.agents()) {
    for (const v1::TargetHealth& h : a.targets()) {
      any_targets = true;
      targets.Add({a.agent_id(), h.name(), h.connected() ? "connected" : "disconnected",
                   h.last_update_unix_nano() > 0 ? Ago(h.last_update_unix_nano()) : "never",
                   absl::StrCat(h.updates()), absl::StrCat(h.errors()),
                   absl::StrCat(h.reconnects()), absl::StrCat(h.unmapped_leaves())});
    }
  }
  if (any_targets) out << "\n" << targets.Render();
  return kExitOk;
}

}  // namespace

std::string CommandHelp() {
  return R"(railwatch: query the railwatch daemon.

Usage: railwatch [flags] COMMAND [args]

Commands:
  diagnoses            list diagnoses (default: pending and firing); --state=firing|pending|resolved|all
  explain ID           one diagnosis in full: culprit, evidence with its readings, runbook
  agents               list agents: connection, last seen, lag, series
  rules validate [PATH...]
                       check playbook files (default: the shipped rules, or --rules=PATHS);
                       every problem as file:line:column: error[code]: message
  rules list [PATH...] the playbooks: severity, for, tags, where each is defined
  rules describe NAME [PATH...]
                       one playbook in full: condition as written and canonical, the series
                       and events it reads, culprit, grouping, blast radius, explains
  rules test FILE|DIR...
                       run playbook unit tests (*.test.yaml): promtool-style input series and
                       events, expected diagnoses; failures name file:line; no daemon
  metrics [--markdown] the canonical series and where each comes from, per driver
  triage FILE...       offline triage of NCCL, PyTorch, NCCL RAS and nccl-tests logs (- is stdin):
                       what failed, where, the likely fabric cause, what to run next; no daemon
  gnmi decode FILE...  captured gNMI notifications (protojson, prototext, gnmic json/event/debug
                       log, gnmi_cli; - is stdin) -> leaves: path = value @ time;
                       --format=auto|..., --profile=NAME|FILE.yaml [--profiles_dir=DIR] adds the
                       canonical series each leaf maps to (or "unmapped")
  version              print the version
  help                 this text

Flags:
  --server=HOST:PORT   railwatchd's gRPC address (default 127.0.0.1:9740, or $RAILWATCH_SERVER)
  --json               machine-readable output
  --timeout=SECONDS    per-request deadline (default 5)

Exit codes: 0 ok, 1 request failed, 2 usage, 3 daemon unreachable, 4 not found, 5 invalid input.
)";
}

int RunCommand(const std::vector<std::string>& args, const CliOptions& options, std::ostream& out,
               std::ostream& err) {
  if (args.empty() || args[0] == "help") {
    (args.empty() ? err : out) << CommandHelp();
    return args.empty() ? kExitUsage : kExitOk;
  }
  const std::string& cmd = args[0];
  if (cmd == "diagnoses") return Diagnoses(options, out, err);
  if (cmd == "agents") return Agents(options, out, err);
  if (cmd == "explain") return Explain(args, options, out, err);
  if (cmd == "rules") {
    return RunRules(RulesCommand{std::vector<std::string>(args.begin() + 1, args.end()),
                                 options.json, options.rules_dir},
                    out, err);
  }
  if (cmd == "triage") {
    return RunTriage(std::vector<std::string>(args.begin() + 1, args.end()), options.json,
                     std::cin, out, err);
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
