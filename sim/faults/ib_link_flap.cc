// ib_link_flap: an InfiniBand switch-to-switch link goes down for `down_for` and comes back:
// both ports' LinkDownedCounter + 1, the link gone from the subnet meanwhile.
#include "absl/flags/flag.h"
#include "sim/faults/ib_port_fault.h"

ABSL_FLAG(std::vector<std::string>, ib_flap, {},
          "--fabric=ib: switch-to-switch links that go down and come back, SWITCH/PORT@OFFSET, "
          "e.g. leaf-r1/9@15s (down for 300 ms; a scenario sets `down_for`). Repeatable");

namespace railwatch::sim {

class IbLinkFlapFault : public IbPortFaultKind {
 public:
  IbLinkFlapFault()
      : IbPortFaultKind({.kind = "ib_link_flap",
                         .target = FaultTarget::kSwitchPort,
                         .truth_kind = "ib_link_flap",
                         .playbook = "link_flap",
                         .culprit = {"switch", "interface"},
                         .target_delay = absl::Seconds(20),
                         .flag = "ib_flap",
                         .companion_flags = {},
                         .fabric = FaultFabric::kInfiniband},
                        IbPortFault::Type::kFlap, "SWITCH/PORT@OFFSET, e.g. leaf-r1/9@15s",
                        std::nullopt, true) {}

  std::vector<std::string> FlagValues() const override { return absl::GetFlag(FLAGS_ib_flap); }

 protected:
  void ReadOwn(ScenarioMap& map, ScenarioFault& f) const override {
    map.Duration("down_for", f.down_for);
  }
  std::string TruthExtra(const ScenarioFault& f) const override {
    return absl::StrFormat(", \"down_for_ms\": %d", absl::ToInt64Milliseconds(f.down_for));
  }
};

const FaultKind& IbLinkFlapKind() {
  static const IbLinkFlapFault kind;
  return kind;
}

}  // namespace railwatch::sim
