#pragma once

// One simulated NIC port (internal to the simulator's host side): its sysfs counters and
// files, its netdev's carrier files and ethtool statistics, and the state that faults set on it.

#include <array>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "sim/ethtool_writer.h"
#include "sim/nic_optics.h"
#include "sim/sysfs_fabric.h"
#include "sim/traffic_model.h"

namespace railwatch::sim {

// The counters a ConnectX-7 in RoCE mode shows under ports/1/, in kSysfsCounterNames' order.
enum SysfsCounter : int {
  kPortXmitData,
  kPortRcvData,
  kPortXmitPackets,
  kPortRcvPackets,
  kUnicastXmitPackets,
  kUnicastRcvPackets,
  kMulticastXmitPackets,
  kMulticastRcvPackets,
  kLinkDowned,
  kLinkErrorRecovery,
  kSymbolError,
  kPortRcvErrors,
  kPortRcvRemotePhysicalErrors,
  kPortRcvSwitchRelayErrors,
  kPortXmitDiscards,
  kPortXmitConstraintErrors,
  kPortRcvConstraintErrors,
  kPortXmitWait,
  kLocalLinkIntegrityErrors,
  kExcessiveBufferOverrunErrors,
  kVl15Dropped,
  kOutOfSequence,
  kPacketSeqErr,
  kLocalAckTimeoutErr,
  kOutOfBuffer,
  kNpEcnMarkedRocePackets,
  kNpCnpSent,
  kRpCnpHandled,
  kRpCnpIgnored,
  kRoceAdpRetrans,
  kRoceAdpRetransTo,
  kRxWriteRequests,
  kRxReadRequests,
  kDuplicateRequest,
  kRxAtomicRequests,
  kRxDctConnect,
  kRnrNakRetryErr,
  kImpliedNakSeqErr,
  kRespLocalLengthError,
  kRespCqeError,
  kReqCqeError,
  kReqRemoteInvalidRequest,
  kReqRemoteAccessErrors,
  kRespRemoteAccessErrors,
  kRespCqeFlushError,
  kReqCqeFlushError,
  kRoceSlowRestart,
  kRoceSlowRestartCnps,
  kRoceSlowRestartTrans,
  kRxIcrcEncapsulated,
  kReqTransportRetriesExceeded,
  kReqRnrRetriesExceeded,
  kSysfsCounterCount
};
// "counters/port_xmit_data" ... relative to ports/<n>/.
extern const std::array<const char*, kSysfsCounterCount> kSysfsCounterNames;
// The data counters, written every tick: rates over a few seconds (straggler_rail's 5 s) need
// them fresh. The others are written at most every SysfsFabric::Options::cold_flush_interval,
// or at once when a fault moves them (a flap's link_downed).
inline bool IsHotCounter(int c) { return c == kPortXmitData || c == kPortRcvData; }
inline constexpr int kHotCounters = 2;
// The other counters that traffic moves every second: kept open too while descriptors last
// (writing one that is not kept open costs an open and a close besides the write).
inline bool IsBusyCounter(int c) {
  switch (c) {
    case kPortXmitPackets:
    case kPortRcvPackets:
    case kUnicastXmitPackets:
    case kUnicastRcvPackets:
    case kMulticastRcvPackets:
    case kRxWriteRequests:
    case kNpEcnMarkedRocePackets:
    case kNpCnpSent:
    case kRpCnpHandled:
      return true;
    default:
      return false;
  }
}
inline constexpr int kBusyCounters = 9;

struct NicPort {
  int host = 0;  // 1-based
  int nic = 0;   // mlx5_<nic>, rail <nic>
  int leaf = 0;  // index of the leaf it plugs into: group * nics + rail
  std::string host_name, device, netdev;

  std::array<uint64_t, kSysfsCounterCount> counters{};
  std::array<uint64_t, kSysfsCounterCount> written{};
  std::array<std::unique_ptr<SimFile>, kSysfsCounterCount> files;
  std::unique_ptr<SimFile> state, phys_state, rate;
  // The netdev's carrier (class/net/<netdev>/carrier, carrier_changes, ...).
  std::unique_ptr<SimFile> carrier, operstate, carrier_changes, carrier_up, carrier_down, speed;
  uint64_t carrier_up_count = 1, carrier_down_count = 0;

  EthtoolCounters eth;
  std::unique_ptr<EthtoolDump> ethtool;  // null with --ethtool=false or once the NIC is gone
  bool eth_dirty = false;

  // State that traffic and faults set.
  bool up = true;
  bool gone = false;
  double link_gbps = 400;               // its full speed
  double speed_factor = 1;              // a degraded link: renegotiated to this share of its speed
  double straggler_factor = 1;          // a straggler: moves this share of its peers' traffic
  int priority = kRocePriority;         // 0 when its host lost its QoS
  double symbol_errors_per_s = 0;       // bit errors
  double out_of_sequence_per_s = 0;     // packet loss
  bool deadlocked = false;              // its leaf port's queue 3 is stuck (a PFC deadlock)
  bool storming = false;                // it sends pauses without end (a PFC storm)
  NicOptics optics;                     // its module, and its PHY's pre-FEC BER
  bool optics_written = false;          // its module's fixed pages are in place
  // FEC codewords corrected, and lost (uncorrectable), as the kernel's FEC statistics count.
  uint64_t fec_corrected_blocks = 0, fec_uncorrectable_blocks = 0;
  uint64_t corrupted_packets = 0;       // on the way to its leaf (the leaf's in-errors)
  double util = 0;                      // share of line rate it moved in the last tick

  uint64_t& operator[](SysfsCounter c) { return counters[c]; }
  uint64_t operator[](SysfsCounter c) const { return counters[c]; }

  // Writes the hot counters that changed since the last flush, and the others too when `cold`
  // or when an event made them urgent.
  absl::Status Flush(bool cold);
  bool urgent = false;
  // Port state files, netdev carrier files and counters of a link going down or up.
  absl::Status SetUp(bool is_up);
  // class/net/<netdev>/speed as it reads now, and writing it (after a change of speed).
  std::string SpeedText() const;
  absl::Status WriteSpeed();
  // A driver reload: every sysfs and ethtool counter restarts from 0.
  void ResetCounters();
  // The device left the host: its files read empty (a reader that still holds them open gets
  // no value), nothing is written any more.
  absl::Status Vanish();
};

}  // namespace railwatch::sim
