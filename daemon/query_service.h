#pragma once

#include "daemon/agent_registry.h"
#include "engine/engine.h"
#include "store/series_store.h"
#include "railwatch/v1/query.grpc.pb.h"

namespace railwatch {

class QueryService final : public v1::Query::CallbackService {
 public:
  // `store`, when given, supplies the gNMI target health of switch agents in ListAgents.
  QueryService(const Engine& engine, const AgentRegistry& agents,
               const SeriesStore* store = nullptr)
      : engine_(engine), agents_(agents), store_(store) {}

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
  const SeriesStore* store_;
};

}  // namespace railwatch
