#pragma once

// A simulated host fabric on a fake clock for the sim_host tests: ticks of 100 ms as
// railwatch-sim's loop makes them, and readers of what it wrote (sysfs counters, ethtool dumps,
// ground truth, NCCL logs).

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "sim/sysfs_fabric.h"
#include "support/ttar.h"

namespace railwatch::sim::testing {

class HostSim {
 public:
  // `o`'s root and ground truth file are set to a temporary directory.
  explicit HostSim(SysfsFabric::Options o);
  ~HostSim();

  static constexpr absl::Duration kTick = absl::Milliseconds(100);
  const absl::Time t0 = absl::FromUnixSeconds(1'800'000'000);

  // Ticks until `offset` after t0 (inclusive), 100 ms at a time.
  void RunTo(absl::Duration offset);
  absl::Duration now() const { return now_; }

  SysfsFabric& fabric() { return *fabric_; }
  const std::string& root() const { return root_; }
  std::string Host(int h) const;  // <root>/gpu-node-00h

  // ports/1/<counter> of mlx5_<nic> on host h.
  uint64_t Sysfs(int h, int nic, const std::string& counter) const;
  // The ethtool dump of mlx5_<nic>'s netdev on host h, name -> value ({} when it is gone).
  std::map<std::string, uint64_t> Ethtool(int h, int nic) const;
  uint64_t Ethtool(int h, int nic, const std::string& stat) const;
  // Ground-truth lines written so far.
  std::vector<nlohmann::json> Truth() const;

 private:
  railwatch::testing::TempDir dir_;
  std::string root_, truth_;
  std::unique_ptr<SysfsFabric> fabric_;
  absl::Duration now_;
};

// SysfsFabric options for `hosts` x `nics` running one job "train" on all hosts at `util`,
// without the bursty noise (tests want steady figures unless they ask for noise).
SysfsFabric::Options OneJob(int hosts, int nics, double util = 0.8);

}  // namespace railwatch::sim::testing
