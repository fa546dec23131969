// ecn_misconfig: a leaf's ECN marking threshold on the RoCE queue is KB too high: it stops
// marking, sends PFC pauses instead, and the jobs behind it slow down.
#include <algorithm>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/fault_kinds.h"
#include "sim/scenario.h"
#include "sim/spec_parsing.h"
#include "sim/traffic_model.h"

ABSL_FLAG(std::vector<std::string>, ecn_misconfig, {},
          "leaves whose ECN threshold is KB too high, SWITCH@OFFSET[:KB] (default 3), e.g. "
          "leaf-r3@20s: they stop marking, send PFC pauses instead, and jobs slow to 60%. "
          "Repeatable");

namespace railwatch::sim {

class EcnMisconfigFault : public FaultKind {
 public:
  EcnMisconfigFault()
      : FaultKind({.kind = "ecn_misconfig",
                   .target = FaultTarget::kSwitch,
                   .truth_kind = "ecn_misconfig",
                   .playbook = "ecn_misconfiguration",
                   .culprit = {"switch"},
                   .target_delay = absl::Seconds(60),
                   .flag = "ecn_misconfig",
                   .companion_flags = {},
                   .fabric = FaultFabric::kRoce}) {}

  void Read(ScenarioMap& map, const Scenario& s, ScenarioFault& f) const override {
    map.Number("offset_kb", 0, 1e6, true, f.offset_kb);
    const std::vector<std::string> switches = SimSwitchNames(s.topology);
    if (std::find(switches.begin(), switches.end(), f.switch_name) != switches.end() &&
        !absl::StartsWith(f.switch_name, "leaf-")) {
      map.Problem("switch", "bad-value",
                  absl::StrCat("an ecn_misconfig is on a leaf, not ", f.switch_name));
    }
  }
  std::vector<std::string> FlagValues() const override {
    return absl::GetFlag(FLAGS_ecn_misconfig);
  }
  absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const override {
    constexpr absl::string_view kFlag = "ecn_misconfig";
    constexpr absl::string_view kForm = "SWITCH@OFFSET[:KB], e.g. leaf-r3@20s:3 or leaf-g1-r3@20s";
    absl::StatusOr<TimedSpec> parts = SplitTimedSpec(kFlag, spec, kForm, 1);
    if (!parts.ok()) return parts.status();
    ScenarioFault f = NewFault("", "", parts->at);
    if (absl::Status s = ParseExtraNumber(kFlag, spec, kForm, *parts, 0, f.offset_kb); !s.ok()) {
      return s;
    }
    int group = 0, rail = 0;
    if (!ParseLeafName(parts->body, group, rail)) {
      return SpecError(kFlag, spec, "SWITCH must be a leaf, leaf-r<rail> or leaf-g<group>-r<rail>",
                       kForm);
    }
    if (!(f.offset_kb > 0)) return SpecError(kFlag, spec, "KB must be above 0", kForm);
    f.switch_name = std::string(parts->body);
    return f;
  }
  // The NICs behind the leaf feel it (fewer marks and CNPs, slower jobs: host side, which
  // writes the ground truth); the leaf counts its own pauses and marks (switch side).
  absl::Status Apply(const ScenarioFault& f, SimFaultTargets& sim) const override {
    EcnMisconfig m;
    m.switch_name = f.switch_name;
    m.at = f.at;
    m.threshold_offset_kb = f.offset_kb;
    if (!ParseLeafName(f.switch_name, m.group, m.rail)) {
      return absl::InvalidArgumentError(
          absl::StrCat("ecn_misconfig: ", f.switch_name,
                       " is not a leaf, leaf-r<rail> or leaf-g<group>-r<rail>"));
    }
    // The hosts' model plays it (the marking share its flows see) and writes its line.
    m.truth = Truth([this, f](const FaultStarted& s) {
      const double share = EcnMarkingShare(f.offset_kb);
      return TruthLine(
          absl::StrFormat("\"switch\": \"%s\", \"queue\": %d, \"threshold_offset_kb\": "
                          "%g, \"marking_share\": %g, \"throughput_share\": %g",
                          f.switch_name, kRocePriority, f.offset_kb, share,
                          ThroughputUnderMarking(share)),
          s.now);
    });
    sim.hosts.ecn_misconfigs.push_back(m);
    m.truth = FaultTruth();
    sim.switches.ecn_misconfigs.push_back(m);
    return absl::OkStatus();
  }
};

const FaultKind& EcnMisconfigKind() {
  static const EcnMisconfigFault kind;
  return kind;
}

}  // namespace railwatch::sim
