// railwatch-sim: a simulated fabric for the demo, tests and benchmarks.
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "common/logging.h"
#include "common/signals.h"
#include "sim/sysfs_fabric.h"

ABSL_FLAG(std::string, root, "", "directory for the per-host sysfs trees (<root>/<host>/class/...)");
ABSL_FLAG(int, hosts, 4, "simulated hosts");
ABSL_FLAG(int, nics, 8, "RDMA NICs per host");
ABSL_FLAG(absl::Duration, tick, absl::Milliseconds(100), "how often counters move");
ABSL_FLAG(absl::Duration, duration, absl::ZeroDuration(), "stop after this long (0: run until signalled)");
ABSL_FLAG(std::vector<std::string>, flap, {},
          "link flaps to inject, HOST/DEVICE/PORT@OFFSET (comma-separated), e.g. gpu-node-003/mlx5_5/1@8s");
ABSL_FLAG(absl::Duration, flap_down_for, absl::Milliseconds(300), "how long a flapped link stays down");
ABSL_FLAG(std::string, ground_truth, "", "append one JSON line per injected fault to this file");
ABSL_FLAG(uint64_t, seed, 1, "random seed (same seed, same traffic)");
ABSL_FLAG(double, link_gbps, 400, "NIC speed");
ABSL_FLAG(std::string, log_level, "info", "trace, debug, info, warn or error");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "railwatch simulator: writes sysfs trees for simulated GPU hosts whose RDMA counters move\n"
      "with a training job's traffic, and injects faults at chosen times.\n"
      "Usage: railwatch-sim --root=DIR [--hosts=4] [--flap=gpu-node-003/mlx5_5/1@8s]");
  static absl::Notification stop;
  railwatch::NotifyOnTerminationSignal(stop);
  absl::ParseCommandLine(argc, argv);
  if (absl::Status s = railwatch::InitLogging("railwatch-sim", absl::GetFlag(FLAGS_log_level)); !s.ok()) {
    std::cerr << "railwatch-sim: " << s.message() << "\n";
    return 2;
  }
  railwatch::sim::SysfsFabric::Options o;
  o.root = absl::GetFlag(FLAGS_root);
  if (o.root.empty()) {
    spdlog::critical("--root is required");
    return 2;
  }
  o.hosts = absl::GetFlag(FLAGS_hosts);
  o.nics_per_host = absl::GetFlag(FLAGS_nics);
  o.seed = absl::GetFlag(FLAGS_seed);
  o.link_gbps = absl::GetFlag(FLAGS_link_gbps);
  o.ground_truth_file = absl::GetFlag(FLAGS_ground_truth);
  for (const std::string& spec : absl::GetFlag(FLAGS_flap)) {
    absl::StatusOr<railwatch::sim::LinkFlap> f = railwatch::sim::ParseLinkFlap(spec);
    if (!f.ok()) {
      spdlog::critical("{}", f.status().message());
      return 2;
    }
    f->down_for = absl::GetFlag(FLAGS_flap_down_for);
    o.flaps.push_back(*f);
  }
  railwatch::sim::SysfsFabric fabric(o);
  const absl::Time start = absl::Now();
  if (absl::Status s = fabric.Create(start); !s.ok()) {
    spdlog::critical("{}", s.message());
    return 1;
  }
  spdlog::info("simulating {} hosts x {} NICs under {}", o.hosts, o.nics_per_host, o.root);
  const absl::Duration tick = absl::GetFlag(FLAGS_tick);
  const absl::Duration duration = absl::GetFlag(FLAGS_duration);
  absl::Time next = start;
  while (!stop.HasBeenNotified()) {
    const absl::Time now = absl::Now();
    if (duration > absl::ZeroDuration() && now - start >= duration) break;
    if (absl::Status s = fabric.Tick(now); !s.ok()) {
      spdlog::critical("{}", s.message());
      return 1;
    }
    next += tick;
    if (next < now) next = now;
    stop.WaitForNotificationWithDeadline(next);
  }
  return 0;
}
