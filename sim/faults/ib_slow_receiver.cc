// ib_slow_receiver: an InfiniBand HCA stops draining what it receives; credit-based flow
// control backs everything up behind it (sim/ib_switches.h).
#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "sim/fault_kinds.h"
#include "sim/spec_parsing.h"

ABSL_FLAG(std::vector<std::string>, ib_slow_receiver, {},
          "--fabric=ib: HCAs that stop draining what they receive, HOST/DEVICE@OFFSET, e.g. "
          "gpu-node-004/mlx5_0@20s (until the end). Repeatable");

namespace railwatch::sim {

class IbSlowReceiverFault : public FaultKind {
 public:
  IbSlowReceiverFault()
      : FaultKind({.kind = "ib_slow_receiver",
                   .target = FaultTarget::kNic,
                   .truth_kind = "ib_slow_receiver",
                   .playbook = "ib_congestion",
                   .culprit = {"host", "device"},
                   .target_delay = absl::Seconds(20),
                   .flag = "ib_slow_receiver",
                   .companion_flags = {},
                   .fabric = FaultFabric::kInfiniband}) {}

  void Read(ScenarioMap& map, const Scenario&, ScenarioFault& f) const override {
    map.Duration("for", f.duration);
  }
  std::vector<std::string> FlagValues() const override {
    return absl::GetFlag(FLAGS_ib_slow_receiver);
  }
  absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const override {
    return Own(ParseNicFault<ScenarioFault>("ib_slow_receiver", spec,
                                            "HOST/DEVICE@OFFSET, e.g. gpu-node-004/mlx5_0@20s"));
  }
  absl::Status Apply(const ScenarioFault& f, SimFaultTargets& sim) const override {
    sim.ib.slow_receivers.push_back(
        {f.host, f.device, f.at, f.duration, Truth([this, f](const FaultStarted& s) {
           return TruthLine(absl::StrFormat("%s, \"switch\": \"%s\", \"interface\": \"%s\"",
                                            NicFields(f), s.switch_name, s.interface),
                            s.now);
         })});
    return absl::OkStatus();
  }
};

const FaultKind& IbSlowReceiverKind() {
  static const IbSlowReceiverFault kind;
  return kind;
}

}  // namespace railwatch::sim
