// pfc_storm: a NIC sends PFC pause frames on priority 3 without end; its leaf port relays them.
#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/text.h"
#include "sim/fault_kinds.h"
#include "sim/switch_model.h"

ABSL_FLAG(std::vector<std::string>, pfc_storm, {},
          "PFC storms to inject, HOST/DEVICE@OFFSET: that NIC pauses its leaf port on priority 3");
ABSL_FLAG(absl::Duration, pfc_storm_for, absl::Seconds(30),
          "how long a PFC storm lasts (0: forever)");

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
                   .companion_flags = {"pfc_storm_for"},
                   .needs_switches = true,
                   .fabric = FaultFabric::kRoce}) {}

  void Read(ScenarioMap& map, const Scenario&, ScenarioFault& f) const override {
    map.Duration("for", f.duration);
  }
  std::vector<std::string> FlagValues() const override { return absl::GetFlag(FLAGS_pfc_storm); }
  // HOST/DEVICE@OFFSET; how long it lasts is --pfc_storm_for.
  absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const override {
    std::vector<absl::string_view> at = absl::StrSplit(spec, '@');
    std::vector<absl::string_view> parts;
    if (at.size() == 2) parts = absl::StrSplit(at[0], '/');
    if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad PFC storm \"", spec,
                       "\": expected HOST/DEVICE@OFFSET, e.g. gpu-node-002/mlx5_3@10s"));
    }
    absl::StatusOr<absl::Duration> offset = ParseDuration(at[1]);
    if (!offset.ok()) return offset.status();
    ScenarioFault f = NewFault(std::string(parts[0]), std::string(parts[1]), *offset);
    f.duration = absl::GetFlag(FLAGS_pfc_storm_for);
    return f;
  }
  // The NIC storms (host side) and its leaf port relays and counts it (switch side, which
  // writes the ground truth: it names the port).
  absl::Status Apply(const ScenarioFault& f, SimFaultTargets& sim) const override {
    sim.hosts.storms.push_back({f.host, f.device, f.at, f.duration});
    sim.switches.storms.push_back(
        {f.host, f.device, f.at, f.duration, Truth([this, f](const FaultStarted& s) {
           return absl::StrFormat(
               "{\"fault\": \"%s\", %s, \"switch\": \"%s\", \"port\": \"%s\", \"priority\": %d, "
               "\"injected_at_unix_nano\": %d, \"duration_ms\": %d}",
               truth_kind, NicFields(f), s.switch_name, s.interface, kRocePriority,
               absl::ToUnixNanos(s.now), absl::ToInt64Milliseconds(f.duration));
         })});
    return absl::OkStatus();
  }
};

const FaultKind& PfcStormKind() {
  static const PfcStormFault kind;
  return kind;
}

}  // namespace railwatch::sim
