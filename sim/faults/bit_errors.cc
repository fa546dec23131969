// bit_errors: the link stays up but corrupts bits (symbol, CRC and FEC errors, link error
// recoveries; in-errors on the leaf port facing it).
#include <cmath>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "sim/fault_kinds.h"
#include "sim/fault_specs.h"
#include "sim/spec_parsing.h"

ABSL_FLAG(std::vector<std::string>, ber, {},
          "links with bit errors, HOST/DEVICE@OFFSET[:PER_MINUTE] (symbol errors a minute, "
          "default 120): symbol/CRC errors, FEC corrections, link error recoveries. Repeatable");

namespace railwatch::sim {

class BitErrorsFault : public FaultKind {
 public:
  BitErrorsFault()
      : FaultKind({.kind = "bit_errors",
                   .target = FaultTarget::kNic,
                   .truth_kind = "bit_errors",
                   .playbook = "link_degradation",
                   .culprit = {"host", "device"},
                   .target_delay = std::nullopt,
                   .flag = "ber",
                   .companion_flags = {}}) {}

  void Read(ScenarioMap& map, const Scenario&, ScenarioFault& f) const override {
    map.Number("per_minute", 0, 1e9, true, f.per_minute);
  }
  std::vector<std::string> FlagValues() const override { return absl::GetFlag(FLAGS_ber); }
  absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const override {
    return Own(ParseNicFault<ScenarioFault>(
        "ber", spec, "HOST/DEVICE@OFFSET[:PER_MINUTE], e.g. gpu-node-004/mlx5_2@20s:120",
        &ScenarioFault::per_minute, [](double v) { return v > 0 && std::isfinite(v); },
        "PER_MINUTE (symbol errors a minute) must be above 0"));
  }
  absl::Status Apply(const ScenarioFault& f, SimFaultTargets& sim) const override {
    sim.hosts.bit_errors.push_back(
        {f.host, f.device, f.at, f.per_minute, Truth([this, f](const FaultStarted& s) {
           return TruthLine(absl::StrFormat("%s, \"per_minute\": %g", NicFields(f), f.per_minute),
                            s.now);
         })});
    return absl::OkStatus();
  }
};

const FaultKind& BitErrorsKind() {
  static const BitErrorsFault kind;
  return kind;
}

}  // namespace railwatch::sim
