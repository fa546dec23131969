#pragma once

#include <string>
#include <string_view>

#include "topology/topology.h"

namespace railwatch {

// What a switch port's LLDP neighbour (openconfig-lldp system-name and port-id) says, checked
// against the topology file.
struct LldpCheck {
  enum class Verdict {
    kMatch,
    // The neighbour is not what the topology says: a miswired cable or a stale file.
    kMismatch,
    // The topology does not say what is on this port; nothing to check.
    kNotInTopology,
  };
  Verdict verdict = Verdict::kNotInTopology;
  // "gpu-node-003/enp12s0np0", for messages; empty for kNotInTopology.
  std::string expected;
};

// A host's LLDP agent (lldpd, the NIC firmware) may announce its short name or its FQDN, and
// as port-id its netdev name (ifname subtype) or the RDMA device; both forms count as a match.
// A port-id that is a MAC address (the default of some NIC firmware) cannot be checked against
// names: then only the system name is compared.
LldpCheck CheckLldpNeighbor(const Topology& topology, std::string_view switch_name,
                            std::string_view port, std::string_view system_name,
                            std::string_view port_id);

std::string_view LldpVerdictName(LldpCheck::Verdict v);

}  // namespace railwatch
