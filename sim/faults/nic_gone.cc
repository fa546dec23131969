// nic_gone: a device leaves sysfs (its netdev and ethtool dump too); the leaf port facing it
// goes down for good.
#include "absl/flags/flag.h"
#include "sim/fault_kinds.h"
#include "sim/fault_specs.h"
#include "sim/spec_parsing.h"

ABSL_FLAG(std::vector<std::string>, nic_gone, {},
          "NICs that leave their host (sysfs device, netdev and ethtool dump removed), "
          "HOST/DEVICE@OFFSET. Repeatable");

namespace railwatch::sim {

class NicGoneFault : public FaultKind {
 public:
  NicGoneFault()
      : FaultKind({.kind = "nic_gone",
                   .target = FaultTarget::kNic,
                   .truth_kind = "nic_gone",
                   .playbook = "nic_gone",
                   .culprit = {"host", "device"},
                   .target_delay = std::nullopt,
                   .flag = "nic_gone",
                   .companion_flags = {}}) {}

  std::vector<std::string> FlagValues() const override { return absl::GetFlag(FLAGS_nic_gone); }
  absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const override {
    return Own(ParseNicFault<ScenarioFault>("nic_gone", spec,
                                            "HOST/DEVICE@OFFSET, e.g. gpu-node-001/mlx5_0@15s"));
  }
  // Its rank's IB completion errors that follow name it as their cause (sim/job_failures.h).
  absl::Status Apply(const ScenarioFault& f, SimFaultTargets& sim) const override {
    sim.hosts.nics_gone.push_back({f.host, f.device, f.at, Truth([this, f](const FaultStarted& s) {
                                     return TruthLine(NicFields(f), s.now);
                                   })});
    return absl::OkStatus();
  }
};

const FaultKind& NicGoneKind() {
  static const NicGoneFault kind;
  return kind;
}

}  // namespace railwatch::sim
