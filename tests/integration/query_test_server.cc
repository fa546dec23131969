#include "query_test_server.h"

#include <fstream>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace railwatch::testing {

const char kQueryTestRules[] = R"y(
- playbook: link_flap
  desc: a link went down
  condition: increase(fabric_rdma_link_downed_total[1m]) > 0
  severity: critical
  culprit: [host, device, port]
  summary: "link flap on {{host}} {{device}}"
  runbook: https://runbooks.example/link-flap
  tags: [link]
  explains:
    - {playbooks: [switch_relay], relation: same_host}
- playbook: switch_relay
  desc: a switch port relays pauses
  condition: rate(fabric_pfc_pause_frames_total{direction="tx"}[5s]) > 20
  for: 10s
  keep_firing_for: 30s
  culprit: [leaf, interface]
  runbook: https://runbooks.example/relay
- playbook: peer_flap
  desc: the switch saw its peer's carrier change
  condition: increase(fabric_link_carrier_changes_total[1m]) > 0
  severity: info
  culprit: [peer_host, switch, interface]
  runbook: https://runbooks.example/peer-flap
)y";

namespace {

constexpr char kTopology[] = R"y(
switches:
  - name: leaf-1
    role: leaf
    dialect: sonic
    links:
      - {port: Ethernet32, peer: spine-0, peer_port: Ethernet0}
  - {name: spine-0, role: spine}
hosts:
  - name: gpu-node-001
    nics: [{device: mlx5_0, netdev: eth0, rail: 0, switch: leaf-1, port: Ethernet0}]
  - name: gpu-node-002
    nics: [{device: mlx5_0, netdev: eth0, rail: 0, switch: leaf-1, port: Ethernet4}]
jobs:
  - {name: train, hosts: [gpu-node-001, gpu-node-002], gpus_per_host: 8}
)y";

std::vector<Playbook> LoadRules() {
  LoadResult r;
  LoadPlaybooksFromString(kQueryTestRules, "query-test.yaml", r);
  for (const LoadProblem& p : r.problems) ADD_FAILURE() << p.ToString();
  return std::move(r.playbooks);
}

}  // namespace

DaemonOptions QueryTestDaemonOptions(const std::string& dir) {
  const std::string rules = dir + "/rules.yaml";
  std::ofstream(rules) << kQueryTestRules;
  DaemonOptions options;
  options.grpc_listen = "127.0.0.1:0";
  options.metrics_listen = "127.0.0.1:0";
  options.rules = {rules};
  return options;
}

QueryTestServer::QueryTestServer(Options options) {
  absl::StatusOr<Topology> topology = Topology::LoadString(kTopology, "topology.yaml");
  EXPECT_TRUE(topology.ok()) << topology.status();
  auto shared = std::make_shared<const Topology>(std::move(*topology));
  jobs.SetStatic(shared->jobs());
  fabric = std::make_unique<FabricMap>(shared, &jobs);
  engine = std::make_unique<Engine>(Engine::Options{}, LoadRules(), store, clock,
                                    Engine::Sources{&events, fabric.get()});
  watches = std::make_unique<DiagnosisWatchHub>(
      *engine, clock, DiagnosisWatchHub::Options{.queue_limit = options.watch_queue_limit});
  engine->AddListener(watches.get());
  if (options.topology_watch) {
    topology_watch =
        std::make_unique<TopologyWatch>(TopologyWatch::Options{}, shared, store, *fabric, clock);
  }
  service = std::make_unique<QueryService>(QueryService::Deps{
      *engine, agents, store, clock, &events, fabric.get(), "topology.yaml",
      topology_watch.get(), watches.get()});

  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(
      "127.0.0.1:0", options.credentials ? options.credentials : grpc::InsecureServerCredentials(),
      &port);
  builder.RegisterService(service.get());
  server_ = builder.BuildAndStart();
  EXPECT_NE(port, 0);
  address_ = absl::StrCat("127.0.0.1:", port);
  stub_ = v1::Query::NewStub(grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
}

QueryTestServer::~QueryTestServer() { Shutdown(); }

void QueryTestServer::Shutdown() {
  if (!server_) return;
  watches->Close();
  server_->Shutdown();
  server_.reset();
}

SeriesRef QueryTestServer::Counter(const std::string& name, Labels labels) {
  NormalizeLabels(labels);
  return store.Intern(name, labels, MetricKind::kCounter);
}

SeriesRef QueryTestServer::Gauge(const std::string& name, Labels labels) {
  NormalizeLabels(labels);
  return store.Intern(name, labels, MetricKind::kGauge);
}

void QueryTestServer::Tick(const std::vector<std::pair<SeriesRef, double>>& values) {
  clock.Advance(absl::Seconds(1));
  for (const auto& [ref, v] : values) store.Append(ref, clock.NowNanos(), v);
  engine->EvaluateOnce();
}

void QueryTestServer::RaiseThree() {
  link_downed = Counter("fabric_rdma_link_downed_total",
                        {{"host", "gpu-node-001"}, {"device", "mlx5_0"}, {"port", "1"}});
  relay = Counter(
      "fabric_pfc_pause_frames_total",
      {{"leaf", "leaf-1"}, {"interface", "Ethernet32"}, {"priority", "3"}, {"direction", "tx"}});
  carrier =
      Counter("fabric_link_carrier_changes_total",
              {{"peer_host", "gpu-node-002"}, {"switch", "leaf-1"}, {"interface", "Ethernet4"}});
  double downed = 0, paused = 0, changes = 0;
  auto tick = [&] { Tick({{link_downed, downed}, {relay, paused}, {carrier, changes}}); };
  for (int i = 0; i < 5; ++i) tick();
  downed = 1;
  tick();
  paused = 1000;
  tick();
  changes = 2;
  tick();
}

std::string QueryTestServer::IdOf(const std::string& playbook) const {
  for (const AlertRecord& a : engine->List()) {
    if (a.playbook == playbook) return a.id;
  }
  ADD_FAILURE() << "no " << playbook << " diagnosis";
  return "";
}

}  // namespace railwatch::testing
