#pragma once

// A scenario file (docs/SCENARIOS.md): a simulated fabric, its jobs, noise and faults with their
// times, and what the run must show. LoadScenarioFile reads and checks one (on
// common/yaml_reader.h; each fault's own keys through its kind, sim/fault_kinds.h);
// scenario_flags.h gives the command lines of the simulator (which reads the same file),
// the agents and the daemon; score.h scores a run of it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/text.h"
#include "sim/fault_kinds.h"
#include "sim/fault_specs.h"

namespace railwatch::sim {

struct ScenarioTopology {
  int hosts = 4;
  int nics = 8;
  int hosts_per_leaf = 0;  // 0: one leaf per rail for every host (leaf-r<k>)
  int spines = 0;
  double link_gbps = 400;
  std::vector<std::string> dialects = {"sonic", "arista-eos"};
  // `fabric: ib`: InfiniBand (railwatch-sim --fabric=ib): the switches are read by the fabric
  // scanner from the simulator's ibdiagnet files, not over gNMI; `roce` (the default).
  bool infiniband = false;
  // `ib_source: mad` (fabric: ib): the scanner reads the simulator's subnet through its MAD
  // source (discovery by directed route, PMA queries: --ib_source=simdb:FILE) instead of as
  // tool output (`tools`, the default).
  bool ib_mad = false;
};

struct ScenarioJob {
  std::string name;
  int first_host = 1, last_host = 1;  // 1-based, inclusive
  double util = 0.8;
};

// --driver_reload=HOST/DEVICE@OFFSET, noise and not a fault: the driver reloads; the device's
// counters restart from 0 (the netdev's ethtool counters too). Nothing should fire.
absl::StatusOr<DriverReload> ParseDriverReload(absl::string_view spec);

struct DriverReloadNoise {
  std::string host, device;
  absl::Duration at;
  int line = 0;
};

struct ScenarioNoise {
  bool bursty = true;
  double benign_pause_rate = 2;
  std::vector<DriverReloadNoise> driver_reloads;
};

struct ScenarioExpect {
  bool all_detected = true;  // detected: all (every fault, with the right culprit) | none
  int max_false = 0;
  std::vector<std::string> tolerated;  // playbooks that may fire anywhere
  bool within_target = false;          // every delay within its kind's target
};

struct Scenario {
  std::string file;  // as given to LoadScenarioFile
  std::string name;  // default: the file name without .yaml
  std::string description;
  uint64_t seed = 1;
  absl::Duration duration;
  ScenarioTopology topology;
  std::vector<ScenarioJob> jobs;
  ScenarioNoise noise;
  std::vector<ScenarioFault> faults;
  ScenarioExpect expect;

  // The earliest fault or noise offset; nullopt when there is none.
  std::optional<absl::Duration> FirstEventAt() const;
  // The job that runs on `host` (gpu-node-003); nullptr when none does.
  const ScenarioJob* JobOf(absl::string_view host) const;
};

// gpu-node-001 ... (1-based).
std::string SimHostName(int index);
// The switches the simulator builds for a topology: leaves, then spines.
std::vector<std::string> SimSwitchNames(const ScenarioTopology& topology);
// How many ports switch `name` has (0: no such switch) and how many of them, the first ones,
// face hosts (a leaf's host ports come before its uplinks; a spine has none).
std::pair<int, int> SimSwitchPorts(const ScenarioTopology& topology, std::string_view name);

// Reads and checks a scenario file. Every problem is reported, one a line, as
// FILE:LINE:COLUMN: error[CODE]: message (common/yaml_reader.h's LoadProblem); unknown keys
// and unknown fault kinds are errors with the closest known one.
absl::StatusOr<Scenario> LoadScenarioFile(const std::string& path);
// The same on text; `file` names it in messages and gives the default name.
absl::StatusOr<Scenario> ParseScenario(absl::string_view yaml, const std::string& file);

// The nearest known word, when `word` is a typo of it (common/text.h).
using ::railwatch::ClosestWord;

}  // namespace railwatch::sim
