// link_flap_repeated: COUNT flaps of one port, one every PERIOD; one ground-truth line each.
#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "common/text.h"
#include "sim/fault_kinds.h"
#include "sim/fault_specs.h"

ABSL_DECLARE_FLAG(absl::Duration, flap_down_for);  // sim/faults/link_flap.cc
ABSL_FLAG(std::vector<std::string>, flap_repeat, {},
          "links that flap COUNT times, one every PERIOD, HOST/DEVICE/PORT@OFFSET:COUNT:PERIOD "
          "(e.g. gpu-node-002/mlx5_1/1@15s:5:7s), each down for --flap_down_for. Repeatable");

namespace railwatch::sim {

class LinkFlapRepeatedFault : public FaultKind {
 public:
  LinkFlapRepeatedFault()
      : FaultKind({.kind = "link_flap_repeated",
                   .target = FaultTarget::kNic,
                   .truth_kind = "link_flap",
                   .playbook = "link_flap",
                   .culprit = {"host", "device"},
                   .target_delay = absl::Seconds(2),
                   .flag = "flap_repeat",
                   .companion_flags = {}}) {}

  void Read(ScenarioMap& map, const Scenario&, ScenarioFault& f) const override {
    map.Int("port", 1, 2, f.port);
    map.Duration("down_for", f.down_for);
    map.Require("count");
    map.Require("period");
    map.Int("count", 1, 1000, f.count);
    map.Duration("period", f.period);
    if (f.period <= f.down_for) {
      map.Problem("period", "bad-value",
                  absl::StrCat("`period` must be longer than the link stays down (",
                               HumanDuration(f.down_for), ")"));
    }
  }
  absl::Duration LastAt(const ScenarioFault& f) const override {
    return f.at + f.period * (f.count - 1);
  }
  std::vector<std::string> FlagValues() const override { return absl::GetFlag(FLAGS_flap_repeat); }
  absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const override {
    absl::StatusOr<RepeatedFlap> r = ParseRepeatedFlap(spec);
    if (!r.ok()) return r.status();
    ScenarioFault f = NewFault(r->host, r->device, r->at);
    f.port = r->port;
    f.count = r->count;
    f.period = r->period;
    f.down_for = absl::GetFlag(FLAGS_flap_down_for);
    return f;
  }
  absl::Status Apply(const ScenarioFault& f, SimFaultTargets& sim) const override {
    const RepeatedFlap r{f.host, f.device, f.port, f.at, f.count, f.period};
    for (LinkFlap& flap : ExpandRepeatedFlap(r, f.down_for)) sim.hosts.flaps.push_back(std::move(flap));
    return absl::OkStatus();
  }
};

const FaultKind& LinkFlapRepeatedKind() {
  static const LinkFlapRepeatedFault kind;
  return kind;
}

}  // namespace railwatch::sim
