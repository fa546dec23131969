// `railwatch agents` and `railwatch playbooks`: what feeds the daemon, and what it looks for.
#include <memory>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "cli/client.h"
#include "cli/format.h"
#include "cli/query_commands.h"
#include "cli/table.h"
#include "common/text.h"
#include "engine/diagnosis_text.h"

namespace railwatch {
namespace {

// A daemon from before health existed says only whether the agent is connected.
std::string Health(const v1::AgentInfo& a) {
  if (!a.health().empty()) return a.health();
  return a.connected() ? "connected" : "disconnected";
}

std::string TargetsTable(const v1::ListAgentsResponse& response) {
  Table targets(
      {"AGENT", "TARGET", "STATE", "LAST UPDATE", "UPDATES", "ERRORS", "RECONNECTS", "UNMAPPED"});
  for (const v1::AgentInfo& a : response.agents()) {
    for (const v1::TargetHealth& h : a.targets()) {
      targets.Add({a.agent_id(), h.name(), h.connected() ? "connected" : "disconnected",
                   h.last_update_unix_nano() > 0 ? Ago(h.last_update_unix_nano()) : "never",
                   absl::StrCat(h.updates()), absl::StrCat(h.errors()),
                   absl::StrCat(h.reconnects()), absl::StrCat(h.unmapped_leaves())});
    }
  }
  return targets.rows() == 0 ? "" : targets.Render();
}

// `railwatch agents forget ID`: an admin removes a decommissioned agent from the list.
int ForgetAgent(const std::string& agent_id, const CliOptions& o, std::ostream& out,
                std::ostream& err) {
  v1::ForgetAgentRequest request;
  request.set_agent_id(agent_id);
  v1::ForgetAgentResponse response;
  if (int rc = QueryOnce(o, &v1::Query::Stub::ForgetAgent, request, &response, err);
      rc != kExitOk) {
    return rc;
  }
  if (o.json) {
    out << ToJson(response) << "\n";
  } else {
    out << "Forgot agent " << agent_id << " (" << response.forgotten().hostname() << ", last seen "
        << Ago(response.forgotten().last_seen_unix_nano()) << ").\n";
  }
  return kExitOk;
}

}  // namespace

int RunAgents(const CommandArgs& args, const CliOptions& o, std::ostream& out, std::ostream& err) {
  if (args.size() >= 2 && args[1] == "forget") {
    if (args.size() != 3) return UsageError("agents", "forget takes one agent id", err);
    return ForgetAgent(args[2], o, out, err);
  }
  if (args.size() != 1) return UsageError("agents", "takes no arguments (or forget ID)", err);
  v1::ListAgentsResponse response;
  if (std::optional<int> done = QueryForTable(o, &v1::Query::Stub::ListAgents,
                                              v1::ListAgentsRequest(), &response, out, err)) {
    return *done;
  }
  if (response.agents().empty()) {
    out << "No agents have connected.\n";
    return kExitOk;
  }
  Table t({"AGENT", "ROLE", "HOST", "HEALTH", "LAST SEEN", "LAG", "SERIES", "POINTS", "VERSION",
           "PEER", "PROBLEMS"});
  for (const v1::AgentInfo& a : response.agents()) {
    t.Add({a.agent_id(), RoleName(a.role()), a.hostname(), Health(a), Ago(a.last_seen_unix_nano()),
           absl::StrFormat("%.3fs", a.lag_seconds()), absl::StrCat(a.series()),
           absl::StrCat(a.points_received()), a.version(), a.peer(),
           a.problems().empty() ? "-" : absl::StrJoin(a.problems(), "; ")});
  }
  out << t.Render();
  // Switch agents: one row per gNMI target.
  const std::string targets = TargetsTable(response);
  if (!targets.empty()) out << "\n" << targets;
  return kExitOk;
}

int RunPlaybooks(const CommandArgs& args, const CliOptions& o, std::ostream& out,
                 std::ostream& err) {
  v1::ListPlaybooksResponse response;
  if (std::optional<int> done = QueryForTable(o, &v1::Query::Stub::ListPlaybooks,
                                              v1::ListPlaybooksRequest(), &response, out, err)) {
    return *done;
  }
  if (response.playbooks().empty()) {
    out << "The daemon has no playbooks loaded.\n";
    return kExitOk;
  }
  Table t({"NAME", "SEVERITY", "ENABLED", "PENDING", "FIRING", "FOR", "SOURCE"});
  for (const v1::PlaybookInfo& p : response.playbooks()) {
    t.Add({p.name(), SeverityName(p.severity()), p.enabled() ? "yes" : "no",
           absl::StrCat(p.pending()), absl::StrCat(p.firing()),
           p.for_seconds() > 0 ? HumanDuration(absl::Seconds(p.for_seconds())) : "0s", p.source()});
  }
  out << t.Render();
  return kExitOk;
}

}  // namespace railwatch
