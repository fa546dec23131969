#include "sim/host_flags.h"

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "sim/scenario.h"

ABSL_DECLARE_FLAG(double, benign_pause_rate);

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
ABSL_FLAG(bool, nccl_inspector, true,
          "write the jobs' NCCL Inspector records, one JSONL file per rank "
          "(<root>/<host>/nccl/inspector/<host>-pid<pid>.log); needs --nccl_logs");
ABSL_FLAG(bool, nccl_ras, true,
          "serve each job's NCCL RAS endpoint, one listener per host on 127.0.0.1 (its port in "
          "<root>/<host>/nccl/ras_port); needs --nccl_inspector");

namespace railwatch::sim {

const std::vector<std::string>& HostListFlags() {
  static const std::vector<std::string> names = {"driver_reload"};
  return names;
}

absl::Status ParseHostFlags(SysfsFabric::Options& o) {
  for (const std::string& spec : absl::GetFlag(FLAGS_driver_reload)) {
    absl::StatusOr<DriverReload> reload = ParseDriverReload(spec);
    if (!reload.ok()) return reload.status();
    o.driver_reloads.push_back(*reload);
  }
  o.benign_pause_rate = absl::GetFlag(FLAGS_benign_pause_rate);
  o.bursty = absl::GetFlag(FLAGS_bursty);
  o.ethtool = absl::GetFlag(FLAGS_ethtool);
  o.ethtool_interval = absl::GetFlag(FLAGS_ethtool_interval);
  o.nccl_logs = absl::GetFlag(FLAGS_nccl_logs);
  o.nccl_inspector = absl::GetFlag(FLAGS_nccl_inspector);
  o.nccl_ras = absl::GetFlag(FLAGS_nccl_ras);
  return absl::OkStatus();
}

}  // namespace railwatch::sim
