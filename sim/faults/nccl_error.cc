// nccl_error: the rank(s) of the job on a host fail on their own, with no fabric cause: a
// PyTorch watchdog timeout or an NCCL IB completion error (status 12).
#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "sim/fault_kinds.h"
#include "sim/fault_specs.h"
#include "sim/scenario.h"

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
  absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const override {
    absl::StatusOr<NcclError> e = ParseNcclError(spec);
    if (!e.ok()) return e.status();
    ScenarioFault f = NewFault(e->host, "", e->at);
    f.error = e->kind;
    return f;
  }
  // The job's NCCL log gets the rank's error (sim/job_failures.h), which writes the ground truth.
  absl::Status Apply(const ScenarioFault& f, SimFaultTargets& sim) const override {
    sim.hosts.nccl_errors.push_back({f.host, f.at, f.error});
    return absl::OkStatus();
  }
};

const FaultKind& NcclErrorKind() {
  static const NcclErrorFault kind;
  return kind;
}

}  // namespace railwatch::sim
