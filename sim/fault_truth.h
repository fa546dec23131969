#pragma once

// A fault's ground truth (docs/SCENARIOS.md "Scoring"): what its line holds is its kind's
// (sim/faults/<kind>.cc, through FaultKind::Truth); the model that plays the fault only says
// when its effect starts and what only the model knows (the leaf port it landed on, the link's
// speed), and appends the line. A fault handed to a model without its kind writes none.

#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace railwatch::sim {

// What the model that plays a fault knows when the fault's effect starts.
struct FaultStarted {
  absl::Time now = absl::UnixEpoch();
  std::string switch_name = "", interface = "";  // the leaf port it landed on (switch side)
  double link_gbps = 0;                          // the NIC's full speed (host side)
};

// A fault's ground truth, as its kind gave it to the model.
struct FaultTruth {
  // Its ground-truth line (one JSON object) when its effect starts; null: none.
  std::function<std::string(const FaultStarted&)> line = nullptr;
  // What the NCCL errors it causes name as their cause ("caused_by" of their lines).
  std::string cause = "";

  // Appends its line to `file` (nothing when it has none or `file` is empty).
  absl::Status Write(const std::string& file, const FaultStarted& started) const;
};

// A FaultStarted with only `now`.
FaultStarted StartedAt(absl::Time now);

// Appends one JSON line to the ground-truth file (nothing when `file` is empty).
absl::Status AppendGroundTruth(const std::string& file, std::string_view json_line);

}  // namespace railwatch::sim
