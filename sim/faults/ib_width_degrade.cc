// ib_width_degrade: an InfiniBand switch-to-switch link trains at 1 or 2 lanes instead of 4
// (both ends), and stays so.
#include "absl/flags/flag.h"
#include "sim/faults/ib_port_fault.h"

ABSL_FLAG(std::vector<std::string>, ib_width_degrade, {},
          "--fabric=ib: switch-to-switch links that train below 4x, SWITCH/PORT@OFFSET[:WIDTH] "
          "(lanes, 1 or 2; default 1), e.g. leaf-r5/10@15s:1. Repeatable");

namespace railwatch::sim {

class IbWidthDegradeFault : public IbPortFaultKind {
 public:
  IbWidthDegradeFault()
      : IbPortFaultKind({.kind = "ib_width_degrade",
                         .target = FaultTarget::kSwitchPort,
                         .truth_kind = "ib_width_degrade",
                         .playbook = "ib_link_downtrained",
                         .culprit = {"switch", "interface"},
                         // ib_link_downtrained holds 30 s (a retraining link passes lower
                         // rates), then two scanner intervals.
                         .target_delay = absl::Seconds(50),
                         .flag = "ib_width_degrade",
                         .companion_flags = {},
                         .fabric = FaultFabric::kInfiniband},
                        IbPortFault::Type::kWidthDegrade,
                        "SWITCH/PORT@OFFSET[:WIDTH], e.g. leaf-r5/10@15s:1", std::nullopt, true) {}

  std::vector<std::string> FlagValues() const override {
    return absl::GetFlag(FLAGS_ib_width_degrade);
  }
  absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const override {
    // The base parses SWITCH/PORT@OFFSET; WIDTH is whole, 1 or 2.
    constexpr absl::string_view kForm = "SWITCH/PORT@OFFSET[:WIDTH], e.g. leaf-r5/10@15s:1";
    ScenarioFault f = NewFault("", "", absl::ZeroDuration());
    TimedSpec parts;
    if (absl::Status st = ParseSwitchPortSpec(flag, spec, kForm, 1, f.switch_name, f.port, parts);
        !st.ok()) {
      return st;
    }
    f.at = parts.at;
    if (!parts.extras.empty() && parts.extras[0] != "1" && parts.extras[0] != "2") {
      return SpecError(flag, spec, "WIDTH is the lanes it trains at, 1 or 2", kForm);
    }
    f.width = !parts.extras.empty() && parts.extras[0] == "2" ? 2 : 1;
    return f;
  }

 protected:
  void ReadOwn(ScenarioMap& map, ScenarioFault& f) const override {
    map.Int("width", 1, 2, f.width);
  }
  std::string TruthExtra(const ScenarioFault& f) const override {
    return absl::StrFormat(", \"width\": \"%dx\"", f.width);
  }
};

const FaultKind& IbWidthDegradeKind() {
  static const IbWidthDegradeFault kind;
  return kind;
}

}  // namespace railwatch::sim
