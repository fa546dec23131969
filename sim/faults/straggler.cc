// straggler: a NIC moves FACTOR of what its rail peers in the job move (a PCIe or NUMA
// problem), with its link rate unchanged.
#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "sim/fault_kinds.h"
#include "sim/fault_specs.h"
#include "sim/spec_parsing.h"

ABSL_FLAG(std::vector<std::string>, straggler, {},
          "NICs that move FACTOR of their rail peers' traffic, HOST/DEVICE@OFFSET[:FACTOR] "
          "(default 0.5; link rate unchanged). Repeatable");

namespace railwatch::sim {

class StragglerFault : public FaultKind {
 public:
  StragglerFault()
      : FaultKind({.kind = "straggler",
                   .target = FaultTarget::kNic,
                   .truth_kind = "straggler",
                   .playbook = "straggler_rail",
                   .culprit = {"host", "device"},
                   .target_delay = absl::Seconds(10),
                   .flag = "straggler",
                   .companion_flags = {}}) {}

  void Read(ScenarioMap& map, const Scenario&, ScenarioFault& f) const override {
    map.Number("factor", 0, 1, true, f.factor);
  }
  std::vector<std::string> FlagValues() const override { return absl::GetFlag(FLAGS_straggler); }
  absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const override {
    return Own(ParseNicFault<ScenarioFault>(
        "straggler", spec, "HOST/DEVICE@OFFSET[:FACTOR], e.g. gpu-node-005/mlx5_1@15s:0.5",
        &ScenarioFault::factor, [](double v) { return v > 0 && v < 1; },
        "FACTOR is the share of its peers' traffic it moves, in (0, 1)"));
  }
  absl::Status Apply(const ScenarioFault& f, SimFaultTargets& sim) const override {
    sim.hosts.stragglers.push_back(
        {f.host, f.device, f.at, f.factor, Truth([this, f](const FaultStarted& s) {
           return TruthLine(absl::StrFormat("%s, \"factor\": %g", NicFields(f), f.factor), s.now);
         })});
    return absl::OkStatus();
  }
};

const FaultKind& StragglerKind() {
  static const StragglerFault kind;
  return kind;
}

}  // namespace railwatch::sim
