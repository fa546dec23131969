#pragma once

// The simulator's InfiniBand switches (railwatch-sim --fabric=ib, docs/SIMULATOR.md
// "InfiniBand"). The switch fabric (sim/switch_model.h, built with `infiniband`) gives the
// cabling and mirrors the HCAs' traffic on the leaf ports; this model adds what an IB switch
// port's PMA counts and the subnet manager sees: credit waits (PortXmitWait), symbol errors,
// link error recoveries, link downs, transmit discards, each link's width and speed, and the
// IB faults. It writes the whole subnet as ibdiagnet does, `ibdiagnet2.db_csv` (NODES, PORTS,
// LINKS, PM_INFO, TEMP_SENSING), into a directory every `write_interval` (written to a dot-file
// and renamed), where the fabric scanner (railwatch-agent --role=ib-fabric
// --ib_source=tools:DIR) reads it as it reads a site's cron output.
//
// Congestion is credit-based: a receiver that does not drain stops granting credits, the leaf
// port toward it waits, the spine ports toward that leaf wait for the leaf's full ingress, and
// the other leaves' uplinks wait for the spines': waits spread upstream, each hop a little
// less, and no pause frame is sent.

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "sim/fault_truth.h"
#include "sim/switch_model.h"

namespace railwatch::sim {

// An HCA that stops draining what it receives (a host stuck in PCIe or memory, a hung
// consumer with its receive queue full): from `at` for `duration` (0: to the end).
struct IbSlowReceiver {
  std::string host, device;
  absl::Duration at = absl::ZeroDuration();
  absl::Duration duration = absl::ZeroDuration();
  FaultTruth truth = {};
};

// A fault on one switch port (`port` numbered from 1).
struct IbPortFault {
  enum class Type {
    kBadCable,      // symbol errors at `per_minute` (link error recoveries, receive errors)
    kWidthDegrade,  // the link (both ends) trains at `width` lanes instead of 4
    kFlap,          // the link (both ends) goes down for `down_for`: LinkDownedCounter + 1
    kDiscards,      // PortXmitDiscards at `per_minute`
  };
  Type type = Type::kBadCable;
  std::string switch_name;
  int port = 1;
  absl::Duration at = absl::ZeroDuration();
  double per_minute = 120;
  int width = 1;
  absl::Duration down_for = absl::Milliseconds(300);
  FaultTruth truth = {};
};

class IbSwitchModel {
 public:
  struct Options {
    std::string dir;  // where ibdiagnet2.db_csv goes
    absl::Duration write_interval = absl::Seconds(1);
    double link_gbps = 400;
    uint64_t seed = 1;
    std::string ground_truth_file;
    std::vector<IbSlowReceiver> slow_receivers;
    std::vector<IbPortFault> port_faults;
    // Credit waits, ticks per second: a busy balanced fabric's bursts (noise, per port, at
    // most this), the port in front of a receiver that does not drain, the spine ports toward
    // its leaf, and the other leaves' uplinks behind the spines.
    double benign_wait_rate = 30000;
    double root_wait_rate = 3e7;
    double spine_wait_rate = 1e7;
    double uplink_wait_rate = 4e6;
  };

  // Checks every fault's switch, port and NIC against the fabric, and makes `dir`.
  static absl::StatusOr<std::unique_ptr<IbSwitchModel>> Create(Options options,
                                                              const SwitchFabric& fabric,
                                                              absl::Time start);

  // Moves the counters to `now` (after the switch fabric's Update: its leaf ports carry the
  // HCAs' traffic and link state) and writes the file when `write_interval` has passed.
  absl::Status Update(absl::Time now);

  // The subnet now, as ibdiagnet2.db_csv.
  std::string RenderDbCsv() const;
  std::string DbCsvPath() const;

  // GUIDs: switch `index` (in SwitchFabric::switches() order), and an HCA (its sysfs
  // node_guid, b83f:d203:00HH:NNNN; the port GUID is the same).
  static uint64_t SwitchGuid(int index);
  static uint64_t HcaGuid(int host, int nic);

 private:
  struct PortState {
    // What the switch fabric says (its mirrored traffic, a NIC's link state).
    uint64_t xmit_bytes = 0, rcv_bytes = 0, xmit_pkts = 0, rcv_pkts = 0;
    uint64_t fabric_downs = 0;
    bool fabric_up = true;
    // The PMA's own counts.
    double xmit_wait = 0, symbol_errors = 0, link_error_recovery = 0, rcv_errors = 0,
           xmit_discards = 0;
    uint64_t own_downs = 0;  // downs of IB flap faults
    bool own_down = false;
    int width = 4;
    bool up() const { return fabric_up && !own_down; }
  };
  struct FaultProgress {
    bool started = false, ended = false;
  };

  IbSwitchModel(Options options, const SwitchFabric& fabric, absl::Time start);
  absl::Status Validate();
  PortState& At(int sw, int port) { return ports_[sw][port]; }
  absl::Status ApplyFaults(absl::Time now, double dt);
  absl::Status WriteFile();

  Options options_;
  const SwitchFabric& fabric_;
  absl::Time start_, last_, last_write_;
  std::mt19937_64 rng_;
  std::vector<std::vector<PortState>> ports_;  // [switch][port index]
  // Resolved targets: switch and port index of each port fault, leaf and port of each slow
  // receiver.
  std::vector<std::pair<int, int>> port_fault_at_, receiver_at_;
  std::vector<FaultProgress> port_progress_, receiver_progress_;
  double temperature_phase_ = 0;
};

}  // namespace railwatch::sim
