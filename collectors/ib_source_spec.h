#pragma once

// The InfiniBand fabric scanner's source from its flag (railwatch-agent --role=ib-fabric
// --ib_source=..., docs/INFINIBAND.md):
//   tools:DIR        the tool output a site's jobs write into DIR (IbToolOutputSource)
//   mad:CA[:PORT]    the fabric's MADs through libibmad from that HCA port (IbMadSource)
//   sim:SPEC         a simulated two-level fat tree through the same IbMadSource
//                    (SimFatTreeSpec: "leaves=4,spines=2,hosts_per_leaf=8")
//   simdb:FILE       railwatch-sim --fabric=ib's subnet (its ibdiagnet2.db_csv, re-read when it
//                    changes) through the same IbMadSource (SimDbMadTransport)

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "collectors/ib_fabric_source.h"

namespace railwatch {

struct IbSourceSettings {
  absl::Duration discover_interval = absl::Minutes(5);
  int mad_window = 4;                            // queries in flight at once
  absl::Duration mad_timeout = absl::Seconds(1);  // each try of a MAD (libibmad; 2 retries)
};

// Fails with a message that names the flag's value and what is wrong: an unknown kind, an
// empty directory, a CA that cannot be opened (and why), a bad simulated fabric.
absl::StatusOr<std::unique_ptr<IbFabricSource>> MakeIbFabricSource(
    std::string_view spec, const IbSourceSettings& settings);

}  // namespace railwatch
