#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "sim/fault_specs.h"
#include "sim/switch_phy.h"
#include "sim/sysfs_fabric.h"

namespace railwatch::sim {

// The network OS a simulated switch pretends to run; its name is also the gNMI path profile's
// (profiles/gnmi/<name>.yaml) and the `profile:` of the targets file.
enum class Dialect { kOpenConfig, kSonic, kAristaEos, kCumulus };
absl::StatusOr<Dialect> ParseDialect(absl::string_view name);
std::string_view DialectName(Dialect d);

inline constexpr int kPriorities = 8;
inline constexpr int kQueues = 8;
// The lossless queues the PFC watchdog watches (as SONiC's default PFC-WD config does).
inline constexpr std::array<int, 2> kWatchdogQueues = {3, 4};

struct PortCounters {
  uint64_t in_octets = 0, out_octets = 0, in_ucast_pkts = 0, out_ucast_pkts = 0;
  uint64_t in_multicast_pkts = 0, out_multicast_pkts = 0, in_broadcast_pkts = 0,
           out_broadcast_pkts = 0;
  uint64_t in_discards = 0, out_discards = 0, in_errors = 0, out_errors = 0;
  uint64_t in_crc_errors = 0;  // frames that failed their FCS (counted in in_errors too)
  uint64_t carrier_transitions = 0;
  std::array<uint64_t, kPriorities> in_pfc{}, out_pfc{};  // PFC frames received / sent
  std::array<uint64_t, kQueues> queue_pkts{}, queue_octets{}, queue_dropped{}, queue_ecn_marked{};
  // PFC watchdog per queue: storms detected (SONiC DEADLOCK_DETECTED, Arista stuck-count),
  // restorations (DEADLOCK_RESTORED, recovery-count), and whether the queue is stormed now.
  std::array<uint64_t, kQueues> wd_detected{}, wd_restored{};
  std::array<bool, kQueues> wd_stormed{};
  // FEC at the PHY (sim/switch_phy.h): codewords corrected and lost, symbols in error, bits
  // corrected, and codewords by their symbol errors. Uncorrectable codewords also count as
  // received errors (their frames fail the FCS).
  uint64_t fec_corrected = 0, fec_uncorrectable = 0, fec_symbol_errors = 0,
           fec_corrected_bits = 0;
  std::array<uint64_t, kFecBins> fec_codewords{};
};

struct SwitchPort {
  std::string name;  // as the dialect names it: Ethernet8 (SONiC), Ethernet3 (EOS), swp3
  // The cabling plan: a host's NIC (peer = host, peer_port = netdev, peer_device = mlx5_k) or
  // another switch (peer = switch, peer_port = its port).
  std::string peer, peer_port, peer_device;
  bool uplink = false;
  // On a switch-to-switch link: the far end's switch and port indices (-1 on host ports).
  int peer_switch = -1, peer_port_index = -1;
  // What LLDP reports on this port; differs from the plan on a miswired port.
  std::string lldp_system_name, lldp_port_id, lldp_chassis_id;
  // The port's own identity: its MAC and speed (Gb/s), as ethernet/state reports them.
  std::string mac;
  double speed_gbps = 0;
  // Mutable state, guarded by the fabric's lock.
  bool up = true;
  // Egress queues that send nothing (a PFC deadlock holds them paused).
  std::array<bool, kQueues> queue_stuck{};
  PortCounters c;
  // The module in the port and its readings (sim/switch_phy.h). Faults set
  // optics.module.{rx_loss_db, temperature_rise_c, pre_fec_ber, no_light} under the fabric's
  // lock (in SwitchFabric::Update, before AdvancePhy); the readings and FEC follow.
  SwitchPortOptics optics;
};

struct SimSwitch {
  std::string name;  // leaf-r<rail> (leaf-g<group>-r<rail> in rail groups), spine-<n>
  std::string role;  // leaf, spine
  Dialect dialect = Dialect::kOpenConfig;
  int rail = -1;   // leaves only
  int group = -1;  // leaves only: the rail group (0 without --hosts_per_leaf)
  std::vector<SwitchPort> ports;
  // Bumped (under the fabric's lock) when any counter moved, and when a port's state (up or
  // down) changed: ON_CHANGE subscriptions look again only then.
  uint64_t counters_version = 0, state_version = 0;
};

// A PFC storm: the NIC sends pause frames on priority 3 without end, from `at` for `duration`
// (0: to the end).
struct PfcStorm {
  std::string host, device;
  absl::Duration at;
  absl::Duration duration = absl::Seconds(30);
  FaultTruth truth = {};  // its ground truth, from its kind (sim/fault_truth.h)
};

// --lldp_miswire=SWITCH/PORT: that port's LLDP neighbour is another host than the plan says.
struct LldpMiswire {
  std::string switch_name, port;
};
absl::StatusOr<LldpMiswire> ParseLldpMiswire(absl::string_view spec);

// Port names per dialect for panel position `index` (0-based).
std::string SwitchPortName(Dialect d, int index);

// The switches of a rail-optimised fabric: one leaf per rail (NIC k of every host plugs into
// leaf-r<k>, host i (1-based) on panel position i-1), or, with hosts_per_leaf N, rail groups
// of N hosts (host i in group g = (i-1)/N plugs NIC k into leaf-g<g>-r<k>, panel position
// (i-1)%N); optional spines (leaf uplink s, at panel position N+s (hosts+s without groups),
// goes to spine-<s> at the position of the leaf's index, leaves counted group by group). Switch
// counters follow the NICs' traffic (SysfsFabric::ReadTraffic: bytes, packets, priority, link
// state, a NIC gone, corrupted frames), flaps (oper-status, carrier transitions), ECN marking,
// benign PFC pauses, and the injected PFC storms and ECN misconfigurations. Thread-safe: the
// simulator's tick updates it while the gNMI servers read it.
class SwitchFabric {
 public:
  struct Options {
    int hosts = 4;
    int nics_per_host = 8;
    // 0: one leaf per rail for all hosts; N: rail groups of N hosts.
    int hosts_per_leaf = 0;
    int spines = 0;
    // Entries "dialect" are assigned round-robin (leaves, then spines); "switch=dialect" names
    // one switch's. Empty: sonic, arista-eos, openconfig, cumulus round-robin.
    std::vector<std::string> dialects;
    std::vector<PfcStorm> storms;
    std::vector<PfcDeadlock> deadlocks;
    std::vector<LldpMiswire> miswires;
    // Leaves whose ECN threshold is too high: they mark (almost) nothing and send PFC pauses
    // instead (the NIC side is SysfsFabric's; its ground truth too).
    std::vector<EcnMisconfig> ecn_misconfigs;
    double link_gbps = 400;
    // An InfiniBand fabric (railwatch-sim --fabric=ib, sim/ib_switches.h): ports are numbered
    // from 1 ("1", "2", ...), and the switches speak no gNMI and send no pause frames.
    bool infiniband = false;
    uint64_t seed = 1;
    std::string ground_truth_file;
    // Benign pause frames per second per port on priority 3, and a storm's rates.
    double benign_pause_rate = 2;
    double storm_pause_rate = 20000;
    double relay_pause_rate = 3000;
    // The spines, paused by the storm's leaf, relay on to every other leaf's uplink at this
    // rate, from this long after the storm starts (their buffers toward the leaf fill first).
    double spine_relay_pause_rate = 1500;
    absl::Duration spine_relay_delay = absl::Seconds(1);
    // A deadlocked link, on priority 3: the leaf port holds its NIC in XOFF, refreshing the
    // pause every quantum (65535 x 512 bit times at 400G = 84 µs: about 12,000/s, as the NIC
    // side counts it); the NIC holds the port's queue with fewer, longer pauses.
    double deadlock_pause_rate = 12000;
    double deadlock_nic_pause_rate = 50;
  };

  static absl::StatusOr<std::unique_ptr<SwitchFabric>> Create(Options options, absl::Time start);

  // Moves the counters to `now`: NIC traffic mirrored on leaf ports, uplinks carry a share,
  // faults applied. `nics` as SysfsFabric::ReadTraffic gives it.
  absl::Status Update(absl::Time now, const std::vector<NicTraffic>& nics);

  // The topology (names, dialects, ports and peers) never changes after Create and may be read
  // without the lock; counters, `up` and the rest must be read through WithSwitch.
  const std::vector<SimSwitch>& switches() const { return switches_; }
  // Leaves come first in switches(), group by group, rail by rail; then the spines.
  int leaves() const { return leaves_; }
  void WithSwitch(int index, const std::function<void(const SimSwitch&)>& fn) const;
  // Where NIC `device` of `host` plugs in: switch index and port index, or -1s.
  std::pair<int, int> LeafPortOf(std::string_view host, std::string_view device) const;

 private:
  SwitchFabric(Options options, absl::Time start);
  absl::Status Build();
  absl::Status BuildPorts(const std::vector<std::string>& leaf_names);
  absl::Status AssignDialects(const std::vector<std::string>& names);
  absl::Status ApplyMiswires();
  // sim/switch_phy.cc: a module in every Ethernet port; once a simulated second its FEC
  // counters, every other second its readings.
  void InitOptics();
  void AdvancePhy(double dt) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A storm's or deadlock's progress: 0 pending, 1 active, 2 over; when the PFC watchdog
  // next detects it.
  struct FaultState {
    int phase = 0;
    absl::Time began = absl::InfiniteFuture();
    absl::Time next_detect = absl::InfinitePast();
  };
  // sim/switch_faults.cc: the PFC storms and deadlocks on leaf ports.
  void ApplyStorms(absl::Time now, double dt) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ApplyDeadlocks(absl::Time now, double dt) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SpreadThroughSpines(int leaf, double dt) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // ECN marking share of each leaf at `now` (1: healthy).
  std::vector<double> LeafMarking(absl::Time now) const;

  Options options_;
  int hosts_per_leaf_ = 0;  // effective: options_.hosts without groups
  int leaves_ = 0;
  // Where each NIC plugs in (switch, port), by (host - 1) * nics_per_host + nic.
  std::vector<std::pair<int, int>> nic_port_;
  std::vector<int> misconfig_leaf_;  // options_.ecn_misconfigs' leaf indices
  absl::Time start_, last_;
  mutable absl::Mutex mu_;
  std::vector<SimSwitch> switches_;  // structure fixed; counters ABSL_GUARDED_BY(mu_)
  std::mt19937_64 rng_ ABSL_GUARDED_BY(mu_);
  // Each NIC's counters at the last Update, for deltas (a NIC's counters may restart from 0).
  struct NicSeen {
    uint64_t tx_bytes = 0, rx_bytes = 0, tx_packets = 0, rx_packets = 0, ecn_marked = 0,
             corrupted = 0;
    bool gone = false;  // once gone, its port stays down
  };
  std::vector<NicSeen> nic_seen_ ABSL_GUARDED_BY(mu_);
  // Bytes each leaf received from (in) and sent to (out) its NICs this tick, on the RoCE
  // queue [0] and on queue 0 [1] (NICs whose QoS is lost).
  struct LeafTraffic {
    std::array<uint64_t, 2> in{}, out{};
  };
  std::vector<LeafTraffic> leaf_traffic_ ABSL_GUARDED_BY(mu_);
  std::vector<FaultState> storm_state_ ABSL_GUARDED_BY(mu_);
  std::vector<FaultState> deadlock_state_ ABSL_GUARDED_BY(mu_);
  // The PHY's own random stream (the modules' draws and noise, FEC), apart from rng_ so that
  // the traffic's draws stay what they were; seconds since the PHY last advanced.
  std::mt19937_64 phy_rng_ ABSL_GUARDED_BY(mu_);
  double phy_pending_s_ ABSL_GUARDED_BY(mu_) = 0;
  // PHY steps taken, and seconds since the modules' readings were last refreshed.
  uint64_t phy_steps_ ABSL_GUARDED_BY(mu_) = 0;
  double reading_s_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace railwatch::sim
