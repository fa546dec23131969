#pragma once

// The host side's fault schedule (internal to SysfsFabric): which of the faults of its Options
// have started and ended. SysfsFabric::ApplyFaults (host_faults.cc) sets the NICs' state from
// it and writes the ground truth; SysfsFabric::Move* (host_traffic.cc) moves the counters.

#include <vector>

#include "sim/sysfs_fabric.h"

namespace railwatch::sim {

struct FaultProgress {
  explicit FaultProgress(const SysfsFabric::Options& o)
      : degrade(o.degrades.size()),
        misconfig(o.ecn_misconfigs.size()),
        storm(o.storms.size()),
        storm_over(o.storms.size()),
        deadlock(o.deadlocks.size()),
        deadlock_over(o.deadlocks.size()),
        ber(o.bit_errors.size()),
        straggler(o.stragglers.size()),
        slow_rank(o.slow_ranks.size()),
        rank_hang(o.rank_hangs.size()),
        wrong_priority(o.wrong_priorities.size()),
        gone(o.nics_gone.size()),
        loss(o.packet_losses.size()),
        nccl(o.nccl_errors.size()),
        reload(o.driver_reloads.size()),
        at_risk(o.links_at_risk.size()),
        at_risk_failed(o.links_at_risk.size()),
        health_reports(o.nic_health.size(), 0),
        aer_reports(o.pcie_aer.size(), 0),
        storm_next_warning(o.storms.size()) {}
  std::vector<bool> degrade, misconfig, storm, storm_over, deadlock, deadlock_over, ber,
      straggler, slow_rank, rank_hang, wrong_priority, gone, loss, nccl, reload, at_risk,
      at_risk_failed;
  // How many health reports each NIC health fault, and how many corrected errors each PCIe AER
  // fault, has written.
  std::vector<int> health_reports;
  std::vector<int64_t> aer_reports;
  // Storms under way: when their NIC next reports a stall-prevention warning.
  std::vector<absl::Time> storm_next_warning;
  // The NICs of the storms and deadlocks, looked at every tick.
  std::vector<NicPort*> storm_port, deadlock_port;
};

// gpu-node-007 -> 7 when it is one of `hosts` simulated hosts, else 0.
int SimHostIndex(absl::string_view host, int hosts);
// mlx5_3 -> 3 when it is one of `nics` NICs, else -1.
int SimNicIndex(absl::string_view device, int nics);

}  // namespace railwatch::sim
