// link_flap_repeated: COUNT flaps of one port, one every PERIOD; one ground-truth line each.
#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/text.h"
#include "sim/fault_kinds.h"
#include "sim/fault_specs.h"
#include "sim/spec_parsing.h"

ABSL_DECLARE_FLAG(absl::Duration, flap_down_for);  // sim/faults/link_flap.cc
ABSL_FLAG(std::vector<std::string>, flap_repeat, {},
          "links that flap COUNT times, one every PERIOD, HOST/DEVICE/PORT@OFFSET:COUNT:PERIOD "
          "(e.g. gpu-node-002/mlx5_1/1@15s:5:7s), each down for --flap_down_for. Repeatable");

namespace railwatch::sim {

FaultTruth LinkFlapTruth(const FaultKind& kind, const LinkFlap& flap);  // link_flap.cc

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
  // HOST/DEVICE/PORT@OFFSET:COUNT:PERIOD, each flap down for --flap_down_for.
  absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const override {
    constexpr absl::string_view kFlag = "flap_repeat";
    constexpr absl::string_view kForm =
        "HOST/DEVICE/PORT@OFFSET:COUNT:PERIOD, e.g. gpu-node-002/mlx5_1/1@15s:5:7s";
    absl::StatusOr<TimedSpec> parts = SplitTimedSpec(kFlag, spec, kForm, 2);
    if (!parts.ok()) return parts.status();
    std::vector<absl::string_view> port = absl::StrSplit(parts->body, '/');
    if (port.size() != 3 || port[0].empty() || port[1].empty()) {
      return SpecError(kFlag, spec, absl::StrCat("\"", parts->body, "\" is not HOST/DEVICE/PORT"),
                       kForm);
    }
    ScenarioFault f = NewFault(std::string(port[0]), std::string(port[1]), parts->at);
    if (!absl::SimpleAtoi(port[2], &f.port) || f.port < 1) {
      return SpecError(kFlag, spec,
                       absl::StrCat("PORT \"", port[2], "\" is not a port number (1, 2 ...)"),
                       kForm);
    }
    if (parts->extras.size() != 2) {
      return SpecError(kFlag, spec, "COUNT and PERIOD are required", kForm);
    }
    if (!absl::SimpleAtoi(parts->extras[0], &f.count) || f.count < 1) {
      return SpecError(kFlag, spec,
                       absl::StrCat("COUNT \"", parts->extras[0], "\" is not a whole number >= 1"),
                       kForm);
    }
    absl::StatusOr<absl::Duration> period = ParseDuration(parts->extras[1]);
    if (!period.ok()) {
      return SpecError(
          kFlag, spec,
          absl::StrCat("PERIOD \"", parts->extras[1], "\": ", period.status().message()), kForm);
    }
    if (*period <= absl::ZeroDuration()) {
      return SpecError(kFlag, spec, "PERIOD must be above 0", kForm);
    }
    f.period = *period;
    f.down_for = absl::GetFlag(FLAGS_flap_down_for);
    return f;
  }
  // One ground-truth line per flap, with its place in the series.
  absl::Status Apply(const ScenarioFault& f, SimFaultTargets& sim) const override {
    const RepeatedFlap r{f.host, f.device, f.port, f.at, f.count, f.period};
    for (LinkFlap& flap : ExpandRepeatedFlap(r, f.down_for)) {
      flap.truth = LinkFlapTruth(*this, flap);
      sim.hosts.flaps.push_back(std::move(flap));
    }
    return absl::OkStatus();
  }
};

const FaultKind& LinkFlapRepeatedKind() {
  static const LinkFlapRepeatedFault kind;
  return kind;
}

}  // namespace railwatch::sim
