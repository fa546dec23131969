#pragma once

// The faults and noise of the scenario suite (docs/SCENARIOS.md) that the simulator injects,
// beyond those of sysfs_fabric.h (LinkFlap), traffic_model.h (SimJob, NicDegrade,
// EcnMisconfig) and switch_model.h (PfcStorm, LldpMiswire): what the models are handed. Each
// fault's flag and its parser are its kind's (sim/faults/<kind>.cc); the driver reload's, noise,
// are the scenario's (sim/scenario.h).

#include <string>

#include "absl/time/time.h"

namespace railwatch::sim {

// --pfc_deadlock=HOST/DEVICE@OFFSET[:DURATION]: the leaf port facing that NIC has its lossless
// queue (3) stuck: paused without end, packets queued, nothing sent; the PFC watchdog reports it
// stormed; the NIC's traffic stops and its job stalls. DURATION 0 (default): until the end.
struct PfcDeadlock {
  std::string host, device;
  absl::Duration at;
  absl::Duration duration = absl::ZeroDuration();
};

// --flap_repeat=HOST/DEVICE/PORT@OFFSET:COUNT:PERIOD: COUNT flaps of that port, one every
// PERIOD from OFFSET, each down for --flap_down_for. One ground-truth line per flap.
struct RepeatedFlap {
  std::string host, device;
  int port = 1;
  absl::Duration at;
  int count = 3;
  absl::Duration period = absl::Seconds(5);
};

// --ber=HOST/DEVICE@OFFSET[:PER_MINUTE]: the link stays up but corrupts bits: symbol errors
// at PER_MINUTE (default 120) rising, occasional link error recoveries, ethtool CRC/FEC
// errors, and on the leaf port facing it interface in-errors.
struct BitErrors {
  std::string host, device;
  absl::Duration at;
  double per_minute = 120;
};

// --straggler=HOST/DEVICE@OFFSET[:FACTOR]: the NIC moves FACTOR (default 0.5) of what its rail
// peers in the job move (a PCIe or NUMA problem), with its link rate unchanged.
struct Straggler {
  std::string host, device;
  absl::Duration at;
  double factor = 0.5;
};

// --wrong_priority=HOST@OFFSET: from OFFSET the host's RoCE traffic leaves on priority 0
// (QoS lost on reboot): ethtool per-priority bytes move on 0, not 3; its leaf ports count it in
// queue 0.
struct WrongPriority {
  std::string host;
  absl::Duration at;
};

// --nic_gone=HOST/DEVICE@OFFSET: the device leaves sysfs (and its netdev's ethtool dump goes);
// the leaf port facing it goes down for good.
struct NicGone {
  std::string host, device;
  absl::Duration at;
};

// --packet_loss=HOST/DEVICE@OFFSET[:PER_SECOND]: the path through that NIC loses packets: its
// out_of_sequence, packet_seq_err, local_ack_timeout_err and roce_adp_retrans counters rise
// (PER_SECOND out-of-sequence packets, default 500).
struct PacketLoss {
  std::string host, device;
  absl::Duration at;
  double per_second = 500;
};

// --nccl_error=HOST@OFFSET[:KIND]: the rank(s) of the job on HOST fail on their own (no fabric
// cause): KIND timeout (PyTorch watchdog timeout, default) or ib_completion (NCCL IB completion
// error, status 12).
struct NcclError {
  std::string host;
  absl::Duration at;
  std::string kind = "timeout";
};

// Noise, not a fault: --driver_reload=HOST/DEVICE@OFFSET: the driver reloads; the device's
// counters restart from 0 (the netdev's ethtool counters too). Nothing should fire.
struct DriverReload {
  std::string host, device;
  absl::Duration at;
};

}  // namespace railwatch::sim
