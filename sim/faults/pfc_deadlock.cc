// pfc_deadlock: the leaf port facing a NIC has its lossless queue stuck (paused, packets
// queued, nothing sent); the NIC's traffic stops and its job stalls.
#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/text.h"
#include "sim/fault_kinds.h"
#include "sim/fault_specs.h"
#include "sim/spec_parsing.h"

ABSL_FLAG(std::vector<std::string>, pfc_deadlock, {},
          "PFC deadlocks to inject, HOST/DEVICE@OFFSET[:DURATION] (0 or none: to the end): the "
          "leaf port facing that NIC has its queue 3 stuck, paused and sending nothing");

namespace railwatch::sim {

class PfcDeadlockFault : public FaultKind {
 public:
  PfcDeadlockFault()
      : FaultKind({.kind = "pfc_deadlock",
                   .target = FaultTarget::kNic,
                   .truth_kind = "pfc_deadlock",
                   .playbook = "pfc_deadlock",
                   .culprit = {"switch", "interface"},
                   .target_delay = std::nullopt,
                   .flag = "pfc_deadlock",
                   .companion_flags = {},
                   .needs_switches = true,
                   .fabric = FaultFabric::kRoce}) {}

  void Read(ScenarioMap& map, const Scenario&, ScenarioFault& f) const override {
    map.Duration("for", f.duration);
  }
  std::vector<std::string> FlagValues() const override { return absl::GetFlag(FLAGS_pfc_deadlock); }
  // HOST/DEVICE@OFFSET[:DURATION] (DURATION 0 or none: until the end).
  absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const override {
    constexpr absl::string_view kFlag = "pfc_deadlock";
    constexpr absl::string_view kForm =
        "HOST/DEVICE@OFFSET[:DURATION], e.g. gpu-node-003/mlx5_2@20s:40s";
    absl::StatusOr<TimedSpec> parts = SplitTimedSpec(kFlag, spec, kForm, 1);
    if (!parts.ok()) return parts.status();
    ScenarioFault f = NewFault("", "", parts->at);
    if (absl::Status s = ParseNicBody(kFlag, spec, kForm, parts->body, f.host, f.device); !s.ok()) {
      return s;
    }
    f.duration = absl::ZeroDuration();
    if (!parts->extras.empty()) {
      absl::StatusOr<absl::Duration> duration = ParseDuration(parts->extras[0]);
      if (!duration.ok()) {
        return SpecError(
            kFlag, spec,
            absl::StrCat("DURATION \"", parts->extras[0], "\": ", duration.status().message()),
            kForm);
      }
      if (*duration < absl::ZeroDuration()) {
        return SpecError(kFlag, spec, "DURATION is negative", kForm);
      }
      f.duration = *duration;
    }
    return f;
  }
  // The switch side sticks the queue and writes the ground truth (it knows the port); the host
  // side stops the NIC's traffic and stalls its job (sim/job_failures.h), whose NCCL errors
  // name this kind as their cause.
  absl::Status Apply(const ScenarioFault& f, SimFaultTargets& sim) const override {
    const PfcDeadlock d{f.host, f.device, f.at, f.duration, Truth([this, f](const FaultStarted& s) {
                          return absl::StrFormat(
                              "{\"fault\": \"%s\", %s, \"switch\": \"%s\", \"interface\": \"%s\", "
                              "\"queue\": %d, \"injected_at_unix_nano\": %d, \"duration_ms\": %d}",
                              truth_kind, NicFields(f), s.switch_name, s.interface, kRocePriority,
                              absl::ToUnixNanos(s.now), absl::ToInt64Milliseconds(f.duration));
                        })};
    sim.hosts.deadlocks.push_back(d);
    sim.switches.deadlocks.push_back(d);
    return absl::OkStatus();
  }
};

const FaultKind& PfcDeadlockKind() {
  static const PfcDeadlockFault kind;
  return kind;
}

}  // namespace railwatch::sim
