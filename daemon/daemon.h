#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace railwatch {

struct DaemonOptions {
  std::string grpc_listen = "127.0.0.1:9740";
  std::string metrics_listen = "127.0.0.1:9741";
  // PEM files for TLS on the gRPC listener (Ingest and Query): cert and key, or neither
  // (plain text); with a client CA, clients must present a certificate it signed (mTLS).
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  // How often the three files above are read again (a renewed certificate without a restart).
  absl::Duration tls_reload_interval = absl::Minutes(1);
  // Query API access file (tokens by SHA-256, certificate identities -> roles); empty: none.
  // docs/SECURITY.md.
  std::string query_tokens;
  // Serve a non-loopback address with neither --tls_client_ca nor --query_tokens; without it
  // Start refuses (anyone who reaches the port could send telemetry and read diagnoses).
  bool allow_unauthenticated = false;
  std::vector<std::string> rules;  // files or directories
  absl::Duration eval_interval = absl::Seconds(1);
  // Threads that evaluate playbooks' conditions; 0: the hardware's, at most 4.
  int rule_threads = 0;
  size_t retention_samples = 600;
  absl::Duration stale_after = absl::Minutes(5);
  // Topology file (hosts, NICs, rails, switch links, jobs); empty: none.
  std::string topology;
  // Build the map from what the agents report (NIC identities, LLDP neighbours); the file, when
  // given, pins it (docs/TOPOLOGY.md). How often the map is rebuilt.
  bool topology_discovery = true;
  absl::Duration topology_refresh = absl::Seconds(10);
  // Jobs from Slurm: "off", "squeue", "squeue:PATH" or "slurmrestd:URL" (jobs/slurm_watch.h,
  // docs/JOBS.md), and how often it is asked; for slurmrestd, the API version ("auto" or
  // "v0.0.38"), the JWT's file ("": the environment's SLURM_JWT) and X-SLURM-USER-NAME.
  std::string slurm = "off";
  absl::Duration slurm_interval = absl::Seconds(10);
  std::string slurm_api = "auto";
  std::string slurm_token_file;
  std::string slurm_user;
  // How long NCCL RAS must show a rank behind (the agents' stuck_for_s) before job_hang names
  // it (topology/job_ranks.h).
  absl::Duration job_hang_after = absl::Minutes(2);
  // Cost of one GPU-hour, for blast radius $/minute.
  double gpu_hour_cost = 30;
  // Events kept for the rules engine and queries.
  size_t event_capacity = 100'000;
  // gRPC messages larger than this are refused by gRPC with RESOURCE_EXHAUSTED. A new stream's
  // first batch carries all of an agent's series definitions (64 MB: about 400k).
  int max_receive_message_bytes = 64 << 20;
  // Series one agent stream may define (docs/OPERATIONS.md, "Bad input").
  size_t max_series_per_agent = 1'000'000;
  // Where the active diagnoses are saved so that a restart neither pages them again nor
  // forgets them (docs/OPERATIONS.md, "State"); empty: nothing is saved.
  std::string state_dir;
  // When state_dir cannot be used (missing, not writable, locked by another daemon): true
  // fails the start; false warns and runs without state. A required one is created if missing.
  bool state_dir_required = false;
  // Restored diagnoses are not resolved for lack of data sooner than this after the start.
  absl::Duration restore_grace = absl::Minutes(2);
  // Written once both listeners are up: {"grpc": "host:port", "metrics": "host:port"}.
  std::string ready_file;
  // Alertmanager base URLs (each gets POST /api/v2/alerts); empty: no alerts are sent.
  // docs/ALERTING.md.
  std::vector<std::string> alertmanager_urls;
  absl::Duration alertmanager_resend_interval = absl::Minutes(1);
  absl::Duration alertmanager_timeout = absl::Seconds(10);
  // Label cluster= on every alert; empty: none.
  std::string cluster;
  // Where people reach this daemon's diagnoses: alerts link to <external_url>/diagnoses/<id>.
  std::string external_url;
  // Alerts' runbook_url: <runbook_url_base>/<runbook file name>; empty: the runbook's path.
  std::string runbook_url_base;
};

// railwatchd: wires the series store, rules engine, exporters and gRPC services together.
// Start() runs the start-up steps in order and fails with a clear message at the first that
// cannot complete; Stop() tears down in reverse and is safe to call at any point.
class Daemon {
 public:
  Daemon(DaemonOptions options, const Clock& clock = RealClock::Get());
  ~Daemon();

  absl::Status Start();
  void Stop();

  // Valid after Start().
  const std::string& grpc_address() const { return grpc_address_; }
  const std::string& metrics_address() const { return metrics_address_; }

 private:
  // --state_dir: the directory, locked, or a warning (or an error when it is required).
  absl::Status OpenStateDir();
  struct Impl;
  DaemonOptions options_;
  const Clock& clock_;
  std::unique_ptr<Impl> impl_;
  std::string grpc_address_, metrics_address_;
};

}  // namespace railwatch
