// pfc_storm: a NIC sends PFC pause frames on priority 3 without end; its leaf port relays them.
#include "absl/flags/flag.h"
#include "sim/fault_kinds.h"
#include "sim/switch_model.h"

ABSL_FLAG(std::vector<std::string>, pfc_storm, {},
          "PFC storms to inject, HOST/DEVICE@OFFSET: that NIC pauses its leaf port on priority 3");
ABSL_FLAG(absl::Duration, pfc_storm_for, absl::Seconds(30), "how long a PFC storm lasts (0: forever)");

namespace railwatch::sim {

class PfcStormFault : public FaultKind {
 public:
  PfcStormFault()
      : FaultKind({.kind = "pfc_storm",
                   .target = FaultTarget::kNic,
                   .truth_kind = "pfc_storm",
                   .playbook = "pfc_storm",
                   .culprit = {"host", "device"},
                   .target_delay = absl::Seconds(2),
                   .flag = "pfc_storm",
                   .companion_flags = {"pfc_storm_for"}}) {}

  void Read(ScenarioMap& map, const Scenario&, ScenarioFault& f) const override {
    map.Duration("for", f.duration);
  }
  std::vector<std::string> FlagValues() const override { return absl::GetFlag(FLAGS_pfc_storm); }
  absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const override {
    absl::StatusOr<PfcStorm> s = ParsePfcStorm(spec);
    if (!s.ok()) return s.status();
    ScenarioFault f = NewFault(s->host, s->device, s->at);
    f.duration = absl::GetFlag(FLAGS_pfc_storm_for);
    return f;
  }
  // The NIC storms (host side) and its leaf port relays and counts it (switch side, which
  // writes the ground truth: it names the port).
  absl::Status Apply(const ScenarioFault& f, SimFaultTargets& sim) const override {
    sim.hosts.storms.push_back({f.host, f.device, f.at, f.duration});
    sim.switches.storms.push_back({f.host, f.device, f.at, f.duration});
    return absl::OkStatus();
  }
};

const FaultKind& PfcStormKind() {
  static const PfcStormFault kind;
  return kind;
}

}  // namespace railwatch::sim
