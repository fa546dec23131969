// The names of the simulated fabric that scenarios refer to, and what a scenario says of
// itself.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/scenario.h"

namespace railwatch::sim {

std::optional<absl::Duration> Scenario::FirstEventAt() const {
  std::optional<absl::Duration> first;
  auto consider = [&first](absl::Duration at) {
    if (!first || at < *first) first = at;
  };
  for (const ScenarioFault& f : faults) consider(f.at);
  for (const DriverReloadNoise& n : noise.driver_reloads) consider(n.at);
  return first;
}

const ScenarioJob* Scenario::JobOf(absl::string_view host) const {
  for (const ScenarioJob& j : jobs) {
    for (int h = j.first_host; h <= j.last_host; ++h) {
      if (SimHostName(h) == host) return &j;
    }
  }
  return nullptr;
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

std::pair<int, int> SimSwitchPorts(const ScenarioTopology& t, std::string_view name) {
  const std::vector<std::string> names = SimSwitchNames(t);
  auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) return {0, 0};
  const int index = static_cast<int>(it - names.begin());
  const int leaves = static_cast<int>(names.size()) - t.spines;
  if (index >= leaves) return {leaves, 0};
  const int per_leaf = t.hosts_per_leaf > 0 ? t.hosts_per_leaf : t.hosts;
  const int first = (index / t.nics) * per_leaf + 1;
  const int hosts = std::min(t.hosts, first + per_leaf - 1) - first + 1;
  return {hosts + t.spines, hosts};
}

}  // namespace railwatch::sim
