#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "sim/traffic_model.h"

namespace railwatch::sim {

// A counter file rewritten in place (pwrite + ftruncate), never replaced: a reader that opened
// it once and preads it, as the agent does with real sysfs, sees every new value.
class SimFile {
 public:
  static absl::StatusOr<std::unique_ptr<SimFile>> Create(const std::string& path);
  ~SimFile();
  absl::Status Write(std::string_view content);

 private:
  explicit SimFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_;
  std::string path_;
  size_t length_ = 0;
};

struct LinkFlap {
  std::string host;
  std::string device;
  int port = 1;
  absl::Duration at;                            // after the simulation starts
  absl::Duration down_for = absl::Milliseconds(300);
};

// Parses HOST/DEVICE/PORT@OFFSET, e.g. gpu-node-003/mlx5_5/1@8s.
absl::StatusOr<LinkFlap> ParseLinkFlap(absl::string_view spec);

// Appends one JSON line to the ground-truth file (nothing when `file` is empty).
absl::Status AppendGroundTruth(const std::string& file, std::string_view json_line);

// What one simulated NIC has sent and received so far, for the switch port it plugs into.
struct NicTraffic {
  int host = 0;  // 1-based, as in gpu-node-001
  int nic = 0;   // 0-based, mlx5_<nic>
  uint64_t tx_bytes = 0, rx_bytes = 0, tx_packets = 0, rx_packets = 0;
  bool up = true;
  // RoCE packets the NIC received with ECN CE set (np_ecn_marked_roce_packets): the marks its
  // leaf port's egress queue made.
  uint64_t ecn_marked = 0;
  // The priority the NIC's RoCE traffic leaves on: 3 (kRocePriority), 0 under --wrong_priority.
  int priority = 3;
  // The device left the host (--nic_gone): its leaf port is down for good.
  bool gone = false;
  // Packets the link corrupted so far on their way to the leaf (--ber): the leaf port's
  // in-errors.
  uint64_t corrupted_packets = 0;
};

// N simulated GPU hosts with 8 RDMA NICs each, written as sysfs trees under
// <root>/<host>/class/infiniband/. Hosts in a job run its collectives on all their NICs at the
// job's share of line rate, in lockstep; other hosts follow a training step's rhythm (an
// AllReduce burst every step, then compute). ECN marks and CNPs follow the traffic and each
// leaf's marking; faults are injected at chosen offsets and recorded as ground truth.
class SysfsFabric {
 public:
  struct Options {
    std::string root;
    int hosts = 4;
    int nics_per_host = 8;
    double link_gbps = 400;
    absl::Duration step = absl::Milliseconds(500);  // one training step
    double comm_fraction = 0.6;                     // share of the step spent in AllReduce
    uint64_t seed = 1;
    std::vector<LinkFlap> flaps;
    std::vector<SimJob> jobs;
    std::vector<NicDegrade> degrades;
    // Leaf-side faults that the NICs behind the leaf feel (fewer marks and CNPs, slower jobs);
    // the switch model adds the leaf's own counters.
    std::vector<EcnMisconfig> ecn_misconfigs;
    // JSON lines, one per injected fault, appended as it happens.
    std::string ground_truth_file;
  };

  explicit SysfsFabric(Options options);
  ~SysfsFabric();

  // Writes the initial trees. `start` is the simulation's time zero.
  absl::Status Create(absl::Time start);
  // Advances to `now`: moves counters with traffic and applies faults that are due.
  absl::Status Tick(absl::Time now);

  static std::string HostName(int index);
  // The netdev of NIC `nic` (as its PCI function and GID table name it), "enp24s0np0".
  static std::string NetdevName(int nic);
  std::string HostRoot(const std::string& host) const;

  // Every NIC's traffic so far, host-major (host 1 NICs 0..n-1, then host 2 ...). Reuses `out`.
  void ReadTraffic(std::vector<NicTraffic>& out) const;

 private:
  struct Port;
  absl::Status ApplyFlaps(absl::Time now);
  absl::Status ApplyDegrades(absl::Time now);
  absl::Status ApplyEcnMisconfigs(absl::Time now);
  void MoveTraffic(absl::Time now, double dt);

  Options options_;
  absl::Time start_, last_;
  std::mt19937_64 rng_;
  std::vector<std::unique_ptr<Port>> ports_;  // host-major, as ReadTraffic returns them
  std::map<std::string, Port*> by_name_;      // "host/device/port"
  std::vector<bool> flap_started_, flap_ended_, degrade_started_, misconfig_started_;
  std::vector<int> job_of_host_;          // index into options_.jobs, -1: none; by host index
  std::vector<double> leaf_marking_;      // ECN marking share per leaf (rail), 1 when healthy
};

}  // namespace railwatch::sim
