// wrong_priority: a host's RoCE traffic leaves on priority 0 instead of 3 (QoS lost on
// reboot); its leaf ports count it in queue 0.
#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "sim/fault_kinds.h"
#include "sim/fault_specs.h"
#include "sim/spec_parsing.h"

ABSL_FLAG(std::vector<std::string>, wrong_priority, {},
          "hosts whose RoCE traffic leaves on priority 0 instead of 3, HOST@OFFSET. Repeatable");

namespace railwatch::sim {

class WrongPriorityFault : public FaultKind {
 public:
  WrongPriorityFault()
      : FaultKind({.kind = "wrong_priority",
                   .target = FaultTarget::kHost,
                   .truth_kind = "wrong_priority",
                   .playbook = "wrong_traffic_class",
                   .culprit = {"host"},
                   .target_delay = std::nullopt,
                   .flag = "wrong_priority",
                   .companion_flags = {},
                   .fabric = FaultFabric::kRoce}) {}

  std::vector<std::string> FlagValues() const override {
    return absl::GetFlag(FLAGS_wrong_priority);
  }
  absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const override {
    absl::StatusOr<TimedSpec> parts =
        ParseHostSpec("wrong_priority", spec, "HOST@OFFSET, e.g. gpu-node-006@20s", 0);
    if (!parts.ok()) return parts.status();
    return NewFault(std::string(parts->body), "", parts->at);
  }
  absl::Status Apply(const ScenarioFault& f, SimFaultTargets& sim) const override {
    sim.hosts.wrong_priorities.push_back({f.host, f.at, Truth([this, f](const FaultStarted& s) {
                                            return TruthLine(
                                                absl::StrFormat("\"host\": \"%s\"", f.host), s.now);
                                          })});
    return absl::OkStatus();
  }
};

const FaultKind& WrongPriorityKind() {
  static const WrongPriorityFault kind;
  return kind;
}

}  // namespace railwatch::sim
