#include "daemon/query_service.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace railwatch {
namespace {

grpc::ServerUnaryReactor* Done(grpc::CallbackServerContext* ctx, grpc::Status status) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish(std::move(status));
  return reactor;
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
    t.set_last_update_unix_nano(static_cast<int64_t>(
        latest("railwatch_gnmi_target_last_update_timestamp_seconds") * 1e9));
    t.set_updates(static_cast<uint64_t>(latest("railwatch_gnmi_target_updates_total")));
    t.set_errors(static_cast<uint64_t>(latest("railwatch_gnmi_target_errors_total")));
    t.set_reconnects(static_cast<uint64_t>(latest("railwatch_gnmi_target_reconnects_total")));
    t.set_unmapped_leaves(static_cast<uint64_t>(latest("railwatch_gnmi_unmapped_leaves_total")));
  }
  std::sort(agent.mutable_targets()->begin(), agent.mutable_targets()->end(),
            [](const v1::TargetHealth& a, const v1::TargetHealth& b) { return a.name() < b.name(); });
}

}  // namespace

grpc::ServerUnaryReactor* QueryService::ListDiagnoses(grpc::CallbackServerContext* ctx,
                                                      const v1::ListDiagnosesRequest* request,
                                                      v1::ListDiagnosesResponse* response) {
  for (v1::Diagnosis& d : engine_.List()) {
    const auto& states = request->filter().states();
    if (!states.empty() &&
        std::find(states.begin(), states.end(), d.state()) == states.end()) {
      continue;
    }
    *response->add_diagnoses() = std::move(d);
  }
  return Done(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* QueryService::GetDiagnosis(grpc::CallbackServerContext* ctx,
                                                     const v1::GetDiagnosisRequest* request,
                                                     v1::Diagnosis* response) {
  std::optional<v1::Diagnosis> d = engine_.Get(request->id());
  if (!d) {
    return Done(ctx, {grpc::StatusCode::NOT_FOUND,
                      absl::StrCat("no diagnosis with id \"", request->id(), "\"")});
  }
  *response = std::move(*d);
  return Done(ctx, grpc::Status::OK);
}

grpc::ServerUnaryReactor* QueryService::ListAgents(grpc::CallbackServerContext* ctx,
                                                   const v1::ListAgentsRequest*,
                                                   v1::ListAgentsResponse* response) {
  for (v1::AgentInfo& a : agents_.List()) {
    if (store_ != nullptr && a.role() == v1::AGENT_ROLE_SWITCH) AddTargetHealth(*store_, a);
    *response->add_agents() = std::move(a);
  }
  return Done(ctx, grpc::Status::OK);
}

}  // namespace railwatch
