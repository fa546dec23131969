#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "sim/fault_truth.h"

namespace railwatch::sim {

// What moves the simulated NICs' traffic and congestion counters, apart from the per-port
// faults of sysfs_fabric.h and switch_model.h: training jobs, links that renegotiated to a lower
// speed, and leaves whose ECN profile is wrong. docs/SIMULATOR.md has the numbers.

// RoCE traffic runs lossless on priority 3, mapped to queue 3.
inline constexpr int kRocePriority = 3;

// --job=NAME:FIRST-LAST[:UTIL]: hosts FIRST..LAST (1-based, inclusive) run one job's
// collectives on all their NICs at UTIL of line rate, in lockstep.
struct SimJob {
  std::string name;
  int first_host = 1, last_host = 1;
  double util = 0.8;
};
absl::StatusOr<SimJob> ParseJob(absl::string_view spec);

// A link_degrade (sim/faults/link_degrade.cc): from `at` the NIC's link runs at `factor` x its
// speed.
struct NicDegrade {
  std::string host, device;
  absl::Duration at;
  double factor = 0.5;
  FaultTruth truth = {};  // its ground truth, from its kind (sim/fault_truth.h)
};

// An ecn_misconfig (sim/faults/ecn_misconfig.cc): from `at` that leaf's ECN marking threshold
// on the RoCE queue is `threshold_offset_kb` kilobytes too high. The leaf is leaf-r<rail>, or
// leaf-g<group>-r<rail> in a fabric of rail groups (--hosts_per_leaf).
struct EcnMisconfig {
  std::string switch_name;
  int rail = 0;
  absl::Duration at;
  double threshold_offset_kb = 3;
  int group = 0;          // after kb, so that {name, rail, at, kb} initialisers keep their meaning
  FaultTruth truth = {};  // its ground truth, from its kind (sim/fault_truth.h)
};
// leaf-r<rail> -> group 0, or leaf-g<group>-r<rail>; false for any other name.
bool ParseLeafName(absl::string_view name, int& group, int& rail);

// Checks the specs against a fabric of `hosts` x `nics_per_host`: jobs inside it, named once,
// no host in two jobs; degraded NICs and misconfigured leaves that exist.
absl::Status ValidateTrafficFaults(int hosts, int nics_per_host, const std::vector<SimJob>& jobs,
                                   const std::vector<NicDegrade>& degrades,
                                   const std::vector<EcnMisconfig>& misconfigs);

// The share of ECN marks a leaf still makes when its threshold is `offset_kb` too high: the
// queue under a collective's incast sits about kEcnQueueHeadroomKb above a correct threshold,
// so marking falls off as exp(-offset / headroom): 3 KB too high marks 0.25% of what it should.
inline constexpr double kEcnQueueHeadroomKb = 0.5;
double EcnMarkingShare(double offset_kb);

// Without the marks, DCQCN does not slow the senders; the queues fill to XOFF and PFC holds the
// traffic instead, which costs throughput: a job whose leaf marks nothing runs at 60%.
inline constexpr double kUnmarkedThroughput = 0.6;
double ThroughputUnderMarking(double marking_share);

// Healthy marking: about 20 ECN marks per GB a leaf sends a NIC on the RoCE queue, and the
// receiving NIC answers 80% of its marked packets with a CNP (one CNP per QP per interval).
inline constexpr double kEcnMarksPerGb = 20;
inline constexpr double kCnpsPerMark = 0.8;

// What a leaf's ports send in PFC pauses per second when its queues fill to XOFF for lack of
// marks, at full unmarked congestion and a load of at least kCongestedLoad of line rate;
// proportionally less below it.
inline constexpr double kCongestionPauseRate = 800;
inline constexpr double kCongestedLoad = 0.5;
double CongestionPauseRate(double marking_share, double load);

// The host side's own figures (docs/SIMULATOR.md, "Hosts, jobs and traffic").
// FEC corrections follow each link's pre-FEC BER (sim/nic_optics.h): a healthy link's is drawn
// between 3.75e-8 and 1.5e-7 (1.5e4-6e4 corrected bits a second at 400G); --ber sets 5e-5 at
// its default 120 symbol errors a minute (2e7 bits a second), in proportion to its rate.
// How long one pause holds the priority, on average (µs): a benign or congestion pause lasts
// until the queue drains below XON; a relayed one is a full quantum (65535 x 512 bit times at
// 400G = 84 µs).
inline constexpr double kBenignPauseMicros = 6;
inline constexpr double kCongestionPauseMicros = 25;
inline constexpr double kQuantumPauseMicros = 84;
// A leaf port whose queue is deadlocked keeps its NIC paused: it refreshes XOFF every quantum,
// 1e6 / 84 ≈ 12,000 pauses/s, and the NIC is paused (nearly) all the time.
inline constexpr double kDeadlockPauseRate = 12000;
// ... and the NIC, whose own receive buffer backs up behind it (the cycle holds both ends),
// pauses the port ~50 times a second: above the benign rate, far below a storm's.
inline constexpr double kDeadlockNicPauseRate = 50;
// What still moves on a stalled job's NICs (keepalives, a share of line rate): 50 KB/s at
// 400G, far under the 1 MB/s that rules/pfc-deadlock.yaml allows a stuck priority to leak.
inline constexpr double kStalledUtil = 1e-6;
// Kernel-stack traffic (TCP, LLDP) on priority 0 of every NIC, bytes/s each way.
inline constexpr double kTcpBytesPerSecond = 1.5e6;
// --bursty: a job's rate jumps by 10-25% for 0.3-1.5 s, about every 15 s; a NIC gets a burst
// of 20-150 benign pauses in one tick about every 30 s.
inline constexpr double kJobBurstsPerSecond = 1.0 / 15;
inline constexpr double kPauseBurstsPerSecond = 1.0 / 30;

// The sysfs `rate` text of a port running at `gbps` over 4 lanes, as the kernel prints it
// ("400 Gb/sec (4X NDR)", "200 Gb/sec (4X HDR)"; "300 Gb/sec (4X)" for a lane speed the IB
// names do not cover).
std::string RateText(double gbps);

// An integer count of events for an expected number: Poisson for sparse ones (benign pauses,
// ECN marks), the mean with a random rounding for dense ones (a storm).
uint64_t DrawCount(std::mt19937_64& rng, double expected);

}  // namespace railwatch::sim
