#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "sim/fault_specs.h"
#include "sim/kmsg_writer.h"
#include "sim/fault_truth.h"
#include "sim/traffic_model.h"

namespace railwatch::sim {

// A counter file rewritten in place (pwrite + ftruncate), never replaced: a reader that opened
// it once and preads it, as the agent does with real sysfs, sees every new value. A file kept
// open costs a descriptor for the simulator's life; one that is not is opened for each write
// (a few microseconds): a 256-host fabric has ~130,000 counter files, more than a process may
// usually hold open.
class SimFile {
 public:
  // Creates `path` holding `content`. A file not kept open is opened again for each write at
  // `moved_to`, the path it will have once its directory is renamed (empty: `path`).
  static absl::StatusOr<std::unique_ptr<SimFile>> Create(const std::string& path,
                                                         std::string_view content = "",
                                                         bool keep_open = true,
                                                         std::string moved_to = "");
  ~SimFile();
  absl::Status Write(std::string_view content);

 private:
  SimFile(int fd, std::string path, size_t length)
      : fd_(fd), path_(std::move(path)), length_(length) {}
  int fd_;  // -1 when not kept open
  std::string path_;
  size_t length_;
};

// How many more files the process may keep open, after raising its soft limit to the hard one.
size_t SpareFileDescriptors();

struct LinkFlap {
  std::string host;
  std::string device;
  int port = 1;
  absl::Duration at;  // after the simulation starts
  absl::Duration down_for = absl::Milliseconds(300);
  // One of a --flap_repeat series: flap `repeat` (1-based) of `of`; 0 for a lone --flap.
  int repeat = 0, of = 0;
  FaultTruth truth = {};  // its ground truth, from its kind (sim/fault_truth.h)
};

// The flaps of a --flap_repeat: COUNT flaps, one every PERIOD, each down for `down_for`.
std::vector<LinkFlap> ExpandRepeatedFlap(const RepeatedFlap& r, absl::Duration down_for);

// `text` as a JSON string literal, quotes included.
std::string JsonString(std::string_view text);

// What one simulated NIC has sent and received so far, for the switch port it plugs into.
struct NicTraffic {
  int host = 0;  // 1-based, as in gpu-node-001
  int nic = 0;   // 0-based, mlx5_<nic>
  uint64_t tx_bytes = 0, rx_bytes = 0, tx_packets = 0, rx_packets = 0;
  bool up = true;
  // RoCE packets the NIC received with ECN CE set (np_ecn_marked_roce_packets): the marks its
  // leaf port's egress queue made.
  uint64_t ecn_marked = 0;
  // The priority the NIC's RoCE traffic leaves on: 3 (kRocePriority), 0 when its host lost its QoS.
  int priority = 3;
  // The device left the host (a NIC gone): its leaf port is down for good.
  bool gone = false;
  // Packets the link corrupted so far on their way to the leaf (bit errors): the leaf port's
  // in-errors.
  uint64_t corrupted_packets = 0;
};

// The host side of a PFC storm (the switch side has the PfcStorm): from `at`, for
// `duration` (0: to the end), the NIC sends pause frames on priority 3 without end.
struct StormingNic {
  std::string host, device;
  absl::Duration at;
  absl::Duration duration = absl::ZeroDuration();
};

struct FaultProgress;
class NcclLogs;
class InspectorRecords;
class RasServer;
class JobFailures;
struct NicPort;

// N simulated GPU hosts with K RDMA NICs each, written as sysfs trees under
// <root>/<host>/class/infiniband/, with a netdev per NIC (class/net/<netdev>), its `ethtool -S`
// dump (<root>/<host>/ethtool/<netdev>/stats) and the jobs' NCCL logs
// (<root>/<host>/nccl/<job>.log). Hosts in a job run its collectives on all their NICs at the
// job's share of line rate, in lockstep; other hosts follow a training step's rhythm (an
// AllReduce burst every step, then compute). ECN marks, CNPs and PFC pauses follow the traffic
// and each leaf's state; faults are injected at chosen offsets and recorded as ground truth.
// docs/SIMULATOR.md has the numbers.
class SysfsFabric {
 public:
  struct Options {
    std::string root;
    int hosts = 4;
    int nics_per_host = 8;
    // 0: one leaf per rail for all hosts; N: rail groups of N hosts (host i in group (i-1)/N).
    int hosts_per_leaf = 0;
    double link_gbps = 400;
    // InfiniBand HCAs (--fabric=ib): each port's link_layer says InfiniBand.
    bool infiniband = false;
    absl::Duration step = absl::Milliseconds(500);  // one training step
    double comm_fraction = 0.6;                     // share of the step spent in AllReduce
    uint64_t seed = 1;
    std::vector<LinkFlap> flaps;  // --flap, and the expanded --flap_repeat
    std::vector<SimJob> jobs;
    std::vector<NicDegrade> degrades;
    // Leaf-side faults that the NICs behind the leaf feel (fewer marks and CNPs, slower jobs,
    // PFC pauses from the leaf); the switch model adds the leaf's own counters.
    std::vector<EcnMisconfig> ecn_misconfigs;
    std::vector<StormingNic> storms;
    std::vector<PfcDeadlock> deadlocks;
    std::vector<BitErrors> bit_errors;
    std::vector<LinkAtRisk> links_at_risk;
    std::vector<NicHealth> nic_health;
    std::vector<PcieAer> pcie_aer;
    std::vector<Straggler> stragglers;
    std::vector<SlowRank> slow_ranks;
    std::vector<RankHang> rank_hangs;
    std::vector<WrongPriority> wrong_priorities;
    std::vector<NicGone> nics_gone;
    std::vector<PacketLoss> packet_losses;
    std::vector<NcclError> nccl_errors;
    std::vector<DriverReload> driver_reloads;  // noise
    // Noise: bursts of a job's rate and of benign pauses on top of the steady rates.
    bool bursty = true;
    // Benign PFC pauses per second each way on every NIC (as on every leaf port).
    double benign_pause_rate = 2;
    // A storm's and its relay's pause rates (as the switch side's).
    double storm_pause_rate = 20000;
    double relay_pause_rate = 3000;
    // Counters other than the data counters are written at most this often (0: every tick).
    absl::Duration cold_flush_interval = absl::Seconds(1);
    // ethtool dumps (rewritten at most every `ethtool_interval`) and NCCL logs.
    bool ethtool = true;
    absl::Duration ethtool_interval = absl::Milliseconds(500);
    // Each NIC's module EEPROM and FEC statistics (<root>/<host>/optics/<netdev>/, the agent's
    // --optics_dir), rewritten every `optics_interval`.
    bool optics = true;
    // Each host's kernel log, as /dev/kmsg reads (<root>/<host>/kmsg, the agent's --kmsg).
    bool kmsg = true;
    absl::Duration optics_interval = absl::Seconds(2);
    bool nccl_logs = true;
    // The jobs' NCCL Inspector records (sim/inspector_writer.h); needs nccl_logs.
    bool nccl_inspector = true;
    // The jobs' NCCL RAS endpoints (sim/ras_server.h); needs nccl_inspector.
    bool nccl_ras = true;
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
  absl::Status Validate() const;
  absl::Status CreateHost(int h);
  absl::Status ApplyFlaps(absl::Time now);
  absl::Status ApplyFaults(absl::Time now);
  absl::Status WriteEthtool(absl::Time now);
  absl::Status WriteOptics(absl::Time now);
  // The link-at-risk faults' drift at `now` (host_faults.cc).
  absl::Status ApplyLinksAtRisk(absl::Time now);
  // The NIC health faults' kernel messages due by `now` (host_faults.cc).
  absl::Status ApplyKernelFaults(absl::Time now);
  void MoveTraffic(absl::Time now, double dt);
  // By job: the share of its healthy speed its collectives' data moves at (its slowest leaf
  // and NIC; 0 while stalled, a NIC is down or gone, or after a rank failed).
  std::vector<double> JobPace() const;
  void MovePauses(double dt);
  void MoveErrors(double dt);
  NicPort* Find(const std::string& host, const std::string& device) const;
  int LeafOf(int host, int nic) const;

  Options options_;
  absl::Time start_, last_, last_ethtool_, last_cold_flush_, last_optics_;
  // NICs whose hot counters (and ethtool dump), and whose busy counters, are kept open.
  size_t hot_open_nics_ = 0, busy_open_nics_ = 0;
  std::mt19937_64 rng_;
  std::vector<std::unique_ptr<NicPort>> ports_;  // host-major, as ReadTraffic returns them
  std::vector<std::unique_ptr<KmsgWriter>> kmsg_;  // by host index - 1 (empty: --kmsg=false)
  std::vector<bool> flap_started_, flap_ended_;
  std::vector<int> job_of_host_;      // index into options_.jobs, -1: none; by host index
  std::vector<double> leaf_marking_;  // ECN marking share per leaf, 1 when healthy
  std::vector<bool> job_stalled_;     // by job: a deadlock holds its collectives
  std::vector<double> job_burst_;     // by job: rate factor of a burst under way (1: none)
  std::vector<absl::Time> job_burst_until_;
  // By job: the share of its healthy step rate it runs at while a slow rank holds it back.
  std::vector<double> job_slowdown_;
  std::vector<bool> job_failed_;  // by job: a rank failed (NCCL error): no more collectives
  std::vector<bool> job_hung_;    // by job: a rank hangs (rank_hang): stalled for good
  std::unique_ptr<FaultProgress> progress_;  // which faults started and ended
  // Work space of a tick, reused so that a tick allocates nothing.
  struct Scratch {
    std::vector<double> job_util, leaf_a, leaf_b, per_port, per_leaf_flag;
  } scratch_;
  std::unique_ptr<NcclLogs> nccl_;
  std::unique_ptr<InspectorRecords> inspector_;
  std::unique_ptr<RasServer> ras_;
  std::unique_ptr<JobFailures> failures_;
};

}  // namespace railwatch::sim
