// link_flap: a port goes down for `down_for` and comes back.
#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "sim/fault_kinds.h"

ABSL_FLAG(std::vector<std::string>, flap, {},
          "link flaps to inject, HOST/DEVICE/PORT@OFFSET (comma-separated or repeated), e.g. "
          "gpu-node-003/mlx5_5/1@8s");
ABSL_FLAG(absl::Duration, flap_down_for, absl::Milliseconds(300),
          "how long a flapped link stays down");

namespace railwatch::sim {

// A flap's ground truth, for both flap kinds (the flaps of a series also say their place in
// the series).
FaultTruth LinkFlapTruth(const FaultKind& kind, const LinkFlap& flap) {
  return kind.Truth([&kind, flap](const FaultStarted& s) {
    const std::string repeat =
        flap.of > 0 ? absl::StrFormat(", \"repeat\": %d, \"of\": %d", flap.repeat, flap.of) : "";
    return absl::StrFormat(
        "{\"fault\": \"%s\", \"host\": \"%s\", \"device\": \"%s\", \"port\": \"%d\", "
        "\"injected_at_unix_nano\": %d, \"down_for_ms\": %d%s}",
        kind.truth_kind, flap.host, flap.device, flap.port, absl::ToUnixNanos(s.now),
        absl::ToInt64Milliseconds(flap.down_for), repeat);
  });
}

class LinkFlapFault : public FaultKind {
 public:
  LinkFlapFault()
      : FaultKind({.kind = "link_flap",
                   .target = FaultTarget::kNic,
                   .truth_kind = "link_flap",
                   .playbook = "link_flap",
                   .culprit = {"host", "device"},
                   .target_delay = absl::Seconds(2),
                   .flag = "flap",
                   .companion_flags = {"flap_down_for"}}) {}

  void Read(ScenarioMap& map, const Scenario&, ScenarioFault& f) const override {
    map.Int("port", 1, 2, f.port);
    map.Duration("down_for", f.down_for);
  }
  std::vector<std::string> FlagValues() const override { return absl::GetFlag(FLAGS_flap); }
  absl::StatusOr<ScenarioFault> ParseFlag(absl::string_view spec) const override {
    absl::StatusOr<LinkFlap> l = ParseLinkFlap(spec);
    if (!l.ok()) return l.status();
    ScenarioFault f = NewFault(l->host, l->device, l->at);
    f.port = l->port;
    f.down_for = absl::GetFlag(FLAGS_flap_down_for);
    return f;
  }
  absl::Status Apply(const ScenarioFault& f, SimFaultTargets& sim) const override {
    LinkFlap flap{f.host, f.device, f.port, f.at, f.down_for};
    flap.truth = LinkFlapTruth(*this, flap);
    sim.hosts.flaps.push_back(std::move(flap));
    return absl::OkStatus();
  }
};

const FaultKind& LinkFlapKind() {
  static const LinkFlapFault kind;
  return kind;
}

}  // namespace railwatch::sim
