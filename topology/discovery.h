#pragma once

// The fabric map from what the fabric says about itself (docs/TOPOLOGY.md, "Discovery"):
//  - host agents: each NIC's identity (fabric_rdma_port_info, fabric_rdma_device_info) and,
//    where lldpd runs, the switch port each interface hears (fabric_lldp_neighbor_info);
//  - switch agents: the neighbour on each switch port (openconfig-lldp, the same series).
// One end of a cable is enough; both ends agreeing is better. Rails are inferred from which NIC
// of a host lands on which leaf. What a topology file declares pins or overrides what was
// discovered, and every disagreement is listed (DiffTopologies).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "topology/topology.h"

namespace railwatch {

// A host's RDMA port as its agent reports it.
struct NicFact {
  std::string host;
  std::string device;  // mlx5_3
  std::string netdev;  // enp12s0np0 (empty for IB ports without one)
  std::string mac;     // the netdev's, lower case with colons
  std::string node_guid, port_guid;
  std::string link_layer;  // Ethernet, InfiniBand
};

// An LLDP neighbour: on `system`'s `port` (a switch port, or a host interface) the neighbour
// announces `neighbor_system` and `neighbor_port`.
struct NeighbourFact {
  std::string system, port;
  std::string neighbor_system, neighbor_port, neighbor_chassis_id;
  int64_t seen_unix_nano = 0;  // newest wins when one port has several
};

// A switch port's own identity as its switch reports it (fabric_switch_interface_info): lets
// an LLDP port-id that is a MAC (some switches announce their ports so) name the port.
struct SwitchPortFact {
  std::string system, port;
  std::string mac;
};

struct DiscoveryFacts {
  std::vector<NicFact> nics;
  std::vector<SwitchPortFact> switch_port_ids;  // switch agents
  std::vector<NeighbourFact> switch_ports;  // switch agents
  std::vector<NeighbourFact> host_ports;    // host agents reading lldpd
  std::vector<std::string> switches;        // switches with an agent (gNMI targets)
};

// Where a cable in the map comes from.
enum class Provenance : uint8_t {
  kBothEnds,    // the switch port and the host (or the two switches) agree
  kSwitchEnd,   // only the switch (or one of two switches) reported it
  kHostEnd,     // only the host's lldpd reported it
  kDeclared,    // only the topology file says so
  kEndsDisagree,  // both ends reported it, differently (the switch end is used)
};
std::string_view ProvenanceName(Provenance p);

struct DiscoveredTopology {
  Topology topology;
  // "host/device" for a NIC's cable, "switch/port" for a switch link (its leaf end, or the
  // lower name between two switches of one role).
  absl::flat_hash_map<std::string, Provenance> provenance;
  // What was seen but could not be placed, and why: one line each, sorted.
  std::vector<std::string> notes;
};

// Builds the map from facts alone. Deterministic: the same facts in any order give the same
// map.
DiscoveredTopology DiscoverTopology(const DiscoveryFacts& facts);

// One place where two topologies disagree.
struct TopologyDifference {
  std::string where;       // "gpu-node-003/mlx5_1", "leaf-r1/Ethernet64", "spine-0"
  std::string what;        // "switch port", "rail", "netdev", "role", "link"
  std::string declared;    // empty: the file says nothing about it
  std::string discovered;  // empty: nothing was discovered there
  // Both sides say something, and not the same: a topology_mismatch.
  bool conflict() const { return !declared.empty() && !discovered.empty(); }
};

// Every difference between what a file declares and what was discovered, sorted by where.
// Dialects and jobs are not compared (discovery knows neither).
std::vector<TopologyDifference> DiffTopologies(const Topology& declared,
                                               const Topology& discovered);

// The map the daemon uses: the discovered one with what `declared` says laid over it (its
// NICs' switch ports and rails, its switches' roles and dialects, its links, its jobs). Marks
// declared-only cables kDeclared in `provenance`.
Topology MergeTopologies(const Topology& declared, const Topology& discovered,
                         absl::flat_hash_map<std::string, Provenance>& provenance);

// The topology as a file railwatchd --topology reads back (docs/TOPOLOGY.md): switches and
// hosts sorted by name, each cable with its provenance as a comment when `provenance` is given.
std::string TopologyToYaml(const Topology& topology,
                           const absl::flat_hash_map<std::string, Provenance>* provenance);

}  // namespace railwatch
