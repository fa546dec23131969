#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace railwatch {

// Which NIC of which host is on which rail, which switch port it plugs into, and which
// switches connect to which: the topology file (YAML), docs/TOPOLOGY.md.
struct TopologyNic {
  std::string device;  // RDMA device, "mlx5_0"
  std::string netdev;  // its netdev, "enp12s0np0"; may be empty
  int rail = -1;       // -1: not on a rail
  std::string switch_name;
  std::string switch_port;
};

struct TopologyHost {
  std::string name;
  std::vector<TopologyNic> nics;
};

// A switch-to-switch link seen from one end.
struct TopologyLink {
  std::string port;
  std::string peer;       // the other switch
  std::string peer_port;
};

// A job from the topology file's `jobs:` section (jobs learnt from NCCL logs live in
// JobRegistry, topology/fabric_map.h).
struct TopologyJob {
  std::string name;
  std::vector<std::string> hosts;
  int gpus_per_host = 8;
};

struct TopologySwitch {
  std::string name;
  std::string role;     // leaf, spine, ... (free text)
  std::string dialect;  // gNMI profile, informational here
  std::vector<TopologyLink> links;
};

// What should be at the far end of a switch port.
struct TopologyPortPeer {
  enum class Kind { kHost, kSwitch };
  Kind kind = Kind::kHost;
  std::string system;  // host or switch name
  std::string port;    // netdev (hosts) or switch port
  std::string device;  // RDMA device (hosts)
};

class Topology {
 public:
  // Every problem is reported, one per line of the status message, as file:line:column.
  static absl::StatusOr<Topology> LoadFile(const std::string& path);
  static absl::StatusOr<Topology> LoadString(std::string_view yaml, std::string_view file_name);
  // A topology built in code (discovery, topology/discovery.h); names are not checked.
  static Topology FromParts(std::vector<TopologyHost> hosts, std::vector<TopologySwitch> switches,
                            std::vector<TopologyJob> jobs);

  const std::vector<TopologyHost>& hosts() const { return hosts_; }
  const std::vector<TopologySwitch>& switches() const { return switches_; }
  const std::vector<TopologyJob>& jobs() const { return jobs_; }
  // nullptr when the topology does not say what is on that port.
  const TopologyPortPeer* PeerOf(std::string_view switch_name, std::string_view port) const;

 private:
  void Index();

  std::vector<TopologyHost> hosts_;
  std::vector<TopologySwitch> switches_;
  std::vector<TopologyJob> jobs_;
  absl::flat_hash_map<std::string, TopologyPortPeer> peers_;  // "switch\0port"
};

}  // namespace railwatch
