#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "gnmi/gnmi.pb.h"
#include "sim/switch_model.h"

namespace railwatch::sim {

// What a simulated switch answers for one subscribed path: resolved once against what the
// switch serves in its dialect (wildcards expanded, unknown paths refused), then rendered at
// every sample.
class PathQuery {
 public:
  virtual ~PathQuery() = default;
  // Sets `n`'s updates to the switch's current values. The paths are written on the first
  // call and kept: later calls on the same notification rewrite the values only, so that a
  // steady stream does not rebuild its paths. The caller sets the timestamp.
  virtual void Render(const SimSwitch& sw, ::gnmi::Notification& n) = 0;
  // What TARGET_DEFINED means here: ON_CHANGE for state (oper-status, LLDP), SAMPLE for counters.
  virtual bool StateOnly() const = 0;
};

// Resolves prefix + path (origin ignored; target as the dialect wants it: SONiC's COUNTERS_DB
// APPL_DB (LLDP_ENTRY_TABLE, PORT_TABLE), STATE_DB (xcvrd's TRANSCEIVER_DOM_SENSOR,
// TRANSCEIVER_DOM_THRESHOLD, TRANSCEIVER_INFO) and OC-YANG) against switch `sw`. NotFound when
// the dialect serves nothing there.
// Wildcards: `*` for a whole element or a key value, keys left out match every entry, `...`
// for any number of elements, and on SONiC's COUNTERS_DB `*` inside a port name (Ethernet*).
absl::StatusOr<std::unique_ptr<PathQuery>> ResolvePath(const SimSwitch& sw,
                                                       const ::gnmi::Path& prefix,
                                                       const ::gnmi::Path& path);

// What Capabilities answers for a dialect.
std::vector<::gnmi::ModelData> SupportedModels(Dialect d);
std::vector<::gnmi::Encoding> SupportedEncodings(Dialect d);

}  // namespace railwatch::sim
