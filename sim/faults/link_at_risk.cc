// Links at risk (issue 24): a quantity of a NIC's link drifts toward failure over `ramp`, and
// the link fails `fails_after` its start. Three kinds, one per quantity:
//   ber_rising      the PHY's pre-FEC BER climbs log-linearly to `to` (default 1e-4);
//   optics_drift    the fibre into the NIC's module loses `to` dB (default 12) of light;
//   optics_hot      the module heats to `to` °C (default 3) over its own alarm threshold.
// The page must come before the failure: the delay targets (3 minutes for ber_rising, whose
// corrected bits are judged over minutes; 1 minute for the optics, read every few seconds) are
// under the default `fails_after` of 4 minutes, and the scenarios fail their links later than
// their targets too (docs/SCENARIOS.md).
// The failure itself (the link down for good) is link_flap's.
#include <cmath>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "sim/fault_kinds.h"
#include "sim/fault_specs.h"
#include "sim/spec_parsing.h"

ABSL_FLAG(std::vector<std::string>, ber_rising, {},
          "links whose pre-FEC BER climbs until they fail, HOST/DEVICE@OFFSET[:BER] (the BER "
          "reached after --link_risk_ramp, default 1e-4; the link fails --link_risk_fails_after "
          "the start). Repeatable");
ABSL_FLAG(std::vector<std::string>, optics_drift, {},
          "links whose fibre into the NIC's module loses light until they fail, "
          "HOST/DEVICE@OFFSET[:DB] (dB lost after --link_risk_ramp, default 12). Repeatable");
ABSL_FLAG(std::vector<std::string>, optics_hot, {},
          "NIC modules that heat up until the link fails, HOST/DEVICE@OFFSET[:DEGREES] (°C "
          "over the module's own alarm threshold after --link_risk_ramp, default 3). "
          "Repeatable");
ABSL_FLAG(absl::Duration, link_risk_ramp, absl::Minutes(3),
          "how long the drift of --ber_rising, --optics_drift and --optics_hot takes");
ABSL_FLAG(absl::Duration, link_risk_fails_after, absl::Minutes(4),
          "when the link of --ber_rising, --optics_drift and --optics_hot fails, from the "
          "drift's start (0: never)");

namespace railwatch::sim {
namespace {

struct Drift {
  absl::string_view kind;
  absl::Duration target;  // the delay target: well under the scenarios' fails_after
  LinkAtRisk::What what;
  double default_to;
  double lo, hi;  // `to` in (lo, hi]
  absl::string_view form, why;
};

class LinkAtRiskFault : public FaultKind {
 public:
  explicit LinkAtRiskFault(const Drift& d, const absl::Flag<std::vector<std::string>>& flag)
      : FaultKind({.kind = d.kind,
                   .target = FaultTarget::kNic,
                   .truth_kind = d.kind,
                   .playbook = "link_at_risk",
                   .culprit = {"host", "device"},
                   .target_delay = d.target,
                   .flag = d.kind,
                   .companion_flags = {"link_risk_ramp", "link_risk_fails_after"}}),
        drift_(d),
        flag_(flag) {}

  void Read(ScenarioMap& map, const Scenario&, ScenarioFault& f) const override {
    f.to = drift_.default_to;
    map.Number("to", drift_.lo, drift_.hi, true, f.to);
    map.Duration("ramp", f.ramp);
    map.Duration("fails_after", f.fails_after);
    if (f.fails_after > absl::ZeroDuration() && f.fails_after < f.ramp) {
      map.Problem("fails_after", "conflict",
                  "`fails_after` must not be shorter than `ramp` (the link fails once the drift "
                  "is over), or 0 for never");
    }
  }
  std::vector<std::string> FlagValues() const override { return absl::GetFlag(flag_); }
  absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const override {
    absl::StatusOr<ScenarioFault> f = ParseNicFault<ScenarioFault>(
        drift_.kind, spec, drift_.form, &ScenarioFault::to, nullptr, drift_.why);
    if (!f.ok()) return f.status();
    // No value after the colon: the kind's default.
    if (std::isnan(f->to)) f->to = drift_.default_to;
    if (!(f->to > drift_.lo && f->to <= drift_.hi)) {
      return SpecError(drift_.kind, spec, drift_.why, drift_.form);
    }
    f->ramp = absl::GetFlag(FLAGS_link_risk_ramp);
    f->fails_after = absl::GetFlag(FLAGS_link_risk_fails_after);
    return Own(std::move(f));
  }
  absl::Status Apply(const ScenarioFault& f, SimFaultTargets& sim) const override {
    LinkAtRisk x{.what = drift_.what,
                 .host = f.host,
                 .device = f.device,
                 .at = f.at,
                 .ramp = f.ramp,
                 .fails_after = f.fails_after,
                 .to = f.to};
    x.truth = Truth([this, f](const FaultStarted& s) {
      return TruthLine(absl::StrFormat("%s, \"to\": %g, \"ramp_s\": %g, \"fails_after_s\": %g",
                                       NicFields(f), f.to, absl::ToDoubleSeconds(f.ramp),
                                       absl::ToDoubleSeconds(f.fails_after)),
                       s.now);
    });
    sim.hosts.links_at_risk.push_back(std::move(x));
    return absl::OkStatus();
  }

 private:
  const Drift drift_;
  const absl::Flag<std::vector<std::string>>& flag_;
};

}  // namespace

const FaultKind& BerRisingKind() {
  static const LinkAtRiskFault kind(
      {"ber_rising", absl::Minutes(3), LinkAtRisk::What::kBer, 1e-4, 0, 1e-2,
       "HOST/DEVICE@OFFSET[:BER], e.g. gpu-node-003/mlx5_1@30s:1e-4",
       "BER is the pre-FEC bit error rate reached, in (0, 0.01]"},
      FLAGS_ber_rising);
  return kind;
}

const FaultKind& OpticsDriftKind() {
  static const LinkAtRiskFault kind(
      {"optics_drift", absl::Minutes(1), LinkAtRisk::What::kRxPower, 12, 0, 40,
       "HOST/DEVICE@OFFSET[:DB], e.g. gpu-node-003/mlx5_1@30s:12",
       "DB is the light lost, in (0, 40] dB"},
      FLAGS_optics_drift);
  return kind;
}

const FaultKind& OpticsHotKind() {
  static const LinkAtRiskFault kind(
      {"optics_hot", absl::Minutes(1), LinkAtRisk::What::kTemperature, 3, -20, 30,
       "HOST/DEVICE@OFFSET[:DEGREES], e.g. gpu-node-003/mlx5_1@30s:3",
       "DEGREES is how far over its alarm threshold the module ends, in (-20, 30] °C"},
      FLAGS_optics_hot);
  return kind;
}

}  // namespace railwatch::sim
