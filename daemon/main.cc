// railwatchd: the railwatch daemon. Wiring only; the work is in the libraries.
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "common/logging.h"
#include "common/program.h"
#include "common/shipped_data.h"
#include "common/signals.h"
#include "daemon/daemon.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:9740",
          "gRPC address for agents (Ingest) and clients (Query); port 0 picks a free port");
ABSL_FLAG(std::string, metrics_listen, "127.0.0.1:9741",
          "address of the Prometheus /metrics endpoint; port 0 picks a free port");
ABSL_FLAG(std::string, rules, "",
          "comma-separated playbook files or directories; empty: the shipped playbooks "
          "($RAILWATCH_SHARE_DIR/rules, <prefix>/share/railwatch/rules beside this program, "
          "the installed ones, else the source tree's)");
ABSL_FLAG(absl::Duration, eval_interval, absl::Seconds(1),
          "how often every playbook is evaluated (they are also evaluated on new data)");
ABSL_FLAG(int, rule_threads, 0,
          "threads that evaluate playbooks' conditions each tick; 0: the machine's cores, at "
          "most 4");
ABSL_FLAG(int, retention, 600,
          "samples kept per series (600 = 10 minutes at 1 s); a series a playbook reads over a "
          "longer window keeps that window, up to 16x this");
ABSL_FLAG(absl::Duration, stale_after, absl::Minutes(5),
          "series without a sample for this long leave /metrics");
ABSL_FLAG(std::string, ready_file, "",
          "write {\"grpc\": ..., \"metrics\": ...} here once listening (for scripts and tests)");
ABSL_FLAG(std::string, topology, "",
          "topology file (YAML: hosts, NICs -> rails and switch ports, switch links, jobs; "
          "docs/TOPOLOGY.md); lets diagnoses name rails, leaves, jobs and the blast radius");
ABSL_FLAG(bool, topology_discovery, true,
          "build the fabric map from what the agents report (NIC identities, LLDP neighbours on "
          "switch ports and host interfaces); --topology then only pins or overrides it, and a "
          "conflict raises topology_mismatch (docs/TOPOLOGY.md)");
ABSL_FLAG(absl::Duration, topology_refresh, absl::Seconds(10),
          "how often the discovered map is rebuilt (a moved cable shows within this)");
ABSL_FLAG(std::string, slurm, "off",
          "jobs from Slurm (docs/JOBS.md): off, squeue (run `squeue --json` with this "
          "daemon's SLURM_CONF and munge), squeue:PATH, or slurmrestd:URL (ask slurmrestd's "
          "/slurm/<version>/jobs at http://HOST:PORT, https://... or unix:/PATH/TO/SOCKET); "
          "running jobs join the blast radius of diagnoses on their nodes, ended ones leave at "
          "the next poll");
ABSL_FLAG(absl::Duration, slurm_interval, absl::Seconds(10), "how often Slurm is asked");
ABSL_FLAG(std::string, slurm_api, "auto",
          "with --slurm=slurmrestd:URL, the API version asked (v0.0.38); auto: the newest of "
          "v0.0.36-v0.0.41 that slurmrestd's /openapi/v3 lists");
ABSL_FLAG(std::string, slurm_token_file, "",
          "with --slurm=slurmrestd:URL, a file holding Slurm's JWT (`scontrol token` output or "
          "the bare token), read at every poll and sent as X-SLURM-USER-TOKEN; empty: the "
          "environment's SLURM_JWT where set, else none (rest_auth/local on a Unix socket)");
ABSL_FLAG(std::string, slurm_user, "",
          "with --slurm=slurmrestd:URL, the user sent as X-SLURM-USER-NAME with the token; "
          "empty: none sent (Slurm takes the token's)");
ABSL_FLAG(absl::Duration, job_hang_after, absl::Minutes(2),
          "how long NCCL RAS (the host agents' --nccl_ras) must show a rank behind the others, "
          "with unchanged counts, before job_hang names it: shorter pauses (a rank writing a "
          "checkpoint while the others wait) are not hangs");
ABSL_FLAG(double, gpu_hour_cost, 30,
          "what one GPU-hour costs (fully loaded), for the blast radius' $/minute");
ABSL_FLAG(int, event_capacity, 100000, "events kept in memory for playbooks and queries");
ABSL_FLAG(int, max_message_bytes, 64 << 20,
          "largest gRPC message accepted (an agent's first batch carries all its series "
          "definitions); larger ones are refused with RESOURCE_EXHAUSTED");
ABSL_FLAG(int64_t, max_series_per_agent, 1000000,
          "series one agent stream may define; past it the stream ends with RESOURCE_EXHAUSTED");
constexpr char kDefaultStateDir[] = "/var/lib/railwatch";
ABSL_FLAG(std::string, state_dir, kDefaultStateDir,
          "directory where firing and pending diagnoses are saved, so that a restart neither "
          "pages them again nor forgets them (docs/OPERATIONS.md). The default is used when it "
          "exists (the systemd unit and the manifests create it), else a warning; another "
          "directory is created and must work; empty: no state");
ABSL_FLAG(absl::Duration, restore_grace, absl::Minutes(2),
          "a diagnosis restored at start-up is not resolved for lack of data sooner than this "
          "(agents reconnect and conditions' windows refill meanwhile)");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM certificate (chain) for TLS on the gRPC port (Ingest and Query); with --tls_key. "
          "Empty: plain text (docs/QUERY_API.md)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert (unencrypted)");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA certificate(s): when set, the gRPC port asks clients for a certificate signed "
          "by one of them (mutual TLS): agents must present one, Query clients one or a token "
          "(--query_tokens); needs --tls_cert and --tls_key (docs/SECURITY.md)");
ABSL_FLAG(absl::Duration, tls_reload_interval, absl::Minutes(1),
          "how often --tls_cert, --tls_key and --tls_client_ca are read again: renewed files "
          "serve new connections without a restart");
ABSL_FLAG(std::string, query_tokens, "",
          "Query API access file (YAML: tokens by SHA-256 with role read-only or admin, client "
          "certificate identities -> roles); read again when it changes (docs/SECURITY.md)");
ABSL_FLAG(bool, allow_unauthenticated, false,
          "serve a non-loopback --listen without --tls_client_ca (anyone who reaches the port "
          "may send telemetry, and without --query_tokens use the Query API)");
ABSL_FLAG(std::string, alertmanager_url, "",
          "comma-separated Alertmanager base URLs (list every member of an HA cluster), e.g. "
          "http://am-0:9093,http://am-1:9093; alerts are POSTed to <url>/api/v2/alerts. "
          "Empty: no alerts (docs/ALERTING.md)");
ABSL_FLAG(absl::Duration, alertmanager_resend_interval, absl::Minutes(1),
          "re-send every firing alert this often (its endsAt is 4 times this ahead)");
ABSL_FLAG(absl::Duration, alertmanager_timeout, absl::Seconds(10),
          "timeout of one POST to an Alertmanager");
ABSL_FLAG(std::string, cluster, "", "label cluster=<this> on every alert (empty: none)");
ABSL_FLAG(std::string, external_url, "",
          "URL people use to reach railwatch; alerts' generatorURL is <this>/diagnoses/<id>");
ABSL_FLAG(std::string, runbook_url_base, "",
          "alerts' runbook_url is <this>/<runbook file name> (e.g. your wiki or the repository's "
          "rules/runbooks on a web server); empty: the runbook's path as the playbook names it");

namespace {

railwatch::ProgramInfo DaemonProgram() {
  return {
      .name = "railwatchd",
      .summary = "the railwatch daemon: stores fabric telemetry from agents, applies the "
                 "playbooks, raises diagnoses, exports /metrics and answers the Query API.",
      .usage = "Usage: railwatchd [--listen=ADDR] [--metrics_listen=ADDR] [--rules=PATHS] "
               "[--topology=FILE] [--alertmanager_url=URL]",
      .groups =
          {
              {"Listening", {"listen", "metrics_listen", "ready_file"}},
              {"Playbooks and evaluation",
               {"rules", "eval_interval", "rule_threads", "gpu_hour_cost"}},
              {"Topology (docs/TOPOLOGY.md)",
               {"topology", "topology_discovery", "topology_refresh"}},
              {"Jobs from the scheduler and NCCL (docs/JOBS.md)",
               {"slurm", "slurm_interval", "slurm_api", "slurm_token_file", "slurm_user",
                "job_hang_after"}},
              {"Storage and state",
               {"retention", "stale_after", "event_capacity", "state_dir", "restore_grace"}},
              {"Ingest limits", {"max_message_bytes", "max_series_per_agent"}},
              {"Security (docs/SECURITY.md)",
               {"tls_cert", "tls_key", "tls_client_ca", "tls_reload_interval", "query_tokens",
                "allow_unauthenticated"}},
              {"Alerting (docs/ALERTING.md)",
               {"alertmanager_url", "alertmanager_resend_interval", "alertmanager_timeout",
                "cluster", "external_url", "runbook_url_base"}},
              {"Logging", {"log_level"}},
          },
      .epilogue = "Operations: docs/OPERATIONS.md; the Query API: docs/QUERY_API.md.",
  };
}

}  // namespace

int main(int argc, char** argv) {
  static absl::Notification stop;
  railwatch::StartProgram(argc, argv, DaemonProgram(), stop);

  railwatch::DaemonOptions options;
  options.grpc_listen = absl::GetFlag(FLAGS_listen);
  options.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  options.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  options.tls_key = absl::GetFlag(FLAGS_tls_key);
  options.tls_client_ca = absl::GetFlag(FLAGS_tls_client_ca);
  options.tls_reload_interval = absl::GetFlag(FLAGS_tls_reload_interval);
  options.query_tokens = absl::GetFlag(FLAGS_query_tokens);
  options.allow_unauthenticated = absl::GetFlag(FLAGS_allow_unauthenticated);
  options.rules = absl::StrSplit(absl::GetFlag(FLAGS_rules), ',', absl::SkipEmpty());
  if (options.rules.empty()) options.rules = {railwatch::ShippedPath("rules")};
  options.eval_interval = absl::GetFlag(FLAGS_eval_interval);
  options.rule_threads = std::max(0, absl::GetFlag(FLAGS_rule_threads));
  options.retention_samples = static_cast<size_t>(std::max(2, absl::GetFlag(FLAGS_retention)));
  options.stale_after = absl::GetFlag(FLAGS_stale_after);
  options.ready_file = absl::GetFlag(FLAGS_ready_file);
  options.state_dir = absl::GetFlag(FLAGS_state_dir);
  options.state_dir_required = options.state_dir != kDefaultStateDir;
  options.restore_grace = absl::GetFlag(FLAGS_restore_grace);
  options.topology = absl::GetFlag(FLAGS_topology);
  options.topology_discovery = absl::GetFlag(FLAGS_topology_discovery);
  options.topology_refresh = absl::GetFlag(FLAGS_topology_refresh);
  options.gpu_hour_cost = absl::GetFlag(FLAGS_gpu_hour_cost);
  options.slurm = absl::GetFlag(FLAGS_slurm);
  options.slurm_interval = absl::GetFlag(FLAGS_slurm_interval);
  options.slurm_api = absl::GetFlag(FLAGS_slurm_api);
  options.slurm_token_file = absl::GetFlag(FLAGS_slurm_token_file);
  options.slurm_user = absl::GetFlag(FLAGS_slurm_user);
  options.job_hang_after = absl::GetFlag(FLAGS_job_hang_after);
  options.event_capacity = static_cast<size_t>(std::max(1, absl::GetFlag(FLAGS_event_capacity)));
  options.max_receive_message_bytes = std::max(1 << 20, absl::GetFlag(FLAGS_max_message_bytes));
  options.max_series_per_agent =
      static_cast<size_t>(std::max<int64_t>(1, absl::GetFlag(FLAGS_max_series_per_agent)));
  for (absl::string_view url :
       absl::StrSplit(absl::GetFlag(FLAGS_alertmanager_url), ',', absl::SkipWhitespace())) {
    options.alertmanager_urls.emplace_back(absl::StripAsciiWhitespace(url));
  }
  options.alertmanager_resend_interval =
      std::max(absl::Seconds(1), absl::GetFlag(FLAGS_alertmanager_resend_interval));
  options.alertmanager_timeout = absl::GetFlag(FLAGS_alertmanager_timeout);
  options.cluster = absl::GetFlag(FLAGS_cluster);
  options.external_url = absl::GetFlag(FLAGS_external_url);
  options.runbook_url_base = absl::GetFlag(FLAGS_runbook_url_base);


  railwatch::Daemon daemon(options);
  if (absl::Status s = daemon.Start(); !s.ok()) {
    spdlog::critical("cannot start: {}", s.message());
    return 1;
  }
  stop.WaitForNotification();
  spdlog::info("shutting down");
  daemon.Stop();
  return 0;
}
