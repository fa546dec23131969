// link_flap: a port goes down for `down_for` and comes back.
#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/text.h"
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
    // HOST/DEVICE/PORT@OFFSET, e.g. gpu-node-003/mlx5_5/1@8s.
    std::vector<absl::string_view> at = absl::StrSplit(spec, '@');
    std::vector<absl::string_view> parts;
    if (at.size() == 2) parts = absl::StrSplit(at[0], '/');
    int port = 0;
    if (parts.size() != 3 || !absl::SimpleAtoi(parts[2], &port)) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad flap \"", spec,
                       "\": expected HOST/DEVICE/PORT@OFFSET, e.g. gpu-node-003/mlx5_5/1@8s"));
    }
    absl::StatusOr<absl::Duration> offset = ParseDuration(at[1]);
    if (!offset.ok()) return offset.status();
    ScenarioFault f = NewFault(std::string(parts[0]), std::string(parts[1]), *offset);
    f.port = port;
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
