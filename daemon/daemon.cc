#include "daemon/daemon.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/grpc_keepalive.h"
#include "common/logging.h"
#include "common/text.h"
#include "daemon/agent_registry.h"
#include "daemon/alertmanager.h"
#include "daemon/auth.h"
#include "daemon/diagnosis_watch.h"
#include "daemon/ingest_service.h"
#include "daemon/malformed_request.h"
#include "daemon/query_service.h"
#include "daemon/server_metrics.h"
#include "daemon/state_dir.h"
#include "jobs/slurm_watch.h"
#include "daemon/topology_watch.h"
#include "daemon/tls.h"
#include "engine/alert_proto.h"
#include "engine/diagnosis_text.h"
#include "engine/engine.h"
#include "exporters/daemon_metrics.h"
#include "exporters/fabric_collectable.h"
#include "exporters/metrics_server.h"
#include "exporters/store_exposition.h"
#include "exporters/topology_collectable.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "prometheus/registry.h"

namespace railwatch {
// Named, not anonymous: Daemon::Impl holds these, and in a unity build gcc's
// -Wsubobject-linkage objects to anonymous-namespace types there.
namespace daemon_internal {

// Logs every diagnosis transition (the operator's first view, before any alert routing) and
// counts those that fire.
class LogListener final : public DiagnosisListener {
 public:
  explicit LogListener(DaemonMetrics& metrics) : metrics_(metrics) {}
  void OnFiring(const AlertRecord& a) override {
    metrics_.diagnoses_fired.Add({{"playbook", a.playbook}, {"severity", SeverityName(a.severity)}})
        .Increment();
    spdlog::warn("FIRING {} [{}] {} (id {}; runbook {})", a.playbook, SeverityName(a.severity),
                 a.summary, a.id, a.runbook);
  }
  void OnResolved(const AlertRecord& a) override {
    spdlog::info("RESOLVED {} {} (id {})", a.playbook, a.summary, a.id);
  }
  // Carried over from before a restart: not a new page, and not counted again.
  void OnRestored(const AlertRecord& a) override {
    spdlog::info("RESTORED firing {} {} (id {}, since {})", a.playbook, a.summary, a.id,
                 FormatTime(a.active_since));
  }

 private:
  DaemonMetrics& metrics_;
};

// Brings store, engine and ingest statistics up to date before the registry is scraped.
class RefreshingRegistry final : public prometheus::Collectable {
 public:
  RefreshingRegistry(std::shared_ptr<prometheus::Registry> registry, DaemonMetrics& metrics,
                     const SeriesStore& store, const Engine& engine, const IngestStats& ingest,
                     const AgentRegistry& agents)
      : registry_(std::move(registry)),
        metrics_(metrics),
        store_(store),
        engine_(engine),
        ingest_(ingest),
        agents_(agents) {}
  std::vector<prometheus::MetricFamily> Collect() const override {
    metrics_.Refresh(store_, engine_, ingest_);
    metrics_.agents_connected.Set(agents_.Connected());
    return registry_->Collect();
  }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  DaemonMetrics& metrics_;
  const SeriesStore& store_;
  const Engine& engine_;
  const IngestStats& ingest_;
  const AgentRegistry& agents_;
};

std::string HostOf(const std::string& listen) {
  size_t colon = listen.rfind(':');
  return colon == std::string::npos ? listen : listen.substr(0, colon);
}

bool IsLoopback(const std::string& host) {
  return host == "localhost" || host == "[::1]" || host.starts_with("127.");
}

absl::Status WriteReadyFile(const std::string& path, const std::string& grpc,
                            const std::string& metrics) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << "{\"grpc\": \"" << grpc << "\", \"metrics\": \"" << metrics << "\"}\n";
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", tmp));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("cannot rename ", tmp, " to ", path));
  }
  return absl::OkStatus();
}

}  // namespace daemon_internal

using namespace daemon_internal;  // NOLINT(build/namespaces)

struct Daemon::Impl {
  std::unique_ptr<SeriesStore> store;
  std::unique_ptr<EventStore> events;
  std::shared_ptr<const Topology> topology;
  JobRegistry jobs;
  std::unique_ptr<FabricMap> fabric;
  std::unique_ptr<TopologyWatch> topology_watch;  // discovery, and the file's pins
  std::unique_ptr<SlurmWatch> slurm;              // null without --slurm
  std::unique_ptr<StateDir> state_dir;  // null: diagnoses are not saved
  std::unique_ptr<Engine> engine;
  AgentRegistry agents;
  IngestStats ingest_stats;  // the ingest service counts, the exporter reads
  std::unique_ptr<LogListener> log_listener;
  std::unique_ptr<AlertmanagerNotifier> alertmanager;  // null without --alertmanager_url
  std::shared_ptr<prometheus::Registry> registry;
  std::unique_ptr<DaemonMetrics> metrics;
  std::shared_ptr<RefreshingRegistry> self_metrics;
  std::shared_ptr<StoreExposition> fabric_metrics;  // rendered straight to text
  std::shared_ptr<DiagnosisCollectable> diagnosis_metrics;
  std::shared_ptr<AgentCollectable> agent_metrics;
  std::shared_ptr<TopologyCollectable> topology_metrics;  // info series for dashboards
  std::shared_ptr<NcclTestsCollectable> nccl_tests_metrics;
  std::unique_ptr<MetricsServer> metrics_server;
  std::unique_ptr<Authenticator> auth;  // outlives the services that hold it
  std::unique_ptr<IngestService> ingest;
  std::unique_ptr<QueryService> query;
  std::unique_ptr<DiagnosisWatchHub> watches;  // WatchDiagnoses streams
  std::shared_ptr<WatchCollectable> watch_metrics;
  std::unique_ptr<grpc::Server> server;
};

Daemon::Daemon(DaemonOptions options, const Clock& clock)
    : options_(std::move(options)), clock_(clock), impl_(std::make_unique<Impl>()) {}

Daemon::~Daemon() { Stop(); }

absl::Status Daemon::Start() {
  Impl& d = *impl_;

  // 1. Playbooks: every problem is reported; the daemon refuses to start on errors so that a
  //    broken rules file is noticed at deploy time, not at 3 AM.
  LoadResult rules = LoadPlaybooks(options_.rules);
  for (const LoadProblem& p : rules.problems) {
    if (p.level == LoadProblem::Level::kError)
      spdlog::error("{}", p.ToString());
    else
      spdlog::warn("{}", p.ToString());
  }
  if (!rules.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("playbooks from ", absl::StrJoin(options_.rules, ", "),
                     " have errors (listed above); check them with `railwatch rules validate`"));
  }
  if (rules.playbooks.empty()) spdlog::warn("no playbooks loaded: nothing will be diagnosed");
  for (const Playbook& pb : rules.playbooks) {
    spdlog::info("playbook {} from {}{}", pb.name, pb.source, pb.enabled ? "" : " (disabled)");
  }
  const size_t enabled = std::count_if(rules.playbooks.begin(), rules.playbooks.end(),
                                       [](const Playbook& p) { return p.enabled; });

  // 2. Topology: a bad file stops the start, with every problem listed.
  if (!options_.topology.empty()) {
    absl::StatusOr<Topology> topo = Topology::LoadFile(options_.topology);
    if (!topo.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("topology ", options_.topology, ":\n", topo.status().message()));
    }
    d.topology = std::make_shared<const Topology>(std::move(*topo));
    d.jobs.SetStatic(d.topology->jobs());
    spdlog::info("topology {}: {} hosts, {} switches, {} jobs", options_.topology,
                 d.topology->hosts().size(), d.topology->switches().size(),
                 d.topology->jobs().size());
  } else if (options_.topology_discovery) {
    spdlog::info("no --topology: the fabric map comes from discovery alone (docs/TOPOLOGY.md)");
  } else {
    spdlog::info("no --topology and no discovery: diagnoses name devices but not rails, leaves "
                 "or jobs");
  }
  {
    absl::StatusOr<SlurmWatchOptions> slurm = SlurmWatchOptionsFromFlag(options_.slurm);
    if (!slurm.ok()) return slurm.status();
    if (slurm->rest) {
      absl::StatusOr<std::string> api = SlurmApiVersionFromFlag(options_.slurm_api);
      if (!api.ok()) return api.status();
      slurm->rest->api_version = *api;
      slurm->rest->token_file = options_.slurm_token_file;
      slurm->rest->user = options_.slurm_user;
    }
    if (slurm->enabled()) {
      slurm->interval = options_.slurm_interval;
      d.slurm = std::make_unique<SlurmWatch>(*std::move(slurm), d.jobs);
    }
  }
  d.fabric = std::make_unique<FabricMap>(d.topology, &d.jobs);

  // 3. Stores and engine.
  d.store = std::make_unique<SeriesStore>(SeriesStore::Options{options_.retention_samples});
  d.events = std::make_unique<EventStore>(EventStore::Options{options_.event_capacity});
  Engine::Options eo;
  eo.interval = options_.eval_interval;
  eo.threads = options_.rule_threads;
  eo.gpu_hour_cost = options_.gpu_hour_cost;
  if (absl::Status s = OpenStateDir(); !s.ok()) return s;
  if (d.state_dir) eo.state_file = d.state_dir->diagnoses_file();
  eo.restore_grace = options_.restore_grace;
  d.engine = std::make_unique<Engine>(eo, std::move(rules.playbooks), *d.store, clock_,
                                      Engine::Sources{d.events.get(), d.fabric.get()});

  // 4. Metrics.
  d.registry = std::make_shared<prometheus::Registry>();
  d.metrics = std::make_unique<DaemonMetrics>(*d.registry);
  d.metrics->StartCounting(d.engine->playbooks());
  d.log_listener = std::make_unique<LogListener>(*d.metrics);
  d.engine->AddListener(d.log_listener.get());
  if (!options_.alertmanager_urls.empty()) {
    if (absl::Status s = AlertmanagerNotifier::ValidateUrls(options_.alertmanager_urls); !s.ok()) {
      return s;
    }
    AlertmanagerNotifier::Options ao;
    ao.urls = options_.alertmanager_urls;
    ao.resend_interval = options_.alertmanager_resend_interval;
    ao.timeout = options_.alertmanager_timeout;
    ao.format.cluster = options_.cluster;
    ao.format.external_url = options_.external_url;
    ao.format.runbook_url_base = options_.runbook_url_base;
    const Engine* engine = d.engine.get();
    d.alertmanager = std::make_unique<AlertmanagerNotifier>(
        std::move(ao),
        AlertmanagerNotifier::Deps{clock_, *d.registry, d.fabric.get(),
                                   [engine](const std::string& id) -> std::optional<v1::Diagnosis> {
                                     std::optional<AlertRecord> a = engine->Get(id);
                                     if (!a) return std::nullopt;
                                     return ToDiagnosis(*a, /*points=*/false);
                                   },
                                   nullptr});
    d.engine->AddListener(d.alertmanager.get());
  }
  d.metrics->playbooks_loaded.Set(static_cast<double>(enabled));
  d.self_metrics = std::make_shared<RefreshingRegistry>(d.registry, *d.metrics, *d.store, *d.engine,
                                                        d.ingest_stats, d.agents);
  d.fabric_metrics = std::make_shared<StoreExposition>(*d.store, clock_, options_.stale_after);
  d.diagnosis_metrics = std::make_shared<DiagnosisCollectable>(*d.engine);
  d.agent_metrics = std::make_shared<AgentCollectable>(d.agents);
  d.topology_metrics = std::make_shared<TopologyCollectable>(d.topology, d.jobs);
  TopologyWatch::Options to;
  to.discover = options_.topology_discovery;
  to.interval = options_.topology_refresh;
  to.stale_after = options_.stale_after;
  d.topology_watch =
      std::make_unique<TopologyWatch>(to, d.topology, *d.store, *d.fabric, clock_);
  d.topology_watch->set_collectable(d.topology_metrics.get());
  d.nccl_tests_metrics = std::make_shared<NcclTestsCollectable>(*d.events);
  absl::StatusOr<std::unique_ptr<MetricsServer>> metrics_server =
      MetricsServer::Start(options_.metrics_listen);
  if (!metrics_server.ok()) return metrics_server.status();
  d.metrics_server = std::move(*metrics_server);
  d.metrics_server->Add(d.self_metrics);
  d.metrics_server->Add(d.fabric_metrics);
  d.metrics_server->Add(d.diagnosis_metrics);
  d.metrics_server->Add(d.agent_metrics);
  d.metrics_server->Add(d.topology_metrics);
  d.metrics_server->Add(d.nccl_tests_metrics);
  metrics_address_ = absl::StrCat(HostOf(options_.metrics_listen), ":", d.metrics_server->port());

  // 5. gRPC: Ingest for agents, Query for the CLI, reflection for grpcurl; who may use them
  //    (docs/SECURITY.md).
  if (absl::Status s = CheckListenerAuthentication(
          {options_.grpc_listen, IsLoopback(HostOf(options_.grpc_listen)),
           !options_.tls_cert.empty(), !options_.tls_client_ca.empty(),
           !options_.query_tokens.empty(), options_.allow_unauthenticated});
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::unique_ptr<Authenticator>> auth = Authenticator::Create(
      {options_.query_tokens, !options_.tls_client_ca.empty()}, clock_, *d.registry);
  if (!auth.ok()) return auth.status();
  d.auth = std::move(*auth);
  Engine* engine = d.engine.get();
  d.ingest = std::make_unique<IngestService>(
      IngestService::Deps{*d.store, d.agents, d.ingest_stats, clock_, [engine] { engine->Poke(); },
                          d.events.get(), &d.jobs, options_.max_series_per_agent,
                          RanksBehindOptions{.stuck_after = options_.job_hang_after}},
      d.auth.get());
  d.watches = std::make_unique<DiagnosisWatchHub>(*d.engine, clock_);
  d.engine->AddListener(d.watches.get());
  // Every listener is in place, the gRPC server not yet: the first query sees them.
  d.engine->Restore();
  d.watch_metrics = std::make_shared<WatchCollectable>(*d.watches);
  d.metrics_server->Add(d.watch_metrics);
  d.query = std::make_unique<QueryService>(
      QueryService::Deps{*d.engine, d.agents, *d.store, clock_, d.events.get(), d.fabric.get(),
                         options_.topology, d.topology_watch.get(), d.watches.get(),
                         d.auth.get()});
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials = MakeServerCredentials(
      {options_.tls_cert, options_.tls_key, options_.tls_client_ca, options_.tls_reload_interval});
  if (!credentials.ok()) return credentials.status();
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int grpc_port = 0;
  builder.AddListeningPort(options_.grpc_listen, *credentials, &grpc_port);
  builder.RegisterService(d.ingest.get());
  builder.RegisterService(d.query.get());
  // Find dead agents and watch clients within 20 s, and let them ping us every 10 s.
  SetServerKeepalive(builder);
  // A new stream's first batch carries every series definition the agent has: 5.5 MB for a
  // switch agent with ten 34-port switches, past gRPC's 4 MB default, which the agent would
  // hit again on every reconnect. 64 MB (the default) is about 400k definitions.
  builder.SetMaxReceiveMessageSize(options_.max_receive_message_bytes);
  // Requests that do not parse: INVALID_ARGUMENT and a counter, not a bare UNIMPLEMENTED.
  builder.experimental().SetInterceptorCreators(MalformedRequestInterceptors(*d.registry));
  d.server = builder.BuildAndStart();
  if (!d.server || grpc_port == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot serve gRPC on ", options_.grpc_listen,
                     " (address in use, or not an address this host has?)"));
  }
  grpc_address_ = absl::StrCat(HostOf(options_.grpc_listen), ":", grpc_port);

  // 6. Evaluate (and tell Alertmanager).
  if (d.alertmanager) d.alertmanager->Start();
  d.engine->Start();
  d.topology_watch->Start();
  if (d.slurm) d.slurm->Start();

  spdlog::info("railwatchd ready: gRPC on {}, /metrics on http://{}/metrics, {} playbooks",
               grpc_address_, metrics_address_, enabled);
  if (!options_.ready_file.empty()) {
    if (absl::Status s = WriteReadyFile(options_.ready_file, grpc_address_, metrics_address_);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status Daemon::OpenStateDir() {
  if (options_.state_dir.empty()) {
    spdlog::info("no --state_dir: firing diagnoses will be forgotten at a restart");
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<StateDir>> dir =
      StateDir::Open(options_.state_dir, options_.state_dir_required);
  if (!dir.ok()) {
    if (options_.state_dir_required) return dir.status();
    spdlog::warn(
        "{}: running without state, firing diagnoses will be forgotten at a restart "
        "(create it, give --state_dir=DIR, or --state_dir= to run without state)",
        dir.status().message());
    return absl::OkStatus();
  }
  impl_->state_dir = std::move(*dir);
  spdlog::info("state dir {}: diagnoses survive a restart", options_.state_dir);
  return absl::OkStatus();
}

void Daemon::Stop() {
  Impl& d = *impl_;
  // Watches never end by themselves: end them first, or the server's shutdown waits for them.
  if (d.watches) d.watches->Close();
  if (d.server) {
    d.server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
    spdlog::debug("gRPC server shut down");
    d.server.reset();
  }
  // The notifier first: its last attempt sends what is queued, and the engine's callbacks
  // after that are ignored (the notifier outlives the engine's thread either way).
  if (d.topology_watch) d.topology_watch->Stop();
  if (d.slurm) d.slurm->Stop();
  if (d.alertmanager) d.alertmanager->Stop();
  if (d.engine) d.engine->Stop();
  spdlog::debug("engine stopped");
  d.metrics_server.reset();
  spdlog::debug("metrics endpoint closed");
}

}  // namespace railwatch
