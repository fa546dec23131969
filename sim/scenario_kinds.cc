// The fault kinds of the scenario suite (docs/SCENARIOS.md "Fault kinds") and the names of the
// simulated fabric that scenarios refer to.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/scenario.h"

namespace railwatch::sim {

const std::vector<FaultKindInfo>& FaultKinds() {
  static const std::vector<FaultKindInfo>* const kinds = [] {
    const absl::Duration two_samples = absl::Seconds(2);
    return new std::vector<FaultKindInfo>{
        {"pfc_storm",
         "pfc_storm",
         "pfc_storm",
         {"host", "device"},
         two_samples,
         {"host", "device", "at", "for"},
         {"host", "device", "at"}},
        {"pfc_deadlock",
         "pfc_deadlock",
         "pfc_deadlock",
         {"switch", "interface"},
         std::nullopt,
         {"host", "device", "at", "for"},
         {"host", "device", "at"}},
        {"link_flap",
         "link_flap",
         "link_flap",
         {"host", "device"},
         two_samples,
         {"host", "device", "port", "at", "down_for"},
         {"host", "device", "at"}},
        {"link_flap_repeated",
         "link_flap",
         "link_flap",
         {"host", "device"},
         two_samples,
         {"host", "device", "port", "at", "count", "period", "down_for"},
         {"host", "device", "at", "count", "period"}},
        {"bit_errors",
         "bit_errors",
         "link_degradation",
         {"host", "device"},
         std::nullopt,
         {"host", "device", "at", "per_minute"},
         {"host", "device", "at"}},
        {"link_degrade",
         "nic_degrade",
         "straggler_rail",
         {"host", "device"},
         absl::Seconds(10),
         {"host", "device", "at", "factor"},
         {"host", "device", "at"}},
        {"straggler",
         "straggler",
         "straggler_rail",
         {"host", "device"},
         absl::Seconds(10),
         {"host", "device", "at", "factor"},
         {"host", "device", "at"}},
        {"ecn_misconfig",
         "ecn_misconfig",
         "ecn_misconfiguration",
         {"switch"},
         absl::Seconds(60),
         {"switch", "at", "offset_kb"},
         {"switch", "at"}},
        {"wrong_priority",
         "wrong_priority",
         "wrong_traffic_class",
         {"host"},
         std::nullopt,
         {"host", "at"},
         {"host", "at"}},
        {"nic_gone",
         "nic_gone",
         "nic_gone",
         {"host", "device"},
         std::nullopt,
         {"host", "device", "at"},
         {"host", "device", "at"}},
        {"packet_loss",
         "packet_loss",
         "roce_retransmissions",
         {"host", "device"},
         std::nullopt,
         {"host", "device", "at", "per_second"},
         {"host", "device", "at"}},
        {"nccl_error",
         "nccl_error",
         "nccl_failure",
         {"host"},
         std::nullopt,
         {"host", "at", "error"},
         {"host", "at"}},
    };
  }();
  return *kinds;
}

const FaultKindInfo* FindFaultKind(absl::string_view kind) {
  for (const FaultKindInfo& k : FaultKinds()) {
    if (k.kind == kind) return &k;
  }
  return nullptr;
}

const FaultKindInfo* FindFaultKindByTruth(absl::string_view truth_kind) {
  for (const FaultKindInfo& k : FaultKinds()) {
    if (k.truth_kind == truth_kind) return &k;
  }
  return nullptr;
}

std::string ScenarioFault::Where() const {
  if (!switch_name.empty()) return switch_name;
  return device.empty() ? host : absl::StrCat(host, "/", device);
}

std::optional<absl::Duration> Scenario::FirstEventAt() const {
  std::optional<absl::Duration> first;
  auto consider = [&first](absl::Duration at) {
    if (!first || at < *first) first = at;
  };
  for (const ScenarioFault& f : faults) consider(f.at);
  for (const DriverReloadNoise& n : noise.driver_reloads) consider(n.at);
  return first;
}

std::string SimHostName(int index) { return absl::StrFormat("gpu-node-%03d", index); }

std::vector<std::string> SimSwitchNames(const ScenarioTopology& t) {
  std::vector<std::string> names;
  const int groups = t.hosts_per_leaf > 0 ? (t.hosts + t.hosts_per_leaf - 1) / t.hosts_per_leaf : 0;
  if (groups == 0) {
    for (int k = 0; k < t.nics; ++k) names.push_back(absl::StrCat("leaf-r", k));
  } else {
    for (int g = 0; g < groups; ++g) {
      for (int k = 0; k < t.nics; ++k) names.push_back(absl::StrCat("leaf-g", g, "-r", k));
    }
  }
  for (int s = 0; s < t.spines; ++s) names.push_back(absl::StrCat("spine-", s));
  return names;
}

}  // namespace railwatch::sim
