// ib_xmit_discards: an InfiniBand switch port discards packets it should have sent
// (PortXmitDiscards), with no link-down to explain it.
#include "absl/flags/flag.h"
#include "sim/faults/ib_port_fault.h"

ABSL_FLAG(std::vector<std::string>, ib_discards, {},
          "--fabric=ib: switch ports that discard packets, SWITCH/PORT@OFFSET[:PER_MINUTE] "
          "(discards a minute, default 120), e.g. leaf-r2/4@20s:120. Repeatable");

namespace railwatch::sim {

class IbXmitDiscardsFault : public IbPortFaultKind {
 public:
  IbXmitDiscardsFault()
      : IbPortFaultKind({.kind = "ib_xmit_discards",
                         .target = FaultTarget::kSwitchPort,
                         .truth_kind = "ib_xmit_discards",
                         .playbook = "ib_transmit_discards",
                         .culprit = {"switch", "interface"},
                         .target_delay = absl::Seconds(30),
                         .flag = "ib_discards",
                         .companion_flags = {},
                         .fabric = FaultFabric::kInfiniband},
                        IbPortFault::Type::kDiscards,
                        "SWITCH/PORT@OFFSET[:PER_MINUTE], e.g. leaf-r2/4@20s:120",
                        Number{&ScenarioFault::per_minute,
                               "PER_MINUTE (discards a minute) must be above 0", 0, 1e9},
                        false) {}

  std::vector<std::string> FlagValues() const override { return absl::GetFlag(FLAGS_ib_discards); }

 protected:
  void ReadOwn(ScenarioMap& map, ScenarioFault& f) const override {
    map.Number("per_minute", 0, 1e9, true, f.per_minute);
  }
  std::string TruthExtra(const ScenarioFault& f) const override {
    return absl::StrFormat(", \"per_minute\": %g", f.per_minute);
  }
};

const FaultKind& IbXmitDiscardsKind() {
  static const IbXmitDiscardsFault kind;
  return kind;
}

}  // namespace railwatch::sim
