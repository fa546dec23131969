// packet_loss: the path through a NIC loses packets (out-of-sequence, sequence errors, ACK
// timeouts, retransmissions rise).
#include <cmath>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "sim/fault_kinds.h"
#include "sim/fault_specs.h"
#include "sim/spec_parsing.h"

ABSL_FLAG(std::vector<std::string>, packet_loss, {},
          "NICs whose path loses packets, HOST/DEVICE@OFFSET[:PER_SECOND] (out-of-sequence "
          "packets a second, default 500; NAKs, ACK timeouts, retransmissions with them). "
          "Repeatable");

namespace railwatch::sim {

class PacketLossFault : public FaultKind {
 public:
  PacketLossFault()
      : FaultKind({.kind = "packet_loss",
                   .target = FaultTarget::kNic,
                   .truth_kind = "packet_loss",
                   .playbook = "roce_retransmissions",
                   .culprit = {"host", "device"},
                   .target_delay = std::nullopt,
                   .flag = "packet_loss",
                   .companion_flags = {},
                   .fabric = FaultFabric::kRoce}) {}

  void Read(ScenarioMap& map, const Scenario&, ScenarioFault& f) const override {
    map.Number("per_second", 0, 1e9, true, f.per_second);
  }
  std::vector<std::string> FlagValues() const override { return absl::GetFlag(FLAGS_packet_loss); }
  absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const override {
    return Own(ParseNicFault<ScenarioFault>(
        "packet_loss", spec, "HOST/DEVICE@OFFSET[:PER_SECOND], e.g. gpu-node-002/mlx5_3@15s:500",
        &ScenarioFault::per_second, [](double v) { return v > 0 && std::isfinite(v); },
        "PER_SECOND (out-of-sequence packets a second) must be above 0"));
  }
  absl::Status Apply(const ScenarioFault& f, SimFaultTargets& sim) const override {
    sim.hosts.packet_losses.push_back(
        {f.host, f.device, f.at, f.per_second, Truth([this, f](const FaultStarted& s) {
           return TruthLine(absl::StrFormat("%s, \"per_second\": %g", NicFields(f), f.per_second),
                            s.now);
         })});
    return absl::OkStatus();
  }
};

const FaultKind& PacketLossKind() {
  static const PacketLossFault kind;
  return kind;
}

}  // namespace railwatch::sim
