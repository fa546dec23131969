#include "daemon/query_service.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/logging.h"
#include "common/text.h"
#include "daemon/diagnosis_filter.h"
#include "daemon/series_query.h"
#include "engine/alert_proto.h"

namespace railwatch {
namespace {

constexpr absl::Duration kUnknownInterval = absl::Seconds(10);
constexpr absl::Duration kMinSilence = absl::Seconds(5);
constexpr double kMaxLagSeconds = 5;

grpc::ServerUnaryReactor* Done(grpc::CallbackServerContext* ctx, grpc::Status status) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish(std::move(status));
  return reactor;
}

grpc::Status ToGrpc(const absl::Status& s) {
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

// A switch agent's targets, from the railwatch_gnmi_target_* series it sends (labelled
// agent=<id>, target=<name>): the daemon already stores them, so the agent needs no second
// channel for its health.
void AddTargetHealth(const SeriesStore& store, v1::AgentInfo& agent) {
  const std::vector<LabelMatcher> of_agent = {{"agent", agent.agent_id()}};
  for (SeriesRef ref : store.Select("railwatch_gnmi_target_connected", of_agent)) {
    const SeriesMeta meta = store.Meta(ref);
    const std::string* name = FindLabel(meta.labels, "target");
    std::optional<Sample> connected = store.Latest(ref);
    if (name == nullptr || !connected) continue;
    v1::TargetHealth& t = *agent.add_targets();
    t.set_name(*name);
    t.set_connected(connected->value > 0);
    t.set_reported_unix_nano(connected->time_unix_nano);
    const std::vector<LabelMatcher> of_target = {{"agent", agent.agent_id()}, {"target", *name}};
    auto latest = [&](std::string_view metric) -> double {
      for (SeriesRef r : store.Select(metric, of_target)) {
        if (std::optional<Sample> s = store.Latest(r)) return s->value;
      }
      return 0;
    };
    t.set_last_update_unix_nano(
        static_cast<int64_t>(latest("railwatch_gnmi_target_last_update_timestamp_seconds") * 1e9));
    t.set_updates(static_cast<uint64_t>(latest("railwatch_gnmi_target_updates_total")));
    t.set_errors(static_cast<uint64_t>(latest("railwatch_gnmi_target_errors_total")));
    t.set_reconnects(static_cast<uint64_t>(latest("railwatch_gnmi_target_reconnects_total")));
    t.set_unmapped_leaves(static_cast<uint64_t>(latest("railwatch_gnmi_unmapped_leaves_total")));
  }
  std::sort(
      agent.mutable_targets()->begin(), agent.mutable_targets()->end(),
      [](const v1::TargetHealth& a, const v1::TargetHealth& b) { return a.name() < b.name(); });
}

// The labels an agent's own series carry (agent/agent.cc): host agents add host=<hostname> to
// every series; a switch agent's series describe switches, so its own say agent=<id>.
LabelMatcher OwnLabel(const v1::AgentInfo& agent) {
  if (agent.role() == v1::AGENT_ROLE_SWITCH || agent.role() == v1::AGENT_ROLE_IB_FABRIC) {
    return {"agent", agent.agent_id()};
  }
  return {"host", agent.hostname()};
}

// How often the agent collects: the spacing of its last two collector reports.
absl::Duration CollectionInterval(const SeriesStore& store, const std::vector<SeriesRef>& refs) {
  for (SeriesRef ref : refs) {
    std::optional<Sample> last = store.Latest(ref);
    if (!last) continue;
    std::vector<Sample> recent =
        store.Range(ref, last->time_unix_nano - absl::ToInt64Nanoseconds(absl::Minutes(2)),
                    last->time_unix_nano);
    if (recent.size() < 2) continue;
    const int64_t step = recent.back().time_unix_nano - recent[recent.size() - 2].time_unix_nano;
    if (step > 0) return absl::Nanoseconds(step);
  }
  return kUnknownInterval;
}

}  // namespace

void AssessAgent(const SeriesStore& store, int64_t now, v1::AgentInfo& agent) {
  agent.clear_problems();
  agent.clear_failing_collectors();
  if (agent.role() == v1::AGENT_ROLE_SWITCH && agent.targets().empty()) {
    AddTargetHealth(store, agent);
  }
  const LabelMatcher own = OwnLabel(agent);
  std::vector<SeriesRef> reports;
  for (const std::string& collector : agent.collectors()) {
    for (SeriesRef ref :
         store.Select("railwatch_collector_success", {own, {"collector", collector}})) {
      reports.push_back(ref);
      std::optional<Sample> s = store.Latest(ref);
      if (s && s->value == 0) {
        agent.add_failing_collectors(collector);
        agent.add_problems(absl::StrCat("collector ", collector, " failing"));
      }
    }
  }
  if (!agent.connected()) {
    agent.set_health("disconnected");
    agent.add_problems(
        absl::StrCat("disconnected since ", FormatTime(agent.last_seen_unix_nano())));
    return;
  }
  for (const v1::TargetHealth& t : agent.targets()) {
    if (!t.connected()) agent.add_problems(absl::StrCat("gNMI target ", t.name(), " disconnected"));
  }
  if (agent.lag_seconds() > kMaxLagSeconds) {
    agent.add_problems(absl::StrFormat("lag %.1fs", agent.lag_seconds()));
  }
  const absl::Duration silence_limit =
      std::max(3 * CollectionInterval(store, reports), kMinSilence);
  const absl::Duration silent_for = absl::Nanoseconds(now - agent.last_seen_unix_nano());
  if (silent_for > silence_limit) {
    agent.set_health("silent");
    agent.add_problems(absl::StrCat("nothing received for ", HumanDuration(silent_for)));
    return;
  }
  agent.set_health(agent.problems().empty() ? "ok" : "degraded");
}

QueryService::QueryService(Deps deps) : deps_(std::move(deps)) {
  for (const Playbook& p : deps_.engine.playbooks()) playbook_names_.push_back(p.name);
}

grpc::Status QueryService::Allowed(grpc::CallbackServerContext* ctx, Role role,
                                   std::string_view method) {
  if (deps_.auth == nullptr) return grpc::Status::OK;
  return deps_.auth->AuthorizeQuery(*ctx, role, method);
}

grpc::ServerUnaryReactor* QueryService::ForgetAgent(grpc::CallbackServerContext* ctx,
                                                    const v1::ForgetAgentRequest* request,
                                                    v1::ForgetAgentResponse* response) {
  if (grpc::Status s = Allowed(ctx, Role::kAdmin, "ForgetAgent"); !s.ok()) return Done(ctx, s);
  if (request->agent_id().empty()) {
    return Done(ctx, {grpc::StatusCode::INVALID_ARGUMENT, "agent_id is empty"});
  }
  absl::StatusOr<v1::AgentInfo> forgotten = deps_.agents.Forget(request->agent_id());
  if (!forgotten.ok()) return Done(ctx, ToGrpc(forgotten.status()));
  spdlog::info("agent {} forgotten at a client's request ({})", request->agent_id(), ctx->peer());
  *response->mutable_forgotten() = std::move(*forgotten);
  return Done(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* QueryService::ListDiagnoses(grpc::CallbackServerContext* ctx,
                                                      const v1::ListDiagnosesRequest* request,
                                                      v1::ListDiagnosesResponse* response) {
  if (grpc::Status s = Allowed(ctx, Role::kReadOnly, "ListDiagnoses"); !s.ok()) return Done(ctx, s);
  if (absl::Status s = DiagnosisFilter::Validate(request->filter(), playbook_names_); !s.ok()) {
    return Done(ctx, ToGrpc(s));
  }
  const DiagnosisFilter filter(request->filter());
  std::vector<v1::Diagnosis> matching;
  for (const AlertRecord& a : deps_.engine.List()) {
    v1::Diagnosis d = ToDiagnosis(a);
    if (filter.Matches(d)) matching.push_back(std::move(d));
  }
  std::stable_sort(matching.begin(), matching.end(),
                   [](const v1::Diagnosis& a, const v1::Diagnosis& b) {
                     return a.active_since_unix_nano() > b.active_since_unix_nano();
                   });
  if (request->limit() > 0 && matching.size() > request->limit()) {
    matching.resize(request->limit());
  }
  for (v1::Diagnosis& d : matching) *response->add_diagnoses() = std::move(d);
  return Done(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* QueryService::GetDiagnosis(grpc::CallbackServerContext* ctx,
                                                     const v1::GetDiagnosisRequest* request,
                                                     v1::Diagnosis* response) {
  if (grpc::Status s = Allowed(ctx, Role::kReadOnly, "GetDiagnosis"); !s.ok()) return Done(ctx, s);
  if (request->id().empty()) {
    return Done(ctx, {grpc::StatusCode::INVALID_ARGUMENT, "id is empty"});
  }
  std::optional<AlertRecord> a = deps_.engine.Get(request->id());
  if (!a) {
    return Done(ctx, {grpc::StatusCode::NOT_FOUND,
                      absl::StrCat("no diagnosis with id \"", request->id(), "\"")});
  }
  *response = ToDiagnosis(*a);
  return Done(ctx, grpc::Status::OK);
}

grpc::ServerWriteReactor<v1::DiagnosisEvent>* QueryService::WatchDiagnoses(
    grpc::CallbackServerContext* ctx, const v1::WatchDiagnosesRequest* request) {
  if (grpc::Status s = Allowed(ctx, Role::kReadOnly, "WatchDiagnoses"); !s.ok()) {
    return RefusedWatch(s);
  }
  if (deps_.watches == nullptr) {
    return RefusedWatch({grpc::StatusCode::UNAVAILABLE, "this server does not stream diagnoses"});
  }
  if (absl::Status s = DiagnosisFilter::Validate(request->filter(), playbook_names_); !s.ok()) {
    return RefusedWatch(ToGrpc(s));
  }
  return deps_.watches->Watch(ctx, *request);
}

grpc::ServerUnaryReactor* QueryService::QuerySeries(grpc::CallbackServerContext* ctx,
                                                    const v1::QuerySeriesRequest* request,
                                                    v1::QuerySeriesResponse* response) {
  if (grpc::Status s = Allowed(ctx, Role::kReadOnly, "QuerySeries"); !s.ok()) return Done(ctx, s);
  absl::StatusOr<v1::QuerySeriesResponse> result =
      RunSeriesQuery(*request, {deps_.store, deps_.events, deps_.fabric}, deps_.clock.NowNanos());
  if (!result.ok()) return Done(ctx, ToGrpc(result.status()));
  *response = std::move(*result);
  return Done(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* QueryService::ListAgents(grpc::CallbackServerContext* ctx,
                                                   const v1::ListAgentsRequest*,
                                                   v1::ListAgentsResponse* response) {
  if (grpc::Status s = Allowed(ctx, Role::kReadOnly, "ListAgents"); !s.ok()) return Done(ctx, s);
  const int64_t now = deps_.clock.NowNanos();
  for (v1::AgentInfo& a : deps_.agents.List()) {
    AssessAgent(deps_.store, now, a);
    *response->add_agents() = std::move(a);
  }
  return Done(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* QueryService::Topology(grpc::CallbackServerContext* ctx,
                                                 const v1::TopologyRequest* request,
                                                 v1::TopologyResponse* response) {
  if (grpc::Status s = Allowed(ctx, Role::kReadOnly, "Topology"); !s.ok()) return Done(ctx, s);
  const std::string view = request->view().empty() ? "effective" : request->view();
  if (view != "effective" && view != "discovered" && view != "declared") {
    return Done(ctx, grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                  "view must be effective, discovered or declared, not \"" +
                                      view + "\""));
  }
  response->set_file(deps_.topology_file);
  response->set_view(view);
  std::shared_ptr<const railwatch::Topology> topology =
      deps_.fabric ? deps_.fabric->topology() : nullptr;
  absl::flat_hash_map<std::string, Provenance> provenance;
  if (deps_.topology_watch != nullptr) {
    TopologyWatch::View v = deps_.topology_watch->view();
    if (view == "discovered") topology = v.discovered;
    if (view == "declared") topology = v.declared;
    if (view == "effective") provenance = std::move(v.provenance);
    if (view == "discovered") provenance = std::move(v.discovered_provenance);
    for (const TopologyDifference& d : v.differences) {
      v1::TopologyDifference& out = *response->add_differences();
      out.set_where(d.where);
      out.set_what(d.what);
      out.set_declared(d.declared);
      out.set_discovered(d.discovered);
      out.set_conflict(d.conflict());
    }
    for (const std::string& n : v.notes) response->add_notes(n);
    response->set_discovered_unix_nano(v.discovered != nullptr ? v.updated_unix_nano : 0);
    const bool file = v.declared != nullptr;
    const bool found = v.discovered != nullptr && (!v.discovered->hosts().empty() ||
                                                   !v.discovered->switches().empty());
    response->set_source(file && found ? "file+discovered" : file ? "file"
                                                           : found ? "discovered"
                                                                   : "none");
  } else if (view != "effective") {
    topology = nullptr;
  } else {
    response->set_source(topology != nullptr ? "file" : "none");
  }
  auto provenance_of = [&](const std::string& key) -> std::string {
    auto it = provenance.find(key);
    return it == provenance.end() ? "" : std::string(ProvenanceName(it->second));
  };
  if (topology != nullptr) {
    response->set_yaml(TopologyToYaml(*topology, view == "declared" ? nullptr : &provenance));
    for (const TopologyHost& h : topology->hosts()) {
      v1::TopologyHost& host = *response->add_hosts();
      host.set_name(h.name);
      for (const TopologyNic& n : h.nics) {
        v1::TopologyNic& nic = *host.add_nics();
        nic.set_device(n.device);
        nic.set_netdev(n.netdev);
        nic.set_rail(n.rail);
        nic.set_switch_(n.switch_name);
        nic.set_switch_port(n.switch_port);
        nic.set_provenance(provenance_of(absl::StrCat(h.name, "/", n.device)));
      }
    }
    for (const TopologySwitch& s : topology->switches()) {
      v1::TopologySwitch& sw = *response->add_switches();
      sw.set_name(s.name);
      sw.set_role(s.role);
      sw.set_dialect(s.dialect);
      for (const TopologyLink& l : s.links) {
        v1::TopologyLink& link = *sw.add_links();
        link.set_port(l.port);
        link.set_peer(l.peer);
        link.set_peer_port(l.peer_port);
        link.set_provenance(provenance_of(absl::StrCat(s.name, "/", l.port)));
      }
    }
  }
  const JobRegistry* jobs = deps_.fabric ? deps_.fabric->jobs() : nullptr;
  if (jobs != nullptr) {
    for (const JobInfo& j : jobs->All()) {
      v1::TopologyJob& job = *response->add_jobs();
      job.set_name(j.name);
      for (const std::string& h : j.hosts) job.add_hosts(h);
      job.set_gpus(j.gpus);
      job.set_ranks(j.ranks);
      job.set_source(j.source);
      job.set_last_seen_unix_nano(j.last_seen_unix_nano);
      job.set_detail(j.detail);
    }
  }
  return Done(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* QueryService::ListPlaybooks(grpc::CallbackServerContext* ctx,
                                                      const v1::ListPlaybooksRequest*,
                                                      v1::ListPlaybooksResponse* response) {
  if (grpc::Status s = Allowed(ctx, Role::kReadOnly, "ListPlaybooks"); !s.ok()) return Done(ctx, s);
  absl::flat_hash_map<std::string, std::pair<uint32_t, uint32_t>> active;  // pending, firing
  for (const AlertRecord& a : deps_.engine.List()) {
    if (a.state == AlertState::kPending) ++active[a.playbook].first;
    if (a.state == AlertState::kFiring) ++active[a.playbook].second;
  }
  for (const Playbook& p : deps_.engine.playbooks()) {
    v1::PlaybookInfo& info = *response->add_playbooks();
    info.set_name(p.name);
    info.set_desc(p.desc);
    info.set_severity(p.severity);
    info.set_enabled(p.enabled);
    info.set_condition(p.condition_text);
    if (p.condition) info.set_canonical_condition(p.condition->ToString());
    info.set_for_seconds(absl::ToDoubleSeconds(p.for_duration));
    info.set_keep_firing_for_seconds(absl::ToDoubleSeconds(p.keep_firing_for));
    for (const std::string& c : p.culprit) info.add_culprit(c);
    for (const std::string& g : p.group_by) info.add_group_by(g);
    info.set_blast_radius(p.blast_radius);
    for (const ExplainRule& rule : p.explains) {
      for (const std::string& symptom : rule.playbooks) info.add_explains(symptom);
    }
    info.set_runbook(p.runbook);
    for (const std::string& t : p.tags) info.add_tags(t);
    info.set_source(p.source);
    if (auto it = active.find(p.name); it != active.end()) {
      info.set_pending(it->second.first);
      info.set_firing(it->second.second);
    }
  }
  return Done(ctx, grpc::Status::OK);
}

}  // namespace railwatch
