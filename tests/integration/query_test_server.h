#pragma once

// An in-process Query service for the query_*_test.cc tests: an Engine over a SeriesStore that
// the test feeds directly, a FakeClock, a small topology with a job, an AgentRegistry, the
// watch hub, and a real gRPC server on 127.0.0.1:0 with a stub to call it.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "daemon/agent_registry.h"
#include "daemon/daemon.h"
#include "daemon/diagnosis_watch.h"
#include "daemon/query_service.h"
#include "engine/engine.h"
#include "grpcpp/grpcpp.h"
#include "railwatch/v1/query.grpc.pb.h"
#include "store/event_store.h"
#include "store/series_store.h"
#include "topology/fabric_map.h"

namespace railwatch::testing {

// link_flap (critical, culprit host/device/port, fires at once), switch_relay (warning,
// culprit leaf/interface, pending for 10s first) and peer_flap (info, culprit
// peer_host/switch/interface).
extern const char kQueryTestRules[];

// A real daemon's options with kQueryTestRules (written into `dir`) and free loopback ports.
DaemonOptions QueryTestDaemonOptions(const std::string& dir);

class QueryTestServer {
 public:
  struct Options {
    size_t watch_queue_limit = 1024;
    // Empty: plain text.
    std::shared_ptr<grpc::ServerCredentials> credentials = nullptr;
    // A TopologyWatch over the store, with the small topology as the file (topology_watch).
    bool topology_watch = false;
  };
  QueryTestServer() : QueryTestServer(Options{}) {}
  explicit QueryTestServer(Options options);
  ~QueryTestServer();

  const std::string& address() const { return address_; }
  v1::Query::Stub& stub() { return *stub_; }

  SeriesRef Counter(const std::string& name, Labels labels);
  SeriesRef Gauge(const std::string& name, Labels labels);
  // Advances the clock one second, appends each value and evaluates the playbooks.
  void Tick(const std::vector<std::pair<SeriesRef, double>>& values);

  // A link flap on gpu-node-001/mlx5_0 (fires), a relaying leaf port (pending), a peer flap
  // on leaf-1 (fires), in that order, one tick apart after 5 quiet ticks. Ids by playbook.
  void RaiseThree();
  std::string IdOf(const std::string& playbook) const;

  // Ends watches and stops the server (the destructor does it too).
  void Shutdown();

  FakeClock clock;
  SeriesStore store{SeriesStore::Options{.capacity = 600}};
  EventStore events{EventStore::Options{}};
  JobRegistry jobs;
  std::unique_ptr<FabricMap> fabric;
  std::unique_ptr<Engine> engine;
  AgentRegistry agents;
  std::unique_ptr<DiagnosisWatchHub> watches;
  std::unique_ptr<TopologyWatch> topology_watch;  // Options::topology_watch
  std::unique_ptr<QueryService> service;

  // Series RaiseThree moves.
  SeriesRef link_downed = 0, relay = 0, carrier = 0;

 private:
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  std::unique_ptr<v1::Query::Stub> stub_;
};

}  // namespace railwatch::testing
