#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "sim/switch_model.h"

namespace railwatch::sim {

// The switch agent's targets file (docs/SIMULATOR.md, "Targets file") for the simulated
// switches: one target per switch at its address, `profile:` its dialect. A password, when
// given, goes to `<file>.password` (mode 0600) and the file names it as `password_file:`.
struct TargetsFileOptions {
  absl::Duration sample_interval = absl::Seconds(1);
  std::string username, password;
};
absl::Status WriteTargetsFile(const std::string& path, const std::vector<SimSwitch>& switches,
                              const std::vector<std::string>& addresses,
                              const TargetsFileOptions& options);

// The topology file (docs/TOPOLOGY.md) of the simulated fabric: every host's NICs with their
// rail, leaf and port (rail groups: the host's group's leaves), the switches with their
// leaf-to-spine links, and the jobs (one GPU per NIC: gpus_per_host = nics_per_host).
// `infiniband`: the switches have no gNMI dialect.
absl::Status WriteTopologyFile(const std::string& path, const std::vector<SimSwitch>& switches,
                               int hosts, int nics_per_host, const std::vector<SimJob>& jobs = {},
                               bool infiniband = false);

// What each simulated host's lldpd would answer to `lldpcli -f json0 show neighbors`: for each
// NIC's netdev, the leaf it plugs into (system name, chassis MAC) and the leaf's port (port-id
// subtype ifname), as <root>/<host>/lldpd.json. The host agent reads it with
// --lldp_source=file:PATH (docs/COLLECTORS.md), so that discovery hears both ends of every NIC
// cable (docs/TOPOLOGY.md). A host's own view: an --lldp_miswire changes only the switch's.
absl::Status WriteHostLldpFiles(const std::string& root, const std::vector<SimSwitch>& switches);

}  // namespace railwatch::sim
