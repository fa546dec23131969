// railwatch-sim: a simulated fabric for the demo, tests and benchmarks.
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "common/program.h"
#include "common/signals.h"
#include "sim/fault_kinds.h"
#include "sim/gnmi_switch.h"
#include "sim/host_flags.h"
#include "sim/ib_switches.h"
#include "sim/repeated_flags.h"
#include "sim/runner.h"
#include "sim/scenario.h"
#include "sim/switch_model.h"
#include "sim/sysfs_fabric.h"
#include "sim/topology_writer.h"

ABSL_FLAG(std::string, root, "",
          "directory for the per-host sysfs trees (<root>/<host>/class/...)");
ABSL_FLAG(int, hosts, 4, "simulated hosts");
ABSL_FLAG(int, nics, 8, "RDMA NICs per host");
ABSL_FLAG(absl::Duration, tick, absl::Milliseconds(100), "how often counters move");
ABSL_FLAG(absl::Duration, duration, absl::ZeroDuration(),
          "stop after this long (0: run until signalled)");
ABSL_FLAG(std::vector<std::string>, job, {},
          "training jobs, NAME:FIRST-LAST[:UTIL] (hosts 1-based, inclusive; UTIL of line rate, "
          "default 0.8): their hosts run collectives on all NICs in lockstep; other hosts keep "
          "the background step rhythm. Repeatable");
ABSL_FLAG(std::string, ground_truth, "", "append one JSON line per injected fault to this file");
ABSL_FLAG(std::string, scenario, "",
          "inject the faults and driver reloads of this scenario file (docs/SCENARIOS.md), as "
          "`railwatch-sim run` does; the fault flags add to them");
ABSL_FLAG(uint64_t, seed, 1, "random seed (same seed, same traffic)");
ABSL_FLAG(double, link_gbps, 400, "NIC speed");

// Simulated switches (docs/SIMULATOR.md). None of these given: no switches, no gNMI servers.
ABSL_FLAG(bool, switches, false,
          "simulate the switches too: one leaf per rail (leaf-r<k>), each serving gNMI");
ABSL_FLAG(int, spines, 0, "spine switches (spine-<n>); every leaf has one uplink to each");
ABSL_FLAG(int, hosts_per_leaf, 0,
          "0: one leaf per rail for all hosts (leaf-r<k>); N: rail groups of N hosts, host i in "
          "group (i-1)/N on leaf-g<group>-r<k>");
ABSL_FLAG(std::vector<std::string>, switch_dialects, {},
          "network OS per switch: sonic, arista-eos, openconfig, cumulus, assigned round-robin "
          "(leaves, then spines); SWITCH=DIALECT names one switch's (implies --switches)");
ABSL_FLAG(int, gnmi_port_base, 0, "switch i serves gNMI on 127.0.0.1:<base+i>; 0: free ports");
ABSL_FLAG(std::string, gnmi_targets_out, "", "write the switch agent's targets file here");
ABSL_FLAG(std::string, topology_out, "", "write the fabric's topology file (YAML) here");
ABSL_FLAG(std::string, gnmi_username, "", "switches require this username (gRPC metadata)");
ABSL_FLAG(std::string, gnmi_password, "", "switches require this password (gRPC metadata)");
ABSL_FLAG(
    double, benign_pause_rate, 2,
    "noise: benign PFC pause frames per second per leaf port, each way, on priority 3 (0: none)");
// InfiniBand (docs/SIMULATOR.md "InfiniBand").
ABSL_FLAG(std::string, fabric, "roce",
          "roce: Ethernet NICs and gNMI switches; ib: InfiniBand HCAs (link layer InfiniBand), "
          "and the switches written as ibdiagnet's db_csv into --ib_outputs for the fabric "
          "scanner (railwatch-agent --role=ib-fabric --ib_source=tools:DIR)");
ABSL_FLAG(std::string, ib_outputs, "",
          "--fabric=ib: directory for the subnet's ibdiagnet2.db_csv (default <root>/../ib)");
ABSL_FLAG(absl::Duration, ib_write_interval, absl::Seconds(1),
          "--fabric=ib: how often the subnet's file is written again");
ABSL_FLAG(std::vector<std::string>, lldp_miswire, {},
          "switch ports whose LLDP neighbour is another host than the topology says, SWITCH/PORT");

namespace {

// Builds the switches when any switch flag asks for them, starts their gNMI servers and writes
// the targets and topology files. Leaves both null when no switch flag is given. `so` holds the
// faults' switch side (sim/fault_kinds.h).
absl::Status StartSwitches(const railwatch::sim::SysfsFabric::Options& fabric,
                           railwatch::sim::SwitchFabric::Options so,
                           railwatch::sim::IbSwitchModel::Options io, absl::Time start,
                           std::unique_ptr<railwatch::sim::SwitchFabric>& switches,
                           std::unique_ptr<railwatch::sim::GnmiSwitchFarm>& farm,
                           std::unique_ptr<railwatch::sim::IbSwitchModel>& ib) {
  namespace sim = railwatch::sim;
  const bool infiniband = fabric.infiniband;
  // InfiniBand switches speak no gNMI: they are always simulated, and written as files.
  const bool serve =
      !infiniband &&
      (absl::GetFlag(FLAGS_switches) || !absl::GetFlag(FLAGS_switch_dialects).empty() ||
       absl::GetFlag(FLAGS_spines) > 0 || !absl::GetFlag(FLAGS_gnmi_targets_out).empty());
  const std::string topology_out = absl::GetFlag(FLAGS_topology_out);
  if (infiniband && (!absl::GetFlag(FLAGS_switch_dialects).empty() ||
                     !absl::GetFlag(FLAGS_gnmi_targets_out).empty() ||
                     !absl::GetFlag(FLAGS_lldp_miswire).empty())) {
    return absl::InvalidArgumentError(
        "--switch_dialects, --gnmi_targets_out and --lldp_miswire are of gNMI switches; "
        "--fabric=ib has none");
  }
  if (!serve && !infiniband && topology_out.empty()) {
    if (!so.storms.empty() || !so.deadlocks.empty() || !absl::GetFlag(FLAGS_lldp_miswire).empty()) {
      std::vector<std::string> flags;
      for (const sim::FaultKind* k : sim::FaultKinds()) {
        if (k->needs_switches) flags.push_back(absl::StrCat("--", k->flag));
      }
      flags.push_back("--lldp_miswire");
      const std::string last = flags.back();
      flags.pop_back();
      return absl::InvalidArgumentError(
          absl::StrCat(absl::StrJoin(flags, ", "), " and ", last, " need --switches"));
    }
    return absl::OkStatus();
  }
  so.hosts = fabric.hosts;
  so.nics_per_host = fabric.nics_per_host;
  so.spines = absl::GetFlag(FLAGS_spines);
  so.hosts_per_leaf = absl::GetFlag(FLAGS_hosts_per_leaf);
  so.benign_pause_rate = infiniband ? 0 : absl::GetFlag(FLAGS_benign_pause_rate);
  so.infiniband = infiniband;
  if (!(so.benign_pause_rate >= 0)) {
    return absl::InvalidArgumentError("--benign_pause_rate must be 0 or more pauses per second");
  }
  so.dialects = absl::GetFlag(FLAGS_switch_dialects);
  so.seed = fabric.seed;
  so.ground_truth_file = fabric.ground_truth_file;
  for (const std::string& spec : absl::GetFlag(FLAGS_lldp_miswire)) {
    absl::StatusOr<sim::LldpMiswire> m = sim::ParseLldpMiswire(spec);
    if (!m.ok()) return m.status();
    so.miswires.push_back(*m);
  }
  so.link_gbps = fabric.link_gbps;
  absl::StatusOr<std::unique_ptr<sim::SwitchFabric>> built = sim::SwitchFabric::Create(so, start);
  if (!built.ok()) return built.status();
  switches = std::move(*built);
  // Each host's lldpd answer (what its agent reads), before the topology file: a runner that
  // waits for that file finds these too. InfiniBand has no LLDP: the subnet is the SM's.
  if (!fabric.root.empty() && !infiniband) {
    if (absl::Status s = sim::WriteHostLldpFiles(fabric.root, switches->switches()); !s.ok()) {
      return s;
    }
  }
  if (!topology_out.empty()) {
    if (absl::Status s = sim::WriteTopologyFile(topology_out, switches->switches(), so.hosts,
                                                so.nics_per_host, fabric.jobs, infiniband);
        !s.ok()) {
      return s;
    }
  }
  if (infiniband) {
    io.link_gbps = fabric.link_gbps;
    io.seed = fabric.seed;
    io.ground_truth_file = fabric.ground_truth_file;
    io.write_interval = absl::GetFlag(FLAGS_ib_write_interval);
    io.dir = absl::GetFlag(FLAGS_ib_outputs);
    if (io.dir.empty()) io.dir = (std::filesystem::path(fabric.root) / ".." / "ib").lexically_normal();
    absl::StatusOr<std::unique_ptr<sim::IbSwitchModel>> model =
        sim::IbSwitchModel::Create(std::move(io), *switches, start);
    if (!model.ok()) return model.status();
    ib = std::move(*model);
    // The subnet's file exists before anyone looks for it.
    if (absl::Status s = ib->Update(start); !s.ok()) return s;
    spdlog::info("InfiniBand subnet: {} switches written to {} every {}",
                 switches->switches().size(), ib->DbCsvPath(),
                 absl::FormatDuration(absl::GetFlag(FLAGS_ib_write_interval)));
  }
  if (!serve) return absl::OkStatus();
  sim::GnmiServeOptions go;
  go.port_base = absl::GetFlag(FLAGS_gnmi_port_base);
  go.username = absl::GetFlag(FLAGS_gnmi_username);
  go.password = absl::GetFlag(FLAGS_gnmi_password);
  absl::StatusOr<std::unique_ptr<sim::GnmiSwitchFarm>> started =
      sim::GnmiSwitchFarm::Start(switches.get(), go);
  if (!started.ok()) return started.status();
  farm = std::move(*started);
  std::vector<std::string> addresses;
  for (size_t i = 0; i < switches->switches().size(); ++i) {
    const sim::SimSwitch& sw = switches->switches()[i];
    addresses.push_back(farm->address(static_cast<int>(i)));
    spdlog::info("switch {} ({}) serves gNMI on {}", sw.name, sim::DialectName(sw.dialect),
                 addresses.back());
  }
  if (const std::string out = absl::GetFlag(FLAGS_gnmi_targets_out); !out.empty()) {
    sim::TargetsFileOptions to;
    to.username = go.username;
    to.password = go.password;
    if (absl::Status s = sim::WriteTargetsFile(out, switches->switches(), addresses, to); !s.ok())
      return s;
  }
  return absl::OkStatus();
}

// The jobs, then every fault: from --scenario and from the fault flags, through their kinds.
absl::Status ParseJobsAndFaults(railwatch::sim::SimFaultTargets& targets) {
  namespace sim = railwatch::sim;
  for (const std::string& spec : absl::GetFlag(FLAGS_job)) {
    absl::StatusOr<sim::SimJob> job = sim::ParseJob(spec);
    if (!job.ok()) return job.status();
    targets.hosts.jobs.push_back(*job);
  }
  if (const std::string file = absl::GetFlag(FLAGS_scenario); !file.empty()) {
    absl::StatusOr<sim::Scenario> scenario = sim::LoadScenarioFile(file);
    if (!scenario.ok()) return scenario.status();
    if (absl::Status s = sim::ApplyScenarioFaults(*scenario, targets); !s.ok()) return s;
  }
  return sim::ApplyFaultFlags(targets);
}

// --help's group of fault flags: each kind's flag and its companions, then the rest.
std::vector<std::string> FaultFlagNames() {
  std::vector<std::string> names;
  for (const railwatch::sim::FaultKind* k : railwatch::sim::FaultKinds()) {
    names.emplace_back(k->flag);
    for (absl::string_view companion : k->companion_flags) names.emplace_back(companion);
  }
  for (const char* other : {"driver_reload", "lldp_miswire", "scenario", "ground_truth"}) {
    names.emplace_back(other);
  }
  return names;
}

railwatch::ProgramInfo SimProgram() {
  return {
      .name = "railwatch-sim",
      .summary =
          "the railwatch fabric simulator: writes sysfs trees, ethtool dumps and NCCL logs "
          "for simulated GPU hosts whose counters move with their training jobs' traffic, "
          "serves gNMI as simulated switches, and injects faults at chosen times with "
          "their ground truth.",
      .usage =
          "Usage: railwatch-sim --root=DIR [--hosts=4] [--job=train:1-4] "
          "[--flap=gpu-node-003/mlx5_5/1@8s]\n"
          "       [--switches --spines=2] [--pfc_storm=...] [--degrade=...] [--ecn_misconfig=...]\n"
          "       railwatch-sim run [--live] SCENARIO.yaml...   (play and score scenarios; "
          "run --help)\n"
          "       railwatch-sim score --scenario=F --truth=T --diagnoses=D   (score --help)\n"
          "A fault flag may be given several times or as a comma-separated list.",
      .groups =
          {
              {"Hosts and jobs",
               {"root", "hosts", "nics", "link_gbps", "job", "hosts_per_leaf", "seed", "tick",
                "duration", "bursty"}},
              {"What each host writes",
               {"ethtool", "ethtool_interval", "nccl_logs", "nccl_inspector", "nccl_ras"}},
              {"InfiniBand", {"fabric", "ib_outputs", "ib_write_interval"}},
              {"Switches (gNMI)",
               {"switches", "spines", "switch_dialects", "gnmi_port_base", "gnmi_targets_out",
                "topology_out", "gnmi_username", "gnmi_password", "benign_pause_rate"}},
              {"Faults (docs/SIMULATOR.md)", FaultFlagNames()},
              {"Logging", {"log_level"}},
          },
      .epilogue = "Simulator: docs/SIMULATOR.md; scenarios and scoring: docs/SCENARIOS.md.",
  };
}

}  // namespace

int main(int argc, char** argv) {
  // Subcommands (docs/SCENARIOS.md), before the simulator's own flags are parsed.
  if (argc > 1 && (std::string(argv[1]) == "run" || std::string(argv[1]) == "score")) {
    const std::vector<std::string> sub(argv + 2, argv + argc);
    if (std::string(argv[1]) == "score") return railwatch::sim::ScoreMain(sub);
    static absl::Notification run_stop;
    railwatch::NotifyOnTerminationSignal(run_stop);
    return railwatch::sim::RunMain(sub, run_stop);
  }
  static absl::Notification stop;
  std::vector<std::string> list_flags = {"lldp_miswire", "job"};
  for (const std::string& name : railwatch::sim::HostListFlags()) list_flags.push_back(name);
  for (const railwatch::sim::FaultKind* k : railwatch::sim::FaultKinds())
    list_flags.emplace_back(k->flag);
  std::vector<std::string> args = railwatch::sim::JoinRepeatedFlags(argc, argv, list_flags);
  std::vector<char*> arg_pointers;
  for (std::string& a : args) arg_pointers.push_back(a.data());
  railwatch::StartProgram(static_cast<int>(arg_pointers.size()), arg_pointers.data(), SimProgram(),
                          stop);
  railwatch::sim::SysfsFabric::Options o;
  o.root = absl::GetFlag(FLAGS_root);
  if (o.root.empty()) {
    spdlog::critical("--root is required");
    return 2;
  }
  o.hosts = absl::GetFlag(FLAGS_hosts);
  o.nics_per_host = absl::GetFlag(FLAGS_nics);
  o.seed = absl::GetFlag(FLAGS_seed);
  o.link_gbps = absl::GetFlag(FLAGS_link_gbps);
  o.ground_truth_file = absl::GetFlag(FLAGS_ground_truth);
  o.hosts_per_leaf = absl::GetFlag(FLAGS_hosts_per_leaf);
  if (absl::Status s = railwatch::sim::ParseHostFlags(o); !s.ok()) {
    spdlog::critical("{}", s.message());
    return 2;
  }
  const std::string fabric_kind = absl::GetFlag(FLAGS_fabric);
  if (fabric_kind != "roce" && fabric_kind != "ib") {
    spdlog::critical("--fabric={}: expected roce or ib", fabric_kind);
    return 2;
  }
  o.infiniband = fabric_kind == "ib";
  if (o.infiniband) o.ethtool = false;  // no Ethernet counters on an IB port
  railwatch::sim::SwitchFabric::Options so;
  railwatch::sim::IbSwitchModel::Options io;
  railwatch::sim::SimFaultTargets faults{o, so, io, o.infiniband};
  if (absl::Status s = ParseJobsAndFaults(faults); !s.ok()) {
    spdlog::critical("{}", s.message());
    return 2;
  }
  railwatch::sim::SysfsFabric fabric(o);
  const absl::Time start = absl::Now();
  if (absl::Status s = fabric.Create(start); !s.ok()) {
    spdlog::critical("{}", s.message());
    return 1;
  }
  spdlog::info("simulating {} hosts x {} NICs under {}", o.hosts, o.nics_per_host, o.root);

  std::unique_ptr<railwatch::sim::SwitchFabric> switches;
  std::unique_ptr<railwatch::sim::GnmiSwitchFarm> farm;
  std::unique_ptr<railwatch::sim::IbSwitchModel> ib;
  if (absl::Status s = StartSwitches(o, std::move(so), std::move(io), start, switches, farm, ib);
      !s.ok()) {
    spdlog::critical("{}", s.message());
    return 2;
  }
  std::vector<railwatch::sim::NicTraffic> traffic;
  const absl::Duration tick = absl::GetFlag(FLAGS_tick);
  const absl::Duration duration = absl::GetFlag(FLAGS_duration);
  absl::Time next = start;
  while (!stop.HasBeenNotified()) {
    const absl::Time now = absl::Now();
    if (duration > absl::ZeroDuration() && now - start >= duration) break;
    if (absl::Status s = fabric.Tick(now); !s.ok()) {
      spdlog::critical("{}", s.message());
      return 1;
    }
    if (switches != nullptr) {
      fabric.ReadTraffic(traffic);
      if (absl::Status s = switches->Update(now, traffic); !s.ok()) {
        spdlog::critical("{}", s.message());
        return 1;
      }
      // ON_CHANGE updates (a flap's DOWN) leave now, before the next tick can undo them.
      if (farm != nullptr) farm->Pump();
      if (ib != nullptr) {
        if (absl::Status s = ib->Update(now); !s.ok()) {
          spdlog::critical("{}", s.message());
          return 1;
        }
      }
    }
    next += tick;
    if (next < now) next = now;
    stop.WaitForNotificationWithDeadline(next);
  }
  return 0;
}
