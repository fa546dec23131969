// rank_hang: the rank on one GPU launches no more collectives (a process stuck in a GPU fault or
// a deadlock in the training code). Its peers launch the next collective and wait in it: the job
// stalls, NCCL RAS reports the rank one collective behind (sim/ras_server.h), and every rank's
// watchdog times out after the collective timeout (sim/job_failures.h). The GPU is named by the
// NIC it uses (GPU k uses mlx5_k). job_hang must name the rank before the timeout.
//
// NCCL RAS's MONITOR mode says nothing of it: its events are about processes, not collectives
// (src/ras/peers.cc, rasnet.cc), and the hung rank's process lives, its RAS thread answering
// keep-alives. Only a process that dies or stops whole is reported (PEER_UNRESPONSIVE after
// 5 s, PEER_DEAD after 60 s: RasServer::ProcessFrozen); so the simulated endpoints send no
// event for a rank_hang, as a real job's would not.
#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/fault_kinds.h"
#include "sim/fault_specs.h"
#include "sim/host_faults.h"
#include "sim/scenario.h"
#include "sim/spec_parsing.h"

ABSL_FLAG(std::vector<std::string>, rank_hang, {},
          "ranks that stop launching collectives, named by the NIC their GPU uses: "
          "HOST/DEVICE@OFFSET (GPU k uses mlx5_k); the job stalls and its watchdogs time out "
          "10 s later. Repeatable");

namespace railwatch::sim {

class RankHangFault : public FaultKind {
 public:
  RankHangFault()
      : FaultKind({.kind = "rank_hang",
                   .target = FaultTarget::kNic,
                   .truth_kind = "rank_hang",
                   .playbook = "job_hang",
                   .culprit = {"host", "local_rank"},
                   .target_delay = absl::Seconds(8),
                   .flag = "rank_hang",
                   .companion_flags = {}}) {}

  void Read(ScenarioMap& map, const Scenario& s, ScenarioFault& f) const override {
    if (!f.host.empty() && s.JobOf(f.host) == nullptr) {
      map.Problem("host", "bad-value",
                  absl::StrCat("no job runs on ", f.host, ": a hung rank is a job's rank"));
    }
  }
  std::vector<std::string> FlagValues() const override { return absl::GetFlag(FLAGS_rank_hang); }
  absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const override {
    return Own(ParseNicFault<ScenarioFault>("rank_hang", spec,
                                            "HOST/DEVICE@OFFSET, e.g. gpu-node-005/mlx5_3@15s"));
  }
  absl::Status Apply(const ScenarioFault& f, SimFaultTargets& sim) const override {
    const int local_rank = SimNicIndex(f.device, 1 << 20);
    sim.hosts.rank_hangs.push_back(
        {f.host, f.device, f.at, Truth([this, f, local_rank](const FaultStarted& s) {
           return TruthLine(
               absl::StrFormat("%s, \"local_rank\": \"%d\"", NicFields(f), local_rank), s.now);
         })});
    return absl::OkStatus();
  }
};

const FaultKind& RankHangKind() {
  static const RankHangFault kind;
  return kind;
}

}  // namespace railwatch::sim
