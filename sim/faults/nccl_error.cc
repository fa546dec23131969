// nccl_error: the rank(s) of the job on a host fail on their own, with no fabric cause: a
// PyTorch watchdog timeout or an NCCL IB completion error (status 12).
#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "sim/fault_kinds.h"
#include "sim/fault_specs.h"
#include "sim/scenario.h"
#include "sim/spec_parsing.h"

ABSL_FLAG(std::vector<std::string>, nccl_error, {},
          "NCCL failures of a host's ranks with no fabric cause, HOST@OFFSET[:KIND], KIND "
          "timeout (PyTorch watchdog, default) or ib_completion (status 12). Repeatable");

namespace railwatch::sim {

class NcclErrorFault : public FaultKind {
 public:
  NcclErrorFault()
      : FaultKind({.kind = "nccl_error",
                   .target = FaultTarget::kHost,
                   .truth_kind = "nccl_error",
                   .playbook = "nccl_failure",
                   .culprit = {"host"},
                   .target_delay = std::nullopt,
                   .flag = "nccl_error",
                   .companion_flags = {}}) {}

  void Read(ScenarioMap& map, const Scenario& s, ScenarioFault& f) const override {
    map.String("error", f.error);
    if (f.error != "timeout" && f.error != "ib_completion") {
      map.Problem("error", "bad-value",
                  absl::StrCat("`error` must be timeout or ib_completion, not \"", f.error, "\""));
    }
    if (!f.host.empty() && s.JobOf(f.host) == nullptr) {
      map.Problem("host", "bad-value",
                  absl::StrCat("no job runs on ", f.host, ": NCCL errors come from a job's ranks"));
    }
  }
  std::vector<std::string> FlagValues() const override { return absl::GetFlag(FLAGS_nccl_error); }
  // HOST@OFFSET[:timeout|ib_completion].
  absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const override {
    constexpr absl::string_view kFlag = "nccl_error";
    constexpr absl::string_view kForm =
        "HOST@OFFSET[:timeout|ib_completion], e.g. gpu-node-001@15s:ib_completion";
    absl::StatusOr<TimedSpec> parts = ParseHostSpec(kFlag, spec, kForm, 1);
    if (!parts.ok()) return parts.status();
    ScenarioFault f = NewFault(std::string(parts->body), "", parts->at);
    if (!parts->extras.empty()) {
      if (parts->extras[0] != "timeout" && parts->extras[0] != "ib_completion") {
        return SpecError(
            kFlag, spec,
            absl::StrCat("KIND \"", parts->extras[0], "\" is neither timeout nor ib_completion"),
            kForm);
      }
      f.error = std::string(parts->extras[0]);
    }
    return f;
  }
  // The jobs' failures write its ground truth as they write its NCCL errors (sim/job_failures.h).
  absl::Status Apply(const ScenarioFault& f, SimFaultTargets& sim) const override {
    sim.hosts.nccl_errors.push_back({f.host, f.at, f.error, Truth(nullptr)});
    return absl::OkStatus();
  }
};

const FaultKind& NcclErrorKind() {
  static const NcclErrorFault kind;
  return kind;
}

}  // namespace railwatch::sim
