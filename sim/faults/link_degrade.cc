// link_degrade: a link renegotiates to FACTOR of its speed; the NIC's traffic follows.
#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "sim/fault_kinds.h"
#include "sim/spec_parsing.h"
#include "sim/traffic_model.h"

ABSL_FLAG(std::vector<std::string>, degrade, {},
          "links that renegotiate lower, HOST/DEVICE@OFFSET[:FACTOR] (default 0.5): sysfs rate "
          "and the NIC's traffic drop to FACTOR. Repeatable");

namespace railwatch::sim {

class LinkDegradeFault : public FaultKind {
 public:
  LinkDegradeFault()
      : FaultKind({.kind = "link_degrade",
                   .target = FaultTarget::kNic,
                   .truth_kind = "nic_degrade",
                   .playbook = "straggler_rail",
                   .culprit = {"host", "device"},
                   .target_delay = absl::Seconds(10),
                   .flag = "degrade",
                   .companion_flags = {}}) {}

  void Read(ScenarioMap& map, const Scenario&, ScenarioFault& f) const override {
    if (map.Number("factor", 0, 1, true, f.factor) && f.factor >= 1) {
      map.Problem("factor", "bad-value", "`factor` of a link_degrade must be below 1");
    }
  }
  std::vector<std::string> FlagValues() const override { return absl::GetFlag(FLAGS_degrade); }
  absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const override {
    return Own(ParseNicFault<ScenarioFault>(
        "degrade", spec, "HOST/DEVICE@OFFSET[:FACTOR], e.g. gpu-node-003/mlx5_5@10s:0.5",
        &ScenarioFault::factor, [](double v) { return v > 0 && v < 1; },
        "FACTOR is a share of the link speed in (0, 1)"));
  }
  // Its line gives the rate the link renegotiated to, from the NIC's full speed.
  absl::Status Apply(const ScenarioFault& f, SimFaultTargets& sim) const override {
    sim.hosts.degrades.push_back(
        {f.host, f.device, f.at, f.factor, Truth([this, f](const FaultStarted& s) {
           return TruthLine(
               absl::StrFormat("%s, \"port\": \"1\", \"factor\": %g, \"rate_gbps\": %g",
                               NicFields(f), f.factor, s.link_gbps * f.factor),
               s.now);
         })});
    return absl::OkStatus();
  }
};

const FaultKind& LinkDegradeKind() {
  static const LinkDegradeFault kind;
  return kind;
}

}  // namespace railwatch::sim
