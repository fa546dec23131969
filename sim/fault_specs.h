#pragma once

// The faults and noise of the scenario suite (docs/SCENARIOS.md) that the simulator injects,
// beyond those of sysfs_fabric.h (LinkFlap), traffic_model.h (SimJob, NicDegrade,
// EcnMisconfig) and switch_model.h (PfcStorm, LldpMiswire): what the models are handed. Each
// fault's flag and its parser are its kind's (sim/faults/<kind>.cc); the driver reload's, noise,
// are the scenario's (sim/scenario.h).

#include <string>

#include "absl/time/time.h"
#include "sim/fault_truth.h"

namespace railwatch::sim {

// A PFC deadlock: the leaf port facing that NIC has its lossless queue (3) stuck: paused
// without end, packets queued, nothing sent; the PFC watchdog reports it stormed; the NIC's
// traffic stops and its job stalls. `duration` 0: until the end.
struct PfcDeadlock {
  std::string host, device;
  absl::Duration at;
  absl::Duration duration = absl::ZeroDuration();
  FaultTruth truth = {};  // its ground truth, from its kind (sim/fault_truth.h)
};

// Repeated flaps: COUNT flaps of that port, one every
// PERIOD from OFFSET, each down for --flap_down_for. One ground-truth line per flap.
struct RepeatedFlap {
  std::string host, device;
  int port = 1;
  absl::Duration at;
  int count = 3;
  absl::Duration period = absl::Seconds(5);
};

// Bit errors: the link stays up but corrupts bits: symbol errors
// at PER_MINUTE (default 120) rising, occasional link error recoveries, ethtool CRC/FEC
// errors, and on the leaf port facing it interface in-errors.
struct BitErrors {
  std::string host, device;
  absl::Duration at;
  double per_minute = 120;
  FaultTruth truth = {};  // its ground truth, from its kind (sim/fault_truth.h)
};

// A link at risk (issue 24): from `at`, one quantity of a NIC's link drifts over `ramp` from its
// healthy value toward where the link fails, and at `at + fails_after` the link fails (goes
// down and stays down: no light, or the module shuts itself down). What drifts:
//   kBer          the PHY's pre-FEC bit error rate, log-linearly up to `to` (e.g. 1e-4); FEC
//                 corrects more and more bits until it cannot;
//   kRxPower      the fibre into the NIC's module loses `to` dB (a dirty or bent fibre, a
//                 failing patch panel), so the module receives less light on every lane;
//   kTemperature  the module heats up to `to` °C over its own high-temperature alarm.
// `fails_after` 0: the link never fails (the drift holds to the end).
struct LinkAtRisk {
  enum class What { kBer, kRxPower, kTemperature };
  What what = What::kBer;
  std::string host, device;
  absl::Duration at;
  absl::Duration ramp = absl::Minutes(3);
  absl::Duration fails_after = absl::Minutes(4);
  double to = 1e-4;
  FaultTruth truth = {};  // its ground truth, from its kind (sim/fault_truth.h)
};

// A NIC whose firmware stops answering (issue 24): from `at`, mlx5_core's health poll misses
// and it logs "device's health compromised" with the print_health_info block (a firmware
// internal error, its syndrome), `count` times, `period` apart (the driver recovers the NIC
// and it fails again). The link and the counters look fine: only the kernel says so.
struct NicHealth {
  std::string host, device;
  absl::Duration at;
  int count = 1;
  absl::Duration period = absl::Seconds(20);
  FaultTruth truth = {};  // its ground truth, from its kind (sim/fault_truth.h)
};

// Corrected PCIe errors on a NIC's PCIe link (issue 24): from `at`, the AER driver reports
// Receiver errors (RxErr, Physical Layer) on the NIC's function, PER_MINUTE a minute: a
// marginal riser, slot or card.
struct PcieAer {
  std::string host, device;
  absl::Duration at;
  double per_minute = 30;
  FaultTruth truth = {};  // its ground truth, from its kind (sim/fault_truth.h)
};

// A straggler: the NIC moves FACTOR (default 0.5) of what its rail
// peers in the job move (a PCIe or NUMA problem), with its link rate unchanged.
struct Straggler {
  std::string host, device;
  absl::Duration at;
  double factor = 0.5;
  FaultTruth truth = {};  // its ground truth, from its kind (sim/fault_truth.h)
};

// A slow rank: from `at`, the rank on the GPU that uses `device` (GPU k uses mlx5_k) of `host`
// computes `factor` longer than its peers before each collective (0.75: 75% longer; a GPU
// throttled by heat or power, a slow data loader): every peer waits for it in every collective,
// and the job's steps take longer. Its NIC and link are healthy.
struct SlowRank {
  std::string host, device;
  absl::Duration at;
  double factor = 0.75;
  FaultTruth truth = {};  // its ground truth, from its kind (sim/fault_truth.h)
};

// A hung rank: from `at`, the rank on the GPU that uses `device` of `host` launches no more
// collectives (a process stuck in a GPU fault, a deadlock in the training code). Its peers wait
// in the next one: the job stalls, NCCL RAS shows the rank one collective behind, and every rank's
// watchdog times out after the collective timeout.
struct RankHang {
  std::string host, device;
  absl::Duration at;
  FaultTruth truth = {};  // its ground truth, from its kind (sim/fault_truth.h)
};

// Wrong priority: from OFFSET the host's RoCE traffic leaves on priority 0
// (QoS lost on reboot): ethtool per-priority bytes move on 0, not 3; its leaf ports count it in
// queue 0.
struct WrongPriority {
  std::string host;
  absl::Duration at;
  FaultTruth truth = {};  // its ground truth, from its kind (sim/fault_truth.h)
};

// A NIC gone: the device leaves sysfs (and its netdev's ethtool dump goes);
// the leaf port facing it goes down for good.
struct NicGone {
  std::string host, device;
  absl::Duration at;
  FaultTruth truth = {};  // its ground truth, from its kind (sim/fault_truth.h)
};

// Packet loss: the path through that NIC loses packets: its
// out_of_sequence, packet_seq_err, local_ack_timeout_err and roce_adp_retrans counters rise
// (PER_SECOND out-of-sequence packets, default 500).
struct PacketLoss {
  std::string host, device;
  absl::Duration at;
  double per_second = 500;
  FaultTruth truth = {};  // its ground truth, from its kind (sim/fault_truth.h)
};

// An NCCL error: the rank(s) of the job on HOST fail on their own (no fabric
// cause): KIND timeout (PyTorch watchdog timeout, default) or ib_completion (NCCL IB completion
// error, status 12).
struct NcclError {
  std::string host;
  absl::Duration at;
  std::string kind = "timeout";
  FaultTruth truth = {};  // its ground truth, from its kind (sim/fault_truth.h)
};

// Noise, not a fault: --driver_reload=HOST/DEVICE@OFFSET: the driver reloads; the device's
// counters restart from 0 (the netdev's ethtool counters too). Nothing should fire.
struct DriverReload {
  std::string host, device;
  absl::Duration at;
};

}  // namespace railwatch::sim
