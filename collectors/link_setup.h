#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "collectors/collector.h"
#include "common/clock.h"

namespace railwatch {

// What the agent's --netdevs, --ethtool, --ethtool_dumps and --link_events flags say.
struct NetdevCollectorsOptions {
  // Netdev sysfs follows the RDMA root: one root is one host's view, so a simulator or
  // fixture tree brings its class/net along with class/infiniband.
  std::string sysfs_root = "/sys";
  // NetdevSelector pattern; empty: netdevs with a device, and those behind RDMA ports.
  std::string netdevs;
  bool ethtool = true;
  // Non-empty: read ethtool statistics from DIR/<netdev>/{stats,driver} (DirEthtoolBackend)
  // instead of SIOCETHTOOL.
  std::string ethtool_dumps;
  bool link_events = true;
  absl::Duration rescan_interval = absl::Seconds(30);
  absl::Duration detail_interval = absl::ZeroDuration();  // LinkCollector::Options
};

// Appends the ethtool collector (when enabled) and the link collector (carrier counters,
// plus netlink events when enabled) to `collectors`. Fails only on a bad pattern. A source
// that cannot start here (no netlink socket, no ioctl socket) is logged and left out: the
// other collectors go on.
absl::Status AddNetdevCollectors(const NetdevCollectorsOptions& options, const Clock& clock,
                                 std::vector<std::unique_ptr<Collector>>& collectors);

}  // namespace railwatch
