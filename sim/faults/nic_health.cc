// The NIC's own health, as only the kernel tells it (issue 24):
//   nic_health  the NIC's firmware stops answering mlx5_core's health poll: "device's health
//               compromised" and a firmware syndrome, COUNT times (1), PERIOD apart
//               (nic_unhealthy; 3 or more in an hour escalate to nic_failing, which explains it,
//               so a scenario that wants nic_unhealthy keeps COUNT under 3);
//   pcie_aer    corrected PCIe errors on the NIC's link, PER_MINUTE a minute (pcie_degraded).
// Both are written to the host's simulated /dev/kmsg (sim/kmsg_writer.h).
#include <cmath>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "sim/fault_kinds.h"
#include "sim/fault_specs.h"
#include "sim/spec_parsing.h"

ABSL_FLAG(std::vector<std::string>, nic_health, {},
          "NICs whose firmware stops answering the driver's health poll, "
          "HOST/DEVICE@OFFSET[:COUNT] (health reports, --nic_health_period apart, default 1): "
          "kernel messages only. Repeatable");
ABSL_FLAG(absl::Duration, nic_health_period, absl::Seconds(20),
          "how far apart the health reports of --nic_health come");
ABSL_FLAG(std::vector<std::string>, pcie_aer, {},
          "NICs whose PCIe link reports corrected errors, HOST/DEVICE@OFFSET[:PER_MINUTE] "
          "(default 30): kernel messages only. Repeatable");

namespace railwatch::sim {
namespace {

// Whether HOST/DEVICE@OFFSET[:VALUE] has its :VALUE.
bool ValueGiven(absl::string_view spec) {
  const size_t at = spec.find('@');
  return at != absl::string_view::npos && spec.find(':', at) != absl::string_view::npos;
}

}  // namespace

class NicHealthFault : public FaultKind {
 public:
  NicHealthFault()
      : FaultKind({.kind = "nic_health",
                   .target = FaultTarget::kNic,
                   .truth_kind = "nic_health",
                   .playbook = "nic_unhealthy",
                   .culprit = {"host", "device"},
                   .target_delay = absl::Seconds(10),
                   .flag = "nic_health",
                   .companion_flags = {"nic_health_period"}}) {}

  void Read(ScenarioMap& map, const Scenario&, ScenarioFault& f) const override {
    f.count = 1;
    map.Int("count", 1, 1000, f.count);
    f.period = absl::Seconds(20);
    map.Duration("period", f.period);
  }
  absl::Duration LastAt(const ScenarioFault& f) const override {
    return f.at + f.period * (f.count - 1);
  }
  std::vector<std::string> FlagValues() const override { return absl::GetFlag(FLAGS_nic_health); }
  absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const override {
    absl::StatusOr<ScenarioFault> f = ParseNicFault<ScenarioFault>(
        "nic_health", spec, "HOST/DEVICE@OFFSET[:COUNT], e.g. gpu-node-002/mlx5_3@20s:2",
        &ScenarioFault::per_minute,
        [](double v) { return v >= 1 && v <= 1000 && std::floor(v) == v; },
        "COUNT is how many health reports, a whole number from 1 to 1000");
    if (!f.ok()) return f.status();
    // COUNT is read into per_minute (ParseNicFault reads one number), then moved.
    f->count = ValueGiven(spec) ? static_cast<int>(f->per_minute) : 1;
    f->per_minute = ScenarioFault().per_minute;
    f->period = absl::GetFlag(FLAGS_nic_health_period);
    return Own(std::move(f));
  }
  absl::Status Apply(const ScenarioFault& f, SimFaultTargets& sim) const override {
    sim.hosts.nic_health.push_back(
        {f.host, f.device, f.at, f.count, f.period, Truth([this, f](const FaultStarted& s) {
           return TruthLine(absl::StrFormat("%s, \"count\": %d, \"period_s\": %g", NicFields(f),
                                            f.count, absl::ToDoubleSeconds(f.period)),
                            s.now);
         })});
    return absl::OkStatus();
  }
};

class PcieAerFault : public FaultKind {
 public:
  PcieAerFault()
      : FaultKind({.kind = "pcie_aer",
                   .target = FaultTarget::kNic,
                   .truth_kind = "pcie_aer",
                   .playbook = "pcie_degraded",
                   .culprit = {"host", "device"},
                   .target_delay = absl::Seconds(30),
                   .flag = "pcie_aer",
                   .companion_flags = {}}) {}

  void Read(ScenarioMap& map, const Scenario&, ScenarioFault& f) const override {
    f.per_minute = 30;
    map.Number("per_minute", 0, 6000, true, f.per_minute);
  }
  std::vector<std::string> FlagValues() const override { return absl::GetFlag(FLAGS_pcie_aer); }
  absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const override {
    absl::StatusOr<ScenarioFault> f = ParseNicFault<ScenarioFault>(
        "pcie_aer", spec, "HOST/DEVICE@OFFSET[:PER_MINUTE], e.g. gpu-node-002/mlx5_3@20s:30",
        &ScenarioFault::per_minute, [](double v) { return v > 0 && v <= 6000; },
        "PER_MINUTE (corrected errors a minute) must be in (0, 6000]");
    if (!f.ok()) return f.status();
    if (!ValueGiven(spec)) f->per_minute = 30;
    return Own(std::move(f));
  }
  absl::Status Apply(const ScenarioFault& f, SimFaultTargets& sim) const override {
    sim.hosts.pcie_aer.push_back(
        {f.host, f.device, f.at, f.per_minute, Truth([this, f](const FaultStarted& s) {
           return TruthLine(
               absl::StrFormat("%s, \"per_minute\": %g", NicFields(f), f.per_minute), s.now);
         })});
    return absl::OkStatus();
  }
};

const FaultKind& NicHealthKind() {
  static const NicHealthFault kind;
  return kind;
}

const FaultKind& PcieAerKind() {
  static const PcieAerFault kind;
  return kind;
}

}  // namespace railwatch::sim
