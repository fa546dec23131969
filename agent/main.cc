// railwatch-agent: the host agent (--role=host) or the switch agent (--role=switch, gNMI).
// Wiring only.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "agent/agent.h"
#include "agent/tls_channel.h"
#include "collectors/ib_fabric_collector.h"
#include "collectors/ib_source_spec.h"
#include "collectors/kmsg_collector.h"
#include "collectors/kubelet_collector.h"
#include "collectors/link_setup.h"
#include "collectors/lldp_collector.h"
#include "collectors/log_collector.h"
#include "collectors/nccl_inspector_collector.h"
#include "collectors/nccl_ras_collector.h"
#include "collectors/optics_collector.h"
#include "collectors/rdma_sysfs_collector.h"
#include "common/logging.h"
#include "common/program.h"
#include "common/shipped_data.h"
#include "common/signals.h"
#include "gnmi/switch_collector.h"

ABSL_FLAG(std::string, server, "127.0.0.1:9740", "railwatchd gRPC address");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM CA that signed railwatchd's certificate: connect with TLS (the certificate must "
          "name the host of --server). Empty: plain text (docs/SECURITY.md)");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM client certificate for mutual TLS (signed by the daemon's --tls_client_ca), "
          "with --tls_key");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert (unencrypted)");
ABSL_FLAG(absl::Duration, tls_reload_interval, absl::Minutes(1),
          "how often the --tls_* files are read again (renewed certificates without a restart)");
ABSL_FLAG(std::string, role, "host",
          "host: this host's RDMA, ethtool, link and log signals; switch: gNMI telemetry of the "
          "switches in --gnmi_targets; ib-fabric: the InfiniBand switches' port counters and the "
          "subnet's links (--ib_source)");
ABSL_FLAG(std::string, ib_tool_outputs, "",
          "--role=ib-fabric: directory where the site's own jobs write InfiniBand tool output "
          "(ibnetdiscover, ibnetdiscover -p, perfquery, ibqueryerrors, ibdiagnet2.db_csv), each "
          "file told apart by its content and read again when it changes; the same as "
          "--ib_source=tools:DIR; see docs/INFINIBAND.md");
ABSL_FLAG(std::string, ib_source, "",
          "--role=ib-fabric: where the subnet is learnt. tools:DIR (as --ib_tool_outputs), "
          "mad:CA[:PORT] (the fabric's own MADs through libibmad from that HCA port, e.g. "
          "mad:mlx5_0:1: discovery by directed route, every switch port's PMA counters; needs "
          "/dev/infiniband/umad*), sim:SPEC (a simulated fat tree scanned the same way, e.g. "
          "sim:leaves=4,spines=2,hosts_per_leaf=8[,latency_us=20]), or simdb:FILE "
          "(railwatch-sim --fabric=ib's ibdiagnet2.db_csv served as a subnet and scanned the "
          "same way)");
ABSL_FLAG(absl::Duration, ib_discover_interval, absl::Minutes(5),
          "--ib_source=mad:|sim:|simdb:: how often the subnet's nodes and links are discovered again "
          "(also at once when a switch port's LinkDownedCounter moves); counters are read "
          "every --interval");
ABSL_FLAG(int, ib_mad_window, 4,
          "--ib_source=mad:|sim:: MADs in flight at once (libibmad port handles, one thread "
          "each)");
ABSL_FLAG(absl::Duration, ib_mad_timeout, absl::Seconds(1),
          "--ib_source=mad:: how long one try of a MAD waits for its answer (2 retries); a node "
          "that does not answer is a problem, the scan goes on");
ABSL_FLAG(std::string, gnmi_targets, "",
          "--role=switch: the targets file (YAML: defaults and targets with name, address, "
          "profile, sample_interval, credentials, tls); see docs/SWITCH_AGENT.md");
ABSL_FLAG(std::string, topology, "",
          "--role=switch: topology file (YAML, docs/TOPOLOGY.md); the LLDP neighbours the "
          "switches report are checked against it (fabric_lldp_neighbor_mismatch)");
ABSL_FLAG(std::string, gnmi_profiles, "",
          "--role=switch: directory of gNMI path profiles (<name>.yaml); empty: the shipped "
          "profiles ($RAILWATCH_SHARE_DIR/profiles/gnmi, share/railwatch/profiles/gnmi beside "
          "this program, the installed ones, else the source tree's)");
ABSL_FLAG(std::string, hostname, "", "host label for every series (default: this host's name)");
ABSL_FLAG(std::string, agent_id, "", "agent identity (default: the hostname)");
ABSL_FLAG(std::string, sysfs_root, "/sys",
          "sysfs root to read RDMA counters from (a simulator's or fixture's tree for tests)");
ABSL_FLAG(absl::Duration, interval, absl::Seconds(1), "poll interval");
ABSL_FLAG(absl::Duration, rescan_interval, absl::Seconds(30),
          "how often to look for RDMA devices and netdevs that appeared or went away");
ABSL_FLAG(absl::Duration, detail_interval, absl::Seconds(10),
          "how often the detail series are read (RDMA packet counts by kind, CQE and access "
          "errors, request counts, EFA and driver-only counters, physical port state, carrier "
          "changes and ups: the series no shipped playbook or dashboard reads; "
          "docs/COLLECTORS.md); 0: every --interval, as the series the playbooks read always "
          "are");
ABSL_FLAG(std::string, netdevs, "",
          "netdevs whose ethtool statistics and link events are collected: a regex matched "
          "against the whole name (\"ens1f0np0|ens2f0np0\", \"eth[0-7]\"); empty: every netdev "
          "with a device behind it (<sysfs_root>/class/net/X/device) or behind an RDMA port, "
          "never lo");
ABSL_FLAG(std::string, lldp_source, "auto",
          "--role=host: where this host's LLDP neighbours (the switch port behind each NIC, "
          "fabric_lldp_neighbor_info) come from: lldpcli (run `lldpcli -f json0 show "
          "neighbors`; nothing when lldpd is not installed), lldpcli:PROGRAM, file:PATH (lldpd's "
          "output written to a file), off, or auto: lldpcli when --sysfs_root is /sys, else off "
          "(a simulated tree is not this machine's cabling)");
ABSL_FLAG(absl::Duration, lldp_refresh, absl::Seconds(30),
          "--role=host: how often the LLDP neighbours are read again (lldpd sends every 30 s)");
ABSL_FLAG(bool, ethtool, true,
          "collect ethtool statistics (PFC pauses per priority, pause storms, discards) of the "
          "--netdevs (SIOCETHTOOL, no privileges needed)");
ABSL_FLAG(std::string, ethtool_dumps, "",
          "read the ethtool statistics of each of the --netdevs from DIR/<netdev>/stats "
          "(`ethtool -S` output) and DIR/<netdev>/driver (`mlx5_core`) every cycle instead of "
          "SIOCETHTOOL (a simulator's or fixture's dumps); a netdev without them counts as gone");
ABSL_FLAG(std::string, optics, "auto",
          "--role=host: read each netdev's pluggable module (SFP, QSFP, QSFP-DD, OSFP: its "
          "EEPROM through ethtool netlink, needs CAP_NET_ADMIN), its FEC statistics and link "
          "speed (docs/LINK_HEALTH.md): on, off, or auto: on when --sysfs_root is /sys or "
          "--optics_dir is given, else off. Netdevs without a module (veth, RJ45 ports) count "
          "as absent");
ABSL_FLAG(std::string, optics_dir, "",
          "--role=host: read the modules and FEC statistics of the --netdevs from "
          "DIR/<netdev>/module/ (one file a page: a0, a2, page00, page01 ...) and "
          "DIR/<netdev>/fec (\"name: value\" lines) instead of the kernel (the simulator's "
          "dumps; docs/LINK_HEALTH.md has the layout)");
ABSL_FLAG(absl::Duration, optics_interval, absl::Seconds(10),
          "--role=host: how often module EEPROMs and FEC statistics are read (a module read is "
          "a few I2C transfers of milliseconds each); link speed is read every --interval");
ABSL_FLAG(std::string, kmsg, "auto",
          "--role=host: the kernel's messages about NICs and PCIe (mlx5 health syndromes, "
          "command timeouts, probe failures, PCIe AER and DPC, slot power, downtrained links; "
          "docs/LINK_HEALTH.md): auto (/dev/kmsg when --sysfs_root is /sys and it can be read, "
          "else off), off, /dev/kmsg, or the path of a file of records in /dev/kmsg's format "
          "appended over time (railwatch-sim writes <root>/<host>/kmsg). Where it stopped is "
          "kept in --log_state_dir");
ABSL_FLAG(absl::Duration, kmsg_lookback, absl::Minutes(10),
          "--role=host: on a first start (no saved position, another boot, another file), how "
          "far back the kernel's messages are read");
ABSL_FLAG(int64_t, kmsg_max_records, 10000,
          "--role=host: the most kernel records read in one cycle (the rest the next cycle)");
ABSL_FLAG(int64_t, kmsg_max_events, 1000,
          "--role=host: the most kernel.* events sent in one cycle (the rest the next cycle)");
ABSL_FLAG(bool, link_events, true,
          "report carrier down/up of the --netdevs as events, from a netlink route socket");
ABSL_FLAG(std::string, log_paths, "",
          "NCCL / PyTorch / nccl-tests logs to tail, comma-separated files or glob patterns "
          "(\"/var/log/nccl/*.log\"); empty: no log collector");
ABSL_FLAG(std::string, nccl_ras, "auto",
          "--role=host: NCCL RAS endpoints to ask about this host's jobs (missing, dead or "
          "stuck ranks; docs/JOBS.md): auto (localhost:28028 and every numeric NCCL_RAS_ADDR "
          "in the environment of a process here, when --sysfs_root is /sys; off for a "
          "simulated tree), off, or HOST:PORT[,HOST:PORT...]");
ABSL_FLAG(absl::Duration, nccl_ras_interval, absl::Seconds(30),
          "--role=host: how often each listening NCCL RAS endpoint is asked for its STATUS");
ABSL_FLAG(absl::Duration, nccl_ras_timeout, absl::Seconds(5),
          "--role=host: the most one RAS query may take, connection to last byte");
ABSL_FLAG(absl::Duration, nccl_ras_init_grace, absl::Seconds(60),
          "--role=host: how long after a RAS endpoint starts listening (a job starting) it is "
          "left alone: NCCL before 2.27.3 can crash when asked while communicators initialise");
ABSL_FLAG(bool, nccl_ras_monitor, true,
          "--role=host: keep a RAS MONITOR connection open to each endpoint whose NCCL is 2.29+ "
          "and send its events (a process declared dead or unresponsive) as they happen; false: "
          "STATUS polling only");
ABSL_FLAG(std::string, nccl_inspector, "",
          "--role=host: NCCL Inspector output to follow, comma-separated files or glob patterns "
          "of its JSON records (\"/scratch/inspector/*/*.log\", under NCCL_INSPECTOR_DUMP_DIR): "
          "per-rank collective counts, time and bus bytes (docs/JOBS.md); empty: none");
ABSL_FLAG(std::string, kubelet, "auto",
          "--role=host: the kubelet's pod-resources socket, to learn which jobs' pods hold this "
          "host's GPUs and RDMA devices (docs/JOBS.md): auto (/var/lib/kubelet/pod-resources/"
          "kubelet.sock when --sysfs_root is /sys, asked while it exists; off for a simulated "
          "tree), off, or a socket path (unix:///path also)");
ABSL_FLAG(absl::Duration, kubelet_interval, absl::Seconds(10),
          "--role=host: how often the kubelet's pod-resources API is asked (List)");
ABSL_FLAG(absl::Duration, kubelet_timeout, absl::Seconds(2),
          "--role=host: the most one List query of the kubelet may take");
ABSL_FLAG(std::string, log_state_dir, "/var/lib/railwatch-agent",
          "where the log tailer keeps its read offsets and the kmsg collector its position "
          "(kmsg.state) across restarts (and, by default, the spool: see --spool_dir)");
ABSL_FLAG(std::string, spool_dir, "",
          "on-disk spool of the batches not yet stored by the daemon (survives outages and "
          "restarts, SIGKILL included); the agent uses <spool_dir>/<agent id>. Empty: "
          "<log_state_dir>/spool; \"none\": no spool, memory only (--max_queued_batches)");
ABSL_FLAG(int64_t, spool_max_bytes, int64_t{256} << 20,
          "spool size limit; when full, its oldest batches are dropped and counted "
          "(railwatch_agent_spool_dropped_batches_total)");
ABSL_FLAG(absl::Duration, backoff_initial, absl::Milliseconds(200),
          "first reconnect delay (then x1.6 per attempt, jittered by 20%)");
ABSL_FLAG(absl::Duration, backoff_max, absl::Seconds(30), "reconnect delay cap");
ABSL_FLAG(int, max_queued_batches, 600,
          "batches kept in memory: with a spool, its newest ones (older ones are read back from "
          "disk); without one, all that is kept while the daemon is unreachable (600 = 10 "
          "minutes at 1 s)");

namespace {

railwatch::ProgramInfo AgentProgram() {
  return {
      .name = "railwatch-agent",
      .summary = "the railwatch agent: collects this host's RDMA, ethtool, link and log signals "
                 "(--role=host), the switches' gNMI telemetry (--role=switch) or the InfiniBand "
                 "switches' port counters (--role=ib-fabric) and streams them to railwatchd.",
      .usage = "Usage: railwatch-agent [--server=ADDR] [--sysfs_root=DIR] [--interval=1s]\n"
               "       railwatch-agent --role=switch --gnmi_targets=FILE [--gnmi_profiles=DIR]\n"
               "       railwatch-agent --role=ib-fabric --ib_source=tools:DIR|mad:CA[:PORT]|sim:SPEC",
      .groups =
          {
              {"Role and identity", {"role", "hostname", "agent_id"}},
              {"Daemon connection (docs/SECURITY.md)",
               {"server", "tls_ca", "tls_cert", "tls_key", "tls_reload_interval",
                "backoff_initial", "backoff_max"}},
              {"Spool: nothing lost across outages and restarts (docs/OPERATIONS.md)",
               {"spool_dir", "spool_max_bytes", "max_queued_batches"}},
              {"Host collection (--role=host; docs/COLLECTORS.md)",
               {"interval", "rescan_interval", "detail_interval", "sysfs_root", "netdevs", "ethtool",
                "ethtool_dumps", "link_events", "lldp_source", "lldp_refresh", "log_paths",
                "log_state_dir"}},
              {"Optics, FEC and link speed (--role=host; docs/LINK_HEALTH.md)",
               {"optics", "optics_dir", "optics_interval"}},
              {"Kernel messages: NIC and PCIe health (--role=host; docs/LINK_HEALTH.md)",
               {"kmsg", "kmsg_lookback", "kmsg_max_records", "kmsg_max_events"}},
              {"NCCL RAS (--role=host; docs/JOBS.md)",
               {"nccl_ras", "nccl_ras_interval", "nccl_ras_timeout", "nccl_ras_init_grace",
                "nccl_ras_monitor"}},
              {"Kubernetes pods (--role=host; docs/JOBS.md)",
               {"kubelet", "kubelet_interval", "kubelet_timeout"}},
              {"NCCL Inspector (--role=host; docs/JOBS.md)", {"nccl_inspector"}},
              {"Switch collection (--role=switch; docs/SWITCH_AGENT.md)",
               {"gnmi_targets", "gnmi_profiles", "topology"}},
              {"InfiniBand fabric (--role=ib-fabric; docs/INFINIBAND.md)",
               {"ib_source", "ib_tool_outputs", "ib_discover_interval", "ib_mad_window",
                "ib_mad_timeout"}},
              {"Logging", {"log_level"}},
          },
      .epilogue = "Deployment: docs/OPERATIONS.md.",
  };
}

}  // namespace

int main(int argc, char** argv) {
  static absl::Notification stop;
  railwatch::StartProgram(argc, argv, AgentProgram(), stop);
  const std::string role = absl::GetFlag(FLAGS_role);
  if (role != "host" && role != "switch" && role != "ib-fabric") {
    spdlog::critical("--role={}: expected host, switch or ib-fabric", role);
    return 2;
  }
  if (absl::GetFlag(FLAGS_interval) <= absl::ZeroDuration()) {
    spdlog::critical("--interval must be positive");
    return 2;
  }

  railwatch::Agent::Options options;
  options.hostname = absl::GetFlag(FLAGS_hostname);
  if (options.hostname.empty()) {
    char buf[256] = {};
    gethostname(buf, sizeof(buf) - 1);
    options.hostname = buf;
  }
  options.agent_id = absl::GetFlag(FLAGS_agent_id);
  options.interval = absl::GetFlag(FLAGS_interval);
  options.sender.server = absl::GetFlag(FLAGS_server);
  if (railwatch::AgentTlsFiles tls{absl::GetFlag(FLAGS_tls_ca), absl::GetFlag(FLAGS_tls_cert),
                                   absl::GetFlag(FLAGS_tls_key),
                                   absl::GetFlag(FLAGS_tls_reload_interval)};
      railwatch::UsesTls(tls)) {
    auto credentials = railwatch::MakeAgentChannelCredentials(tls);
    if (!credentials.ok()) {
      spdlog::critical("{}", credentials.status().message());
      return 2;
    }
    options.sender.credentials = *std::move(credentials);
  }
  options.sender.max_queued_batches =
      static_cast<size_t>(std::max(1, absl::GetFlag(FLAGS_max_queued_batches)));
  if (std::string spool = absl::GetFlag(FLAGS_spool_dir); spool != "none") {
    if (spool.empty()) spool = absl::GetFlag(FLAGS_log_state_dir) + "/spool";
    // One directory per agent: several agents may share a machine (and --spool_dir).
    std::string id = options.agent_id.empty() ? options.hostname : options.agent_id;
    for (char& c : id) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
    }
    options.spool.dir = spool + "/" + id;
    options.spool.max_bytes =
        static_cast<uint64_t>(std::max<int64_t>(1 << 20, absl::GetFlag(FLAGS_spool_max_bytes)));
  }
  options.sender.backoff.initial = absl::GetFlag(FLAGS_backoff_initial);
  options.sender.backoff.max = absl::GetFlag(FLAGS_backoff_max);

  std::vector<std::unique_ptr<railwatch::Collector>> collectors;
  if (role == "ib-fabric") {
    options.role = railwatch::v1::AGENT_ROLE_IB_FABRIC;
    if (options.agent_id.empty()) options.agent_id = options.hostname;
    std::string spec = absl::GetFlag(FLAGS_ib_source);
    const std::string dir = absl::GetFlag(FLAGS_ib_tool_outputs);
    if (!spec.empty() && !dir.empty()) {
      spdlog::critical("--ib_source and --ib_tool_outputs: give one (--ib_tool_outputs=DIR is "
                       "--ib_source=tools:DIR)");
      return 2;
    }
    if (spec.empty() && !dir.empty()) spec = "tools:" + dir;
    if (spec.empty()) {
      spdlog::critical("--role=ib-fabric needs --ib_source=tools:DIR|mad:CA[:PORT]|sim:SPEC "
                       "(or --ib_tool_outputs=DIR)");
      return 2;
    }
    // A tools directory that is missing now may appear (a cron job's first run): the
    // collector fails its cycles and says why until then. A CA that cannot be opened is fatal:
    // the agent says which and why.
    absl::StatusOr<std::unique_ptr<railwatch::IbFabricSource>> source =
        railwatch::MakeIbFabricSource(
            spec, {absl::GetFlag(FLAGS_ib_discover_interval), absl::GetFlag(FLAGS_ib_mad_window),
                   absl::GetFlag(FLAGS_ib_mad_timeout)});
    if (!source.ok()) {
      spdlog::critical("{}", source.status().message());
      return 2;
    }
    collectors.push_back(std::make_unique<railwatch::IbFabricCollector>(
        railwatch::IbFabricCollector::Options{{{"agent", options.agent_id}}},
        *std::move(source)));
  } else if (role == "switch") {
    options.role = railwatch::v1::AGENT_ROLE_SWITCH;
    if (options.agent_id.empty()) options.agent_id = options.hostname;
    if (absl::GetFlag(FLAGS_gnmi_targets).empty()) {
      spdlog::critical("--role=switch needs --gnmi_targets=FILE");
      return 2;
    }
    std::string profiles = absl::GetFlag(FLAGS_gnmi_profiles);
    if (profiles.empty()) profiles = railwatch::ShippedPath("profiles/gnmi");
    railwatch::GnmiSwitchCollector::Options gnmi;
    gnmi.self_labels = {{"agent", options.agent_id}};
    gnmi.channel.backoff.initial = absl::GetFlag(FLAGS_backoff_initial);
    gnmi.channel.backoff.max = absl::GetFlag(FLAGS_backoff_max);
    if (const std::string file = absl::GetFlag(FLAGS_topology); !file.empty()) {
      absl::StatusOr<railwatch::Topology> topology = railwatch::Topology::LoadFile(file);
      if (!topology.ok()) {
        spdlog::critical("--topology: {}", topology.status().message());
        return 2;
      }
      gnmi.topology = std::make_shared<const railwatch::Topology>(*std::move(topology));
    }
    auto collector = railwatch::GnmiSwitchCollector::FromFiles(absl::GetFlag(FLAGS_gnmi_targets),
                                                               profiles, std::move(gnmi));
    if (!collector.ok()) {
      // One problem per line, each with file:line:column.
      spdlog::critical("switch agent: {}", collector.status().message());
      return 2;
    }
    // Unreachable targets are not fatal: they are retried and their health series say so.
    (*collector)->Start();
    collectors.push_back(*std::move(collector));
  } else {
    railwatch::RdmaSysfsCollector::Options rdma{absl::GetFlag(FLAGS_sysfs_root),
                                                absl::GetFlag(FLAGS_rescan_interval)};
    rdma.detail_interval = absl::GetFlag(FLAGS_detail_interval);
    collectors.push_back(
        std::make_unique<railwatch::RdmaSysfsCollector>(rdma, railwatch::RealClock::Get()));
    if (absl::Status s = railwatch::AddNetdevCollectors(
            {absl::GetFlag(FLAGS_sysfs_root), absl::GetFlag(FLAGS_netdevs),
             absl::GetFlag(FLAGS_ethtool), absl::GetFlag(FLAGS_ethtool_dumps),
             absl::GetFlag(FLAGS_link_events),
             absl::GetFlag(FLAGS_rescan_interval), absl::GetFlag(FLAGS_detail_interval)},
            railwatch::RealClock::Get(), collectors);
        !s.ok()) {
      spdlog::critical("--netdevs: {}", s.message());
      return 2;
    }
    railwatch::OpticsCollectorSetup optics;
    optics.mode = absl::GetFlag(FLAGS_optics);
    optics.dir = absl::GetFlag(FLAGS_optics_dir);
    optics.interval = absl::GetFlag(FLAGS_optics_interval);
    optics.sysfs_root = absl::GetFlag(FLAGS_sysfs_root);
    optics.netdevs = absl::GetFlag(FLAGS_netdevs);
    optics.rescan_interval = absl::GetFlag(FLAGS_rescan_interval);
    optics.ethtool = absl::GetFlag(FLAGS_ethtool);
    absl::StatusOr<std::unique_ptr<railwatch::Collector>> optics_collector =
        railwatch::MakeOpticsCollector(optics, railwatch::RealClock::Get());
    if (!optics_collector.ok()) {
      spdlog::critical("{}", optics_collector.status().message());
      return 2;
    }
    if (*optics_collector != nullptr) collectors.push_back(*std::move(optics_collector));
    absl::StatusOr<std::unique_ptr<railwatch::LldpSource>> lldp =
        railwatch::LldpSourceFromFlag(absl::GetFlag(FLAGS_lldp_source),
                                      /*real_host=*/absl::GetFlag(FLAGS_sysfs_root) == "/sys");
    if (!lldp.ok()) {
      spdlog::critical("{}", lldp.status().message());
      return 2;
    }
    if (*lldp != nullptr) {
      collectors.push_back(std::make_unique<railwatch::LldpCollector>(
          railwatch::LldpCollector::Options{absl::GetFlag(FLAGS_lldp_refresh)}, *std::move(lldp),
          railwatch::RealClock::Get()));
    }
    if (const std::string log_paths = absl::GetFlag(FLAGS_log_paths); !log_paths.empty()) {
      railwatch::LogCollector::Options log_options;
      for (absl::string_view p : absl::StrSplit(log_paths, ',', absl::SkipWhitespace())) {
        p = absl::StripAsciiWhitespace(p);
        log_options.tailer.patterns.emplace_back(p.data(), p.size());
      }
      log_options.tailer.state_dir = absl::GetFlag(FLAGS_log_state_dir);
      collectors.push_back(std::make_unique<railwatch::LogCollector>(std::move(log_options),
                                                                     railwatch::RealClock::Get()));
    }
  }

  if (role == "host") {
    // The kernel's messages about NICs and PCIe (docs/LINK_HEALTH.md, "Kernel messages").
    absl::StatusOr<std::string> kmsg = railwatch::KmsgPathFromFlag(
        absl::GetFlag(FLAGS_kmsg), /*real_host=*/absl::GetFlag(FLAGS_sysfs_root) == "/sys");
    if (!kmsg.ok()) {
      spdlog::critical("{}", kmsg.status().message());
      return 2;
    }
    if (absl::GetFlag(FLAGS_kmsg_max_records) < 1 || absl::GetFlag(FLAGS_kmsg_max_events) < 1 ||
        absl::GetFlag(FLAGS_kmsg_lookback) < absl::ZeroDuration()) {
      spdlog::critical("--kmsg_max_records and --kmsg_max_events must be at least 1, "
                       "--kmsg_lookback not negative");
      return 2;
    }
    if (!kmsg->empty()) {
      railwatch::KmsgCollector::Options kmsg_options;
      kmsg_options.path = *kmsg;
      kmsg_options.sysfs_root = absl::GetFlag(FLAGS_sysfs_root);
      kmsg_options.state_dir = absl::GetFlag(FLAGS_log_state_dir);
      kmsg_options.lookback = absl::GetFlag(FLAGS_kmsg_lookback);
      kmsg_options.max_records = static_cast<size_t>(absl::GetFlag(FLAGS_kmsg_max_records));
      kmsg_options.max_events = static_cast<size_t>(absl::GetFlag(FLAGS_kmsg_max_events));
      collectors.push_back(std::make_unique<railwatch::KmsgCollector>(
          std::move(kmsg_options), railwatch::RealClock::Get()));
    }
    if (const std::string inspector = absl::GetFlag(FLAGS_nccl_inspector); !inspector.empty()) {
      railwatch::NcclInspectorCollector::Options inspector_options;
      for (absl::string_view p : absl::StrSplit(inspector, ',', absl::SkipWhitespace())) {
        p = absl::StripAsciiWhitespace(p);
        inspector_options.tailer.patterns.emplace_back(p.data(), p.size());
      }
      // Its own offsets: the log tailer's state file sits in --log_state_dir.
      inspector_options.tailer.state_dir = absl::GetFlag(FLAGS_log_state_dir) + "/nccl_inspector";
      inspector_options.host = options.hostname;
      collectors.push_back(std::make_unique<railwatch::NcclInspectorCollector>(
          std::move(inspector_options), railwatch::RealClock::Get()));
    }
    std::string ras = absl::GetFlag(FLAGS_nccl_ras);
    if (ras == "auto" && absl::GetFlag(FLAGS_sysfs_root) != "/sys") ras = "off";
    if (absl::StatusOr<std::vector<railwatch::RasEndpoint>> endpoints =
            railwatch::RasEndpoints(ras == "auto" ? "off" : ras, "/proc");
        !endpoints.ok()) {
      spdlog::critical("--nccl_ras: {}", endpoints.status().message());
      return 2;
    }
    if (ras != "off") {
      railwatch::NcclRasCollector::Options ras_options;
      ras_options.endpoints = ras;
      ras_options.interval = absl::GetFlag(FLAGS_nccl_ras_interval);
      ras_options.timeout = absl::GetFlag(FLAGS_nccl_ras_timeout);
      ras_options.init_grace = absl::GetFlag(FLAGS_nccl_ras_init_grace);
      ras_options.monitor = absl::GetFlag(FLAGS_nccl_ras_monitor);
      collectors.push_back(std::make_unique<railwatch::NcclRasCollector>(
          std::move(ras_options), railwatch::RealClock::Get()));
    }
    // The kubelet's pod-resources API: this host's jobs (docs/JOBS.md, "Kubernetes").
    std::string kubelet = absl::GetFlag(FLAGS_kubelet);
    const bool kubelet_auto = kubelet == "auto";
    if (kubelet_auto) {
      kubelet = absl::GetFlag(FLAGS_sysfs_root) == "/sys" ? railwatch::jobs::kDefaultKubeletSocket
                                                          : "off";
    }
    if (kubelet.empty()) {
      spdlog::critical("--kubelet: expected auto, off or the socket's path");
      return 2;
    }
    if (absl::GetFlag(FLAGS_kubelet_interval) <= absl::ZeroDuration() ||
        absl::GetFlag(FLAGS_kubelet_timeout) <= absl::ZeroDuration()) {
      spdlog::critical("--kubelet_interval and --kubelet_timeout must be positive");
      return 2;
    }
    if (kubelet != "off") {
      railwatch::KubeletCollector::Options kubelet_options;
      kubelet_options.socket = kubelet;
      kubelet_options.optional = kubelet_auto;
      kubelet_options.interval = absl::GetFlag(FLAGS_kubelet_interval);
      kubelet_options.timeout = absl::GetFlag(FLAGS_kubelet_timeout);
      collectors.push_back(std::make_unique<railwatch::KubeletCollector>(
          std::move(kubelet_options), railwatch::RealClock::Get()));
    }
  }

  railwatch::Agent agent(std::move(options), std::move(collectors));
  agent.Run(stop);
  return 0;
}
