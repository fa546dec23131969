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

}  // namespace

grpc::ServerUnaryReactor* QueryService::ListDiagnoses(grpc::CallbackServerContext* ctx,
                                                      const v1::ListDiagnosesRequest* request,
                                                      v1::ListDiagnosesResponse* response) {
  for (v1::Diagnosis& d : engine_.List()) {
    const auto& states = request->states();
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
  for (v1::AgentInfo& a : agents_.List()) *response->add_agents() = std::move(a);
  return Done(ctx, grpc::Status::OK);
}

}  // namespace railwatch
