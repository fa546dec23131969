#pragma once

// A scenario as the command lines of the programs that play it (docs/SCENARIOS.md "What the
// runner starts"): railwatch-sim, railwatchd, one switch agent, one host agent per simulated
// host and, with --baseline, sim/baseline/baseline.py. Arguments only, without the program.

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sim/scenario.h"

namespace railwatch::sim {

// Where one run keeps its files (all under its work directory).
struct RunPaths {
  std::string work;
  std::string root;          // the simulator's per-host trees: <work>/sys
  std::string ground_truth;  // <work>/truth.jsonl
  std::string topology;      // <work>/topology.yaml
  std::string targets;       // <work>/targets.yaml
  std::string ib_outputs;    // <work>/ib: the InfiniBand subnet's db_csv (fabric: ib)
  std::string daemon_ready;  // <work>/daemon-ready.json
  std::string diagnoses;     // <work>/diagnoses.json
  std::string baseline_work, baseline_ready, baseline_diagnoses;
};
RunPaths RunPathsUnder(const std::string& work);

// Whether this build of railwatch-sim has a flag (by name, without dashes).
using HasFlag = std::function<bool(absl::string_view)>;

// The simulator's flags for a scenario: the fabric's size and settings, the jobs, and
// --scenario=FILE (absolute), from which the simulator takes the faults and the driver reloads
// through their kinds (sim/fault_kinds.h), never as one flag string per fault. A flag this
// build lacks that the scenario needs (--scenario for faults, a non-default fabric setting) is
// an error naming it; optional flags it lacks at their default values are left out.
absl::StatusOr<std::vector<std::string>> SimulatorArgs(const Scenario& s, const RunPaths& p,
                                                       const HasFlag& has_flag);

// `topology_file` false: no --topology (the map is discovered, --topology_source=discovered).
std::vector<std::string> DaemonArgs(const RunPaths& p, const std::string& rules_dir,
                                    const std::string& listen = "127.0.0.1:0",
                                    const std::string& metrics_listen = "127.0.0.1:0",
                                    bool topology_file = true);
std::vector<std::string> SwitchAgentArgs(const RunPaths& p, const std::string& server,
                                         const std::string& gnmi_profiles_dir,
                                         bool topology_file = true);
// The InfiniBand fabric scanner of a `fabric: ib` scenario, in place of the switch agent: it
// reads the simulator's db_csv from <work>/ib every 10 s, its default interval (the file's
// NODES and LINKS are its topology).
// `mad`: through its MAD source, --ib_source=simdb:<work>/ib/ibdiagnet2.db_csv, rediscovering
// every 30 s (and at once on a link-down).
std::vector<std::string> IbScannerArgs(const RunPaths& p, const std::string& server,
                                       bool mad = false);
// The agent id the runner gives the scanner.
inline constexpr char kIbScannerId[] = "ib-scanner";
// `ethtool_dumps`: the agent has --ethtool_dumps (reads the simulator's ethtool dumps);
// without it the agent's ethtool collector is off. `infiniband`: an IB host, with no ethtool
// dumps and no LLDP.
std::vector<std::string> HostAgentArgs(const RunPaths& p, const std::string& server,
                                       const std::string& host, bool ethtool_dumps,
                                       bool infiniband = false);
// The host agent's flags for the NCCL RAS endpoint the simulator serves for `host`'s job
// (<root>/<host>/nccl/ras_port, sim/ras_server.h): asked every 2 s without an init grace. None
// when the host runs no job (or the simulator serves no RAS).
std::vector<std::string> HostRasArgs(const RunPaths& p, const std::string& host);
std::vector<std::string> BaselineArgs(const RunPaths& p, const std::string& script, int hosts);

}  // namespace railwatch::sim
