// ib_bad_cable: an InfiniBand switch port's cable (or optic) corrupts symbols: its receiver
// counts symbol errors, some packets fail their CRC, now and then the link retrains.
#include "absl/flags/flag.h"
#include "sim/faults/ib_port_fault.h"

ABSL_FLAG(std::vector<std::string>, ib_bad_cable, {},
          "--fabric=ib: switch ports whose cable corrupts symbols, SWITCH/PORT@OFFSET[:PER_MINUTE] "
          "(symbol errors a minute, default 120), e.g. leaf-r3/10@20s:60. Repeatable");

namespace railwatch::sim {

class IbBadCableFault : public IbPortFaultKind {
 public:
  IbBadCableFault()
      : IbPortFaultKind({.kind = "ib_bad_cable",
                         .target = FaultTarget::kSwitchPort,
                         .truth_kind = "ib_bad_cable",
                         .playbook = "ib_link_ber",
                         .culprit = {"switch", "interface"},
                         .target_delay = absl::Seconds(20),
                         .flag = "ib_bad_cable",
                         .companion_flags = {},
                         .fabric = FaultFabric::kInfiniband},
                        IbPortFault::Type::kBadCable,
                        "SWITCH/PORT@OFFSET[:PER_MINUTE], e.g. leaf-r3/10@20s:60",
                        Number{&ScenarioFault::per_minute,
                               "PER_MINUTE (symbol errors a minute) must be above 0", 0, 1e9},
                        false) {}

  std::vector<std::string> FlagValues() const override {
    return absl::GetFlag(FLAGS_ib_bad_cable);
  }

 protected:
  void ReadOwn(ScenarioMap& map, ScenarioFault& f) const override {
    map.Number("per_minute", 0, 1e9, true, f.per_minute);
  }
  std::string TruthExtra(const ScenarioFault& f) const override {
    return absl::StrFormat(", \"per_minute\": %g", f.per_minute);
  }
};

const FaultKind& IbBadCableKind() {
  static const IbBadCableFault kind;
  return kind;
}

}  // namespace railwatch::sim
