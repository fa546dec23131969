// slow_rank: the rank on one GPU computes FACTOR longer than its peers before each collective
// (a GPU throttled by heat or power, a slow data loader), so every peer waits for it; its NIC
// and link are healthy. The GPU is named by the NIC it uses (GPU k uses mlx5_k). NCCL's
// Inspector records show it (sim/inspector_writer.h): straggler_rank must name it.
#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/fault_kinds.h"
#include "sim/fault_specs.h"
#include "sim/host_faults.h"
#include "sim/scenario.h"
#include "sim/spec_parsing.h"

ABSL_FLAG(std::vector<std::string>, slow_rank, {},
          "ranks that compute FACTOR longer than their peers before each collective, named "
          "by the NIC their GPU uses: HOST/DEVICE@OFFSET[:FACTOR] (default 0.75, i.e. 75% "
          "longer; GPU k uses mlx5_k). Repeatable");

namespace railwatch::sim {

class SlowRankFault : public FaultKind {
 public:
  SlowRankFault()
      : FaultKind({.kind = "slow_rank",
                   .target = FaultTarget::kNic,
                   .truth_kind = "slow_rank",
                   .playbook = "straggler_rank",
                   .culprit = {"host", "local_rank"},
                   .target_delay = absl::Seconds(15),
                   .flag = "slow_rank",
                   .companion_flags = {}}) {}

  void Read(ScenarioMap& map, const Scenario& s, ScenarioFault& f) const override {
    f.factor = 0.75;
    map.Number("factor", 0, 10, true, f.factor);
    if (!f.host.empty() && s.JobOf(f.host) == nullptr) {
      map.Problem("host", "bad-value",
                  absl::StrCat("no job runs on ", f.host, ": a slow rank is a job's rank"));
    }
  }
  std::vector<std::string> FlagValues() const override { return absl::GetFlag(FLAGS_slow_rank); }
  absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const override {
    absl::StatusOr<ScenarioFault> f = ParseNicFault<ScenarioFault>(
        "slow_rank", spec, "HOST/DEVICE@OFFSET[:FACTOR], e.g. gpu-node-005/mlx5_3@15s:0.75",
        &ScenarioFault::factor, [](double v) { return v > 0 && v <= 10; },
        "FACTOR is how much longer the rank computes, in (0, 10]");
    if (f.ok() && spec.find(':') == absl::string_view::npos) f->factor = 0.75;
    return Own(std::move(f));
  }
  absl::Status Apply(const ScenarioFault& f, SimFaultTargets& sim) const override {
    const int local_rank = SimNicIndex(f.device, 1 << 20);
    sim.hosts.slow_ranks.push_back(
        {f.host, f.device, f.at, f.factor, Truth([this, f, local_rank](const FaultStarted& s) {
           return TruthLine(absl::StrFormat("%s, \"local_rank\": \"%d\", \"factor\": %g",
                                            NicFields(f), local_rank, f.factor),
                            s.now);
         })});
    return absl::OkStatus();
  }
};

const FaultKind& SlowRankKind() {
  static const SlowRankFault kind;
  return kind;
}

}  // namespace railwatch::sim
