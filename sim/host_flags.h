#pragma once

// railwatch-sim's flags for the simulated hosts' faults and noise (docs/SIMULATOR.md), parsed
// into SysfsFabric::Options.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "sim/sysfs_fabric.h"

namespace railwatch::sim {

// The host flags that take lists (comma-separated or repeated), for JoinRepeatedFlags.
const std::vector<std::string>& HostListFlags();

// Parses the host flags into `o` (after main has filled in the fabric's size and --flap).
absl::Status ParseHostFlags(SysfsFabric::Options& o);

}  // namespace railwatch::sim
