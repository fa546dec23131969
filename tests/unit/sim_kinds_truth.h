#pragma once

// The sim_host and sim_gnmi tests build the models' inputs directly; railwatch-sim hands every
// fault over through its kind (sim/fault_kinds.h), which gives it its ground truth
// (sim/fault_truth.h). This gives the faults of such inputs the truth their kinds give them, so
// that the models write the ground truth railwatch-sim's would.

#include "sim/switch_model.h"
#include "sim/sysfs_fabric.h"

namespace railwatch::sim::testing {

// Every fault of `hosts` (and of `switches`, when given) that has no ground truth yet.
void GiveKindsTruth(SysfsFabric::Options& hosts, SwitchFabric::Options* switches = nullptr);
inline void GiveKindsTruth(SwitchFabric::Options& switches) {
  SysfsFabric::Options none;
  GiveKindsTruth(none, &switches);
}

}  // namespace railwatch::sim::testing
