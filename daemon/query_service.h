#pragma once

#include "daemon/agent_registry.h"
#include "engine/engine.h"
#include "railwatch/v1/query.grpc.pb.h"

namespace railwatch {

class QueryService final : public v1::Query::CallbackService {
 public:
  QueryService(const Engine& engine, const AgentRegistry& agents)
      : engine_(engine), agents_(agents) {}

  grpc::ServerUnaryReactor* ListDiagnoses(grpc::CallbackServerContext* ctx,
                                          const v1::ListDiagnosesRequest* request,
                                          v1::ListDiagnosesResponse* response) override;
  grpc::ServerUnaryReactor* GetDiagnosis(grpc::CallbackServerContext* ctx,
                                         const v1::GetDiagnosisRequest* request,
                                         v1::Diagnosis* response) override;
  grpc::ServerUnaryReactor* ListAgents(grpc::CallbackServerContext* ctx,
                                       const v1::ListAgentsRequest* request,
                                       v1::ListAgentsResponse* response) override;

 private:
  const Engine& engine_;
  const AgentRegistry& agents_;
};

}  // namespace railwatch
