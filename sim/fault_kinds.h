#pragma once

// The simulator's fault kinds, one registry (docs/ARCHITECTURE.md "How to add ... a fault kind").
// Each kind lives in its own file under sim/faults/ and says, in one place: its name in a
// scenario file and the keys it takes there, its railwatch-sim flag and how that flag's value
// parses, how a fault of it is handed to the simulated hosts and switches, and its ground
// truth for scoring (the playbook that must fire, the culprit labels, the delay target).
//
// A scenario file and the fault flags both become ScenarioFault values, and both reach the
// models through FaultKind::Apply: `railwatch-sim run` starts the simulator with
// --scenario=FILE, not with one flag string per fault.

#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/yaml_reader.h"
#include "sim/fault_truth.h"
#include "sim/ib_switches.h"
#include "sim/switch_model.h"
#include "sim/sysfs_fabric.h"

namespace railwatch::sim {

class FaultKind;
struct Scenario;

// One fault, from a scenario file or from a railwatch-sim flag. Fields its kind does not use
// keep their defaults.
struct ScenarioFault {
  std::string kind;
  const FaultKind* info = nullptr;
  std::string host, device, switch_name;
  int port = 1;
  absl::Duration at;
  absl::Duration duration;  // `for:` of the PFC storms and deadlocks (0: to the end)
  absl::Duration down_for = absl::Milliseconds(300);  // link flaps
  int count = 3;                                      // link_flap_repeated
  absl::Duration period = absl::Seconds(5);           // link_flap_repeated
  double per_minute = 120;                            // bit_errors
  double factor = 0.5;                                // link_degrade, straggler
  double offset_kb = 3;                               // ecn_misconfig
  double per_second = 500;                            // packet_loss
  std::string error = "timeout";                      // nccl_error: timeout | ib_completion
  int width = 1;                                      // ib_width_degrade: lanes it trains at
  // ber_rising, optics_drift, optics_hot (sim/faults/link_at_risk.cc): what the drift reaches
  // (NaN: the kind's default), over `ramp`; the link fails `fails_after` its start (0: never).
  double to = std::numeric_limits<double>::quiet_NaN();
  absl::Duration ramp = absl::Minutes(3);
  absl::Duration fails_after = absl::Minutes(4);
  int line = 0;  // in the scenario file, 1-based (0: from a flag)

  // When its last effect starts (the last flap of a repeated one).
  absl::Duration last_at() const;
  // "gpu-node-003/mlx5_2", "leaf-r5", "gpu-node-008".
  std::string Where() const;
};

// What a fault names, and so the keys a scenario gives it besides `kind` and `at`.
enum class FaultTarget {
  kNic,     // host + device
  kHost,    // host
  kSwitch,  // switch
  kSwitchPort,  // switch + port (an InfiniBand switch port, numbered from 1)
};

// The fabrics a kind can happen on (docs/SIMULATOR.md "InfiniBand").
enum class FaultFabric {
  kAny,         // a NIC's or a host's, on either
  kRoce,        // PFC, ECN, priorities: Ethernet's
  kInfiniband,  // the IB switches' (sim/ib_switches.h)
};
absl::string_view FaultFabricName(FaultFabric f);

// The registration data of a kind.
struct FaultKindInfo {
  absl::string_view kind;  // in the scenario file: link_flap_repeated, ...
  FaultTarget target = FaultTarget::kNic;
  // Ground truth: "fault" of its ground-truth lines (link_degrade -> nic_degrade), the playbook
  // that must fire, the culprit labels it must carry (their values come from the ground-truth
  // line) and the delay target, if any.
  absl::string_view truth_kind;
  absl::string_view playbook;
  std::vector<absl::string_view> culprit;
  std::optional<absl::Duration> target_delay;
  // Its railwatch-sim list flag (--flap=...) and the flags that go with it
  // (--flap_down_for), in the order --help lists them.
  absl::string_view flag;
  std::vector<absl::string_view> companion_flags;
  // Its flag needs the simulated switches (--switches), which play it.
  bool needs_switches = false;
  FaultFabric fabric = FaultFabric::kAny;
};

// The simulated models' inputs that faults are handed to.
struct SimFaultTargets {
  SysfsFabric::Options& hosts;
  SwitchFabric::Options& switches;
  IbSwitchModel::Options& ib;
  // The fabric simulated (--fabric=ib): a kind of the other fabric is refused.
  bool infiniband = false;
};

// A mapping of a scenario file, read on common/yaml_reader.h: every problem a LoadProblem
// (file:line:column: error[code]: message) with a stable code (bad-value, bad-type,
// missing-key, unknown-key with "did you mean", not-in-topology, after-end, conflict); a null
// value counts as absent. Each getter leaves `out` as it was when the key is absent or bad.
class ScenarioMap {
 public:
  ScenarioMap(const YAML::Node& node, std::string what, YamlProblems& problems,
              std::string_view expected = "");
  bool ok() const { return map_.ok(); }
  const YAML::Node& node() const { return map_.node(); }
  const std::string& what() const { return what_; }
  YamlProblems& problems() { return problems_; }

  // The value at `key` (undefined when absent or null), marked known.
  YAML::Node Get(std::string_view key);
  bool Has(std::string_view key) { return Get(key).IsDefined(); }
  // error[missing-key] "<what>: `key` is required" at the mapping when it is absent.
  bool Require(std::string_view key);
  bool String(std::string_view key, std::string& out);
  bool Int(std::string_view key, int min, int max, int& out);
  // A number in (lo, hi] when `lo_open`, else [lo, hi].
  bool Number(std::string_view key, double lo, double hi, bool lo_open, double& out);
  bool Bool(std::string_view key, bool& out);  // true | false
  bool Duration(std::string_view key, absl::Duration& out);
  // A problem at the key's value (at the mapping when the key is absent).
  void Problem(std::string_view key, std::string_view code, std::string message);
  // Marks `key` known without reading it (read elsewhere).
  void Known(std::string_view key) { map_.Get(key); }
  // Reports the keys nobody asked for (error[unknown-key], "did you mean").
  void Finish() { map_.Finish(); }

 private:
  YamlMap map_;
  std::string what_;
  YamlProblems& problems_;
};

// One fault kind. A kind's file defines a subclass and its flag; fault_kinds.cc lists it.
class FaultKind : public FaultKindInfo {
 public:
  explicit FaultKind(FaultKindInfo info) : FaultKindInfo(std::move(info)) {}
  virtual ~FaultKind() = default;

  // Its own keys of a scenario's fault (the loader has read `kind`, `at` and the target's
  // keys, and checked them against the scenario's topology), and the checks between them.
  virtual void Read(ScenarioMap& map, const Scenario& scenario, ScenarioFault& fault) const;
  // When a fault of it has its last effect (its `at`, unless it repeats).
  virtual absl::Duration LastAt(const ScenarioFault& fault) const { return fault.at; }

  // The values of its flag on this command line, and one value as a fault (an error names
  // the flag, the value and the form it expects).
  virtual std::vector<std::string> FlagValues() const = 0;
  virtual absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const = 0;

  // Hands a fault to the models that play it. The fault has been checked (by the scenario
  // loader or the flag's parser); the models check its names against the fabric.
  virtual absl::Status Apply(const ScenarioFault& fault, SimFaultTargets& sim) const = 0;

  // Its ground truth, handed to a model with the fault (sim/fault_truth.h): `line` makes the
  // line when the fault's effect starts; the NCCL errors it causes name this kind.
  FaultTruth Truth(std::function<std::string(const FaultStarted&)> line) const;
  // The usual ground-truth line: {"fault": <truth_kind>, FIELDS, "injected_at_unix_nano": N}.
  std::string TruthLine(absl::string_view fields, absl::Time now) const;
  // "host": "HOST", "device": "DEVICE", the fields of a fault on one NIC.
  static std::string NicFields(const ScenarioFault& fault);

 protected:
  // A fault of this kind with the fields every kind has.
  ScenarioFault NewFault(std::string host, std::string device, absl::Duration at) const;
  // A parsed fault made this kind's (its `kind` and `info`); an error passes through.
  absl::StatusOr<ScenarioFault> Own(absl::StatusOr<ScenarioFault> fault) const;
};

// Every kind, in the order of docs/SCENARIOS.md's table.
const std::vector<const FaultKind*>& FaultKinds();
// nullptr for an unknown kind.
const FaultKind* FindFaultKind(absl::string_view kind);
// The kind of a ground-truth "fault" name (nic_degrade -> link_degrade's); nullptr if none.
const FaultKind* FindFaultKindByTruth(absl::string_view truth_kind);
// Every kind's name, for messages and "did you mean".
std::vector<std::string> FaultKindNames();

// Every fault flag of this command line, parsed and applied (the first bad value's error).
absl::Status ApplyFaultFlags(SimFaultTargets& sim);
// A scenario's faults and its driver-reload noise, applied.
absl::Status ApplyScenarioFaults(const Scenario& scenario, SimFaultTargets& sim);

}  // namespace railwatch::sim
