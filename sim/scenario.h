#pragma once

// A scenario file (docs/SCENARIOS.md): a simulated fabric, its jobs, noise and faults with their
// times, and what the run must show. LoadScenarioFile reads and checks one; scenario_flags.h
// turns it into the command lines of the simulator, the agents and the daemon; score.h scores
// a run of it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/text.h"

namespace railwatch::sim {

// What the suite knows of one fault kind: the fields a scenario may give it, the ground-truth
// lines it leaves, the playbook that must fire and the culprit labels that playbook must carry
// (their values come from the ground-truth line), and the delay target, if any.
struct FaultKindInfo {
  absl::string_view kind;        // in the scenario file: pfc_storm, link_flap_repeated, ...
  absl::string_view truth_kind;  // "fault" of its ground-truth lines: link_degrade -> nic_degrade
  absl::string_view playbook;
  std::vector<absl::string_view> culprit;  // labels, e.g. {"host", "device"}
  std::optional<absl::Duration> target;
  std::vector<absl::string_view> fields;    // allowed besides `kind`
  std::vector<absl::string_view> required;  // must be given
};

// Every kind, in the order of docs/SCENARIOS.md's table.
const std::vector<FaultKindInfo>& FaultKinds();
// nullptr for an unknown kind.
const FaultKindInfo* FindFaultKind(absl::string_view kind);
// The kind of a ground-truth "fault" name (nic_degrade -> link_degrade's info); nullptr if none.
const FaultKindInfo* FindFaultKindByTruth(absl::string_view truth_kind);

struct ScenarioTopology {
  int hosts = 4;
  int nics = 8;
  int hosts_per_leaf = 0;  // 0: one leaf per rail for every host (leaf-r<k>)
  int spines = 0;
  double link_gbps = 400;
  std::vector<std::string> dialects = {"sonic", "arista-eos"};
};

struct ScenarioJob {
  std::string name;
  int first_host = 1, last_host = 1;  // 1-based, inclusive
  double util = 0.8;
};

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

// One fault. Fields a kind does not use keep their defaults.
struct ScenarioFault {
  std::string kind;
  const FaultKindInfo* info = nullptr;
  std::string host, device, switch_name;
  int port = 1;
  absl::Duration at;
  absl::Duration duration;  // `for:` of pfc_storm and pfc_deadlock (0: to the end)
  absl::Duration down_for = absl::Milliseconds(300);  // link flaps
  int count = 3;                                      // link_flap_repeated
  absl::Duration period = absl::Seconds(5);           // link_flap_repeated
  double per_minute = 120;                            // bit_errors
  double factor = 0.5;                                // link_degrade, straggler
  double offset_kb = 3;                               // ecn_misconfig
  double per_second = 500;                            // packet_loss
  std::string error = "timeout";                      // nccl_error: timeout | ib_completion
  int line = 0;                                       // in the scenario file, 1-based

  // When its last effect starts (the last flap of a repeated one).
  absl::Duration last_at() const {
    return at + period * (kind == "link_flap_repeated" ? count - 1 : 0);
  }
  // "gpu-node-003/mlx5_2", "leaf-r5", "gpu-node-008".
  std::string Where() const;
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
};

// gpu-node-001 ... (1-based).
std::string SimHostName(int index);
// The switches the simulator builds for a topology: leaves, then spines.
std::vector<std::string> SimSwitchNames(const ScenarioTopology& topology);

// Reads and checks a scenario file. Every problem is reported, one a line, as
// FILE:LINE:COLUMN: message; unknown keys are errors with the closest known key.
absl::StatusOr<Scenario> LoadScenarioFile(const std::string& path);
// The same on text; `file` names it in messages and gives the default name.
absl::StatusOr<Scenario> ParseScenario(absl::string_view yaml, const std::string& file);

// The nearest known word, when `word` is a typo of it (common/text.h).
using ::railwatch::ClosestWord;

}  // namespace railwatch::sim
