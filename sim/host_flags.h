#pragma once

// railwatch-sim's flags for the simulated hosts' noise and what they write (docs/SIMULATOR.md),
// parsed into SysfsFabric::Options. The fault flags are their kinds' (sim/fault_kinds.h).

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "sim/sysfs_fabric.h"

namespace railwatch::sim {

// The host flags that take lists (comma-separated or repeated), for JoinRepeatedFlags.
const std::vector<std::string>& HostListFlags();

// Parses the host flags into `o`.
absl::Status ParseHostFlags(SysfsFabric::Options& o);

}  // namespace railwatch::sim
