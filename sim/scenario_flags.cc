// Scenario -> the command lines of the simulator, the agents, the daemon and the baseline.
#include "sim/scenario_flags.h"

#include <filesystem>
#include <fstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/text.h"

namespace railwatch::sim {
RunPaths RunPathsUnder(const std::string& work) {
  RunPaths p;
  p.work = work;
  p.root = work + "/sys";
  p.ground_truth = work + "/truth.jsonl";
  p.topology = work + "/topology.yaml";
  p.targets = work + "/targets.yaml";
  p.ib_outputs = work + "/ib";
  p.daemon_ready = work + "/daemon-ready.json";
  p.diagnoses = work + "/diagnoses.json";
  p.baseline_work = work + "/baseline";
  p.baseline_ready = work + "/baseline-ready.json";
  p.baseline_diagnoses = work + "/baseline-diagnoses.json";
  return p;
}

absl::StatusOr<std::vector<std::string>> SimulatorArgs(const Scenario& s, const RunPaths& p,
                                                       const HasFlag& has_flag) {
  const ScenarioTopology& t = s.topology;
  std::vector<std::string> args = {
      "--root=" + p.root,
      absl::StrCat("--hosts=", t.hosts),
      absl::StrCat("--nics=", t.nics),
      absl::StrCat("--seed=", s.seed),
      absl::StrCat("--link_gbps=", t.link_gbps),
      absl::StrCat("--spines=", t.spines),
  };
  std::vector<std::string> missing;
  if (t.infiniband) {
    // The switches are files for the fabric scanner: no gNMI, no dialects.
    if (!has_flag("fabric")) missing.push_back("fabric");
    args.push_back("--fabric=ib");
    args.push_back("--ib_outputs=" + p.ib_outputs);
  } else {
    args.push_back("--switch_dialects=" + absl::StrJoin(t.dialects, ","));
    args.push_back("--gnmi_targets_out=" + p.targets);
  }
  args.push_back("--topology_out=" + p.topology);
  args.push_back("--ground_truth=" + p.ground_truth);
  // Optional flags: passed when this build has them; refused only when the scenario asks for
  // something other than what a build without them does.
  auto optional = [&](const char* flag, const std::string& value, bool is_default) {
    if (has_flag(flag)) {
      args.push_back(absl::StrCat("--", flag, value.empty() ? "" : "=", value));
    } else if (!is_default) {
      missing.push_back(flag);
    }
  };
  optional("hosts_per_leaf", absl::StrCat(t.hosts_per_leaf), t.hosts_per_leaf == 0);
  optional("bursty", s.noise.bursty ? "true" : "false", true);
  optional("benign_pause_rate", absl::StrCat(s.noise.benign_pause_rate),
           s.noise.benign_pause_rate == 2);
  optional("ethtool", "", true);
  optional("nccl_logs", "", true);
  optional("nccl_inspector", "", true);
  optional("nccl_ras", "", true);

  // The faults and the driver reloads: the simulator reads them from the scenario file itself
  // and hands them to their kinds (sim/fault_kinds.h), as the runner's loader read them.
  optional("scenario", std::filesystem::absolute(s.file).string(),
           s.faults.empty() && s.noise.driver_reloads.empty());
  std::vector<std::string> jobs;
  for (const ScenarioJob& j : s.jobs) {
    jobs.push_back(absl::StrCat(j.name, ":", j.first_host, "-", j.last_host, ":", j.util));
  }
  if (!jobs.empty()) args.push_back(absl::StrCat("--job=", absl::StrJoin(jobs, ",")));
  if (!missing.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(s.file, ": this railwatch-sim has no --", absl::StrJoin(missing, ", --"),
                     " (the scenario needs them: docs/SCENARIOS.md \"Fault kinds\")"));
  }
  return args;
}

std::vector<std::string> DaemonArgs(const RunPaths& p, const std::string& rules_dir,
                                    const std::string& listen, const std::string& metrics_listen,
                                    bool topology_file) {
  std::vector<std::string> args = {"--listen=" + listen, "--metrics_listen=" + metrics_listen,
                                   "--rules=" + rules_dir, "--topology=" + p.topology,
                                   "--ready_file=" + p.daemon_ready};
  if (!topology_file) args.erase(args.begin() + 3);
  return args;
}

std::vector<std::string> SwitchAgentArgs(const RunPaths& p, const std::string& server,
                                         const std::string& gnmi_profiles_dir,
                                         bool topology_file) {
  return {"--role=switch",
          "--agent_id=switch-agent",
          "--server=" + server,
          "--interval=1s",
          "--gnmi_targets=" + p.targets,
          "--gnmi_profiles=" + gnmi_profiles_dir,
          topology_file ? "--topology=" + p.topology : "--topology=",
          // Its spool (<log_state_dir>/spool) in the run's work dir: no replay into another run.
          absl::StrCat("--log_state_dir=", p.work, "/state/switch-agent"),
          "--backoff_initial=100ms",
          "--backoff_max=1s"};
}

std::vector<std::string> IbScannerArgs(const RunPaths& p, const std::string& server, bool mad) {
  std::vector<std::string> args = {"--role=ib-fabric",
                                   absl::StrCat("--agent_id=", kIbScannerId),
                                   "--server=" + server,
                                   "--interval=10s",
                                   absl::StrCat("--log_state_dir=", p.work, "/state/", kIbScannerId),
                                   "--backoff_initial=100ms",
                                   "--backoff_max=1s"};
  if (mad) {
    args.push_back("--ib_source=simdb:" + p.ib_outputs + "/ibdiagnet2.db_csv");
    args.push_back("--ib_discover_interval=30s");
  } else {
    args.push_back("--ib_source=tools:" + p.ib_outputs);
  }
  return args;
}

std::vector<std::string> HostAgentArgs(const RunPaths& p, const std::string& server,
                                       const std::string& host, bool ethtool_dumps,
                                       bool infiniband) {
  const std::string tree = absl::StrCat(p.root, "/", host);
  return {"--server=" + server,
          "--hostname=" + host,
          "--sysfs_root=" + tree,
          "--interval=1s",
          ethtool_dumps && !infiniband ? absl::StrCat("--ethtool_dumps=", tree, "/ethtool")
                                       : "--ethtool=false",
          "--link_events=false",
          absl::StrCat("--log_paths=", tree, "/nccl/*.log"),
          absl::StrCat("--nccl_inspector=", tree, "/nccl/inspector/*.log"),
          // Its NICs' modules and FEC statistics, as the simulator writes them every 2 s.
          absl::StrCat("--optics_dir=", tree, "/optics"),
          "--optics_interval=2s",
          // Its kernel log, as /dev/kmsg reads (sim/kmsg_writer.h).
          absl::StrCat("--kmsg=", tree, "/kmsg"),
          // What the host's lldpd would say (the simulator writes it): both ends of each cable.
          // InfiniBand has no LLDP.
          infiniband ? "--lldp_source=off" : absl::StrCat("--lldp_source=file:", tree, "/lldpd.json"),
          absl::StrCat("--log_state_dir=", p.work, "/state/", host),
          "--backoff_initial=100ms",
          "--backoff_max=1s"};
}

std::vector<std::string> HostRasArgs(const RunPaths& p, const std::string& host) {
  const std::string file = absl::StrCat(p.root, "/", host, "/nccl/ras_port");
  std::ifstream in(file);
  int port = 0;
  if (!(in >> port) || port <= 0 || port > 65535) return {};
  // Asked every 2 s from the start: the simulated jobs have no init to protect, and a hung rank
  // must show before the 10 s collective timeout.
  return {absl::StrCat("--nccl_ras=127.0.0.1:", port), "--nccl_ras_interval=2s",
          "--nccl_ras_timeout=1s", "--nccl_ras_init_grace=0s"};
}

std::vector<std::string> BaselineArgs(const RunPaths& p, const std::string& script, int hosts) {
  return {script,
          "--root=" + p.root,
          absl::StrCat("--hosts=", hosts),
          "--work=" + p.baseline_work,
          "--out=" + p.baseline_diagnoses,
          "--ready_file=" + p.baseline_ready};
}

}  // namespace railwatch::sim
