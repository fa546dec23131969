#pragma once

#include <string>
#include <vector>

#include "common/clock.h"
#include "daemon/agent_registry.h"
#include "daemon/auth.h"
#include "daemon/diagnosis_watch.h"
#include "engine/engine.h"
#include "store/event_store.h"
#include "store/series_store.h"
#include "daemon/topology_watch.h"
#include "topology/fabric_map.h"
#include "railwatch/v1/query.grpc.pb.h"

namespace railwatch {

// The Query API (proto/railwatch/v1/query.proto, docs/QUERY_API.md) on gRPC's
// callback API. Each call reads the engine, the agent registry, the stores and the topology
// through their own locks; WatchDiagnoses streams from a DiagnosisWatchHub.
class QueryService final : public v1::Query::CallbackService {
 public:
  struct Deps {
    const Engine& engine;
    AgentRegistry& agents;  // ForgetAgent removes from it
    const SeriesStore& store;
    const Clock& clock;
    const EventStore* events = nullptr;  // expressions may count events
    const FabricMap* fabric = nullptr;   // topology and jobs; null: none
    std::string topology_file;           // as given to --topology
    // The map's sources (file, discovery) and their differences; null: the fabric's map only.
    const TopologyWatch* topology_watch = nullptr;
    DiagnosisWatchHub* watches = nullptr;  // null: WatchDiagnoses answers UNAVAILABLE
    // Who may call what (daemon/auth.h); null: everyone may call everything.
    Authenticator* auth = nullptr;
  };
  explicit QueryService(Deps deps);

  grpc::ServerUnaryReactor* ListDiagnoses(grpc::CallbackServerContext* ctx,
                                          const v1::ListDiagnosesRequest* request,
                                          v1::ListDiagnosesResponse* response) override;
  grpc::ServerUnaryReactor* GetDiagnosis(grpc::CallbackServerContext* ctx,
                                         const v1::GetDiagnosisRequest* request,
                                         v1::Diagnosis* response) override;
  grpc::ServerWriteReactor<v1::DiagnosisEvent>* WatchDiagnoses(
      grpc::CallbackServerContext* ctx, const v1::WatchDiagnosesRequest* request) override;
  grpc::ServerUnaryReactor* QuerySeries(grpc::CallbackServerContext* ctx,
                                        const v1::QuerySeriesRequest* request,
                                        v1::QuerySeriesResponse* response) override;
  grpc::ServerUnaryReactor* ListAgents(grpc::CallbackServerContext* ctx,
                                       const v1::ListAgentsRequest* request,
                                       v1::ListAgentsResponse* response) override;
  grpc::ServerUnaryReactor* Topology(grpc::CallbackServerContext* ctx,
                                     const v1::TopologyRequest* request,
                                     v1::TopologyResponse* response) override;
  grpc::ServerUnaryReactor* ListPlaybooks(grpc::CallbackServerContext* ctx,
                                          const v1::ListPlaybooksRequest* request,
                                          v1::ListPlaybooksResponse* response) override;
  grpc::ServerUnaryReactor* ForgetAgent(grpc::CallbackServerContext* ctx,
                                        const v1::ForgetAgentRequest* request,
                                        v1::ForgetAgentResponse* response) override;

 private:
  // OK when the caller has `role`; else the refusal (UNAUTHENTICATED, PERMISSION_DENIED).
  grpc::Status Allowed(grpc::CallbackServerContext* ctx, Role role, std::string_view method);

  Deps deps_;
  std::vector<std::string> playbook_names_;  // for filter validation
};

// An agent's health as ListAgents reports it, from what the registry knows and the series the
// agent sends about itself: "disconnected"; "silent" (connected, but nothing stored for 3 x its
// collection interval, at least 5 s; the interval is read from its railwatch_collector_success
// samples, 10 s when unknown); "degraded" (a collector failing, a gNMI target disconnected,
// lag above 5 s); else "ok". Fills health, problems, failing_collectors and, for switch
// agents, targets.
void AssessAgent(const SeriesStore& store, int64_t now, v1::AgentInfo& agent);

}  // namespace railwatch
