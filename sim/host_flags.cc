#include "sim/host_flags.h"

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "sim/fault_specs.h"
#include "sim/switch_model.h"

ABSL_DECLARE_FLAG(absl::Duration, flap_down_for);
ABSL_DECLARE_FLAG(std::vector<std::string>, pfc_storm);
ABSL_DECLARE_FLAG(absl::Duration, pfc_storm_for);
ABSL_DECLARE_FLAG(std::vector<std::string>, pfc_deadlock);
ABSL_DECLARE_FLAG(double, benign_pause_rate);

ABSL_FLAG(std::vector<std::string>, flap_repeat, {},
          "links that flap COUNT times, one every PERIOD, HOST/DEVICE/PORT@OFFSET:COUNT:PERIOD "
          "(e.g. gpu-node-002/mlx5_1/1@15s:5:7s), each down for --flap_down_for. Repeatable");
ABSL_FLAG(std::vector<std::string>, ber, {},
          "links with bit errors, HOST/DEVICE@OFFSET[:PER_MINUTE] (symbol errors a minute, "
          "default 120): symbol/CRC errors, FEC corrections, link error recoveries. Repeatable");
ABSL_FLAG(std::vector<std::string>, straggler, {},
          "NICs that move FACTOR of their rail peers' traffic, HOST/DEVICE@OFFSET[:FACTOR] "
          "(default 0.5; link rate unchanged). Repeatable");
ABSL_FLAG(std::vector<std::string>, wrong_priority, {},
          "hosts whose RoCE traffic leaves on priority 0 instead of 3, HOST@OFFSET. Repeatable");
ABSL_FLAG(std::vector<std::string>, nic_gone, {},
          "NICs that leave their host (sysfs device, netdev and ethtool dump removed), "
          "HOST/DEVICE@OFFSET. Repeatable");
ABSL_FLAG(std::vector<std::string>, packet_loss, {},
          "NICs whose path loses packets, HOST/DEVICE@OFFSET[:PER_SECOND] (out-of-sequence "
          "packets a second, default 500; NAKs, ACK timeouts, retransmissions with them). "
          "Repeatable");
ABSL_FLAG(std::vector<std::string>, nccl_error, {},
          "NCCL failures of a host's ranks with no fabric cause, HOST@OFFSET[:KIND], KIND "
          "timeout (PyTorch watchdog, default) or ib_completion (status 12). Repeatable");
ABSL_FLAG(std::vector<std::string>, driver_reload, {},
          "noise: driver reloads, HOST/DEVICE@OFFSET: the NIC's sysfs and ethtool counters "
          "restart from 0. Repeatable");
ABSL_FLAG(bool, bursty, true,
          "noise: jobs' rates burst 10-25% for a second now and then, NICs get bursts of benign "
          "pauses");
ABSL_FLAG(bool, ethtool, true,
          "write each NIC's netdev (class/net/<netdev>) and its `ethtool -S` dump "
          "(<root>/<host>/ethtool/<netdev>/stats, driver)");
ABSL_FLAG(absl::Duration, ethtool_interval, absl::Milliseconds(500),
          "rewrite the ethtool dumps at most this often");
ABSL_FLAG(bool, nccl_logs, true,
          "write each job's NCCL/PyTorch log on its hosts (<root>/<host>/nccl/<job>.log): init "
          "lines, then the errors of --nccl_error and of faults that hurt ranks");

namespace railwatch::sim {
namespace {

// Parses every value of a list flag with `parse` into `out`.
template <typename T, typename Parse>
absl::Status ParseAll(const std::vector<std::string>& specs, Parse parse, std::vector<T>& out) {
  for (const std::string& spec : specs) {
    absl::StatusOr<T> v = parse(spec);
    if (!v.ok()) return v.status();
    out.push_back(*std::move(v));
  }
  return absl::OkStatus();
}

}  // namespace

const std::vector<std::string>& HostListFlags() {
  static const std::vector<std::string> names = {
      "flap_repeat", "ber", "straggler", "wrong_priority", "nic_gone", "packet_loss",
      "nccl_error", "driver_reload"};
  return names;
}

absl::Status ParseHostFlags(SysfsFabric::Options& o) {
  std::vector<RepeatedFlap> repeats;
  std::vector<PfcStorm> storms;
  absl::Status s;
  s.Update(ParseAll(absl::GetFlag(FLAGS_flap_repeat), ParseRepeatedFlap, repeats));
  s.Update(ParseAll(absl::GetFlag(FLAGS_pfc_storm), ParsePfcStorm, storms));
  s.Update(ParseAll(absl::GetFlag(FLAGS_pfc_deadlock), ParsePfcDeadlock, o.deadlocks));
  s.Update(ParseAll(absl::GetFlag(FLAGS_ber), ParseBitErrors, o.bit_errors));
  s.Update(ParseAll(absl::GetFlag(FLAGS_straggler), ParseStraggler, o.stragglers));
  s.Update(ParseAll(absl::GetFlag(FLAGS_wrong_priority), ParseWrongPriority, o.wrong_priorities));
  s.Update(ParseAll(absl::GetFlag(FLAGS_nic_gone), ParseNicGone, o.nics_gone));
  s.Update(ParseAll(absl::GetFlag(FLAGS_packet_loss), ParsePacketLoss, o.packet_losses));
  s.Update(ParseAll(absl::GetFlag(FLAGS_nccl_error), ParseNcclError, o.nccl_errors));
  s.Update(ParseAll(absl::GetFlag(FLAGS_driver_reload), ParseDriverReload, o.driver_reloads));
  if (!s.ok()) return s;
  for (const RepeatedFlap& r : repeats) {
    for (LinkFlap& f : ExpandRepeatedFlap(r, absl::GetFlag(FLAGS_flap_down_for))) {
      o.flaps.push_back(std::move(f));
    }
  }
  for (const PfcStorm& storm : storms) {
    o.storms.push_back({storm.host, storm.device, storm.at, absl::GetFlag(FLAGS_pfc_storm_for)});
  }
  o.benign_pause_rate = absl::GetFlag(FLAGS_benign_pause_rate);
  o.bursty = absl::GetFlag(FLAGS_bursty);
  o.ethtool = absl::GetFlag(FLAGS_ethtool);
  o.ethtool_interval = absl::GetFlag(FLAGS_ethtool_interval);
  o.nccl_logs = absl::GetFlag(FLAGS_nccl_logs);
  return absl::OkStatus();
}

}  // namespace railwatch::sim
