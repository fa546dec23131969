#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace railwatch {

// One netdev's `ethtool -S` statistics (ETH_SS_STATS), opened at discovery. The names are
// fixed for the life of the object; Read() fetches every value at once, so a cycle costs one
// call per netdev and no string work.
class EthtoolDevice {
 public:
  virtual ~EthtoolDevice() = default;
  // The driver as ETHTOOL_GDRVINFO names it ("mlx5_core", "bnxt_en", "ice", "veth").
  virtual const std::string& driver() const = 0;
  // Statistic names, in the order of the values Read() returns.
  virtual const std::vector<std::string>& stat_names() const = 0;
  // Every value, index for index with stat_names(). The span is valid until the next Read().
  // FailedPrecondition: the netdev now reports a different number of statistics (channels or
  // PFC settings changed), so the names are stale: open it again. NotFound: the netdev is gone.
  virtual absl::StatusOr<std::span<const uint64_t>> Read() = 0;
};

// Where ethtool statistics come from: the kernel (IoctlEthtoolBackend), dump files in a
// directory (DirEthtoolBackend, the agent's --ethtool_dumps) or recorded dumps
// (DumpEthtoolBackend, for tests and the simulator).
class EthtoolBackend {
 public:
  virtual ~EthtoolBackend() = default;
  // NotFound: no such netdev. Unimplemented: the netdev has no statistics (lo, bonds, most
  // virtual devices); neither is a failure of the collector.
  virtual absl::StatusOr<std::unique_ptr<EthtoolDevice>> Open(const std::string& netdev) = 0;
};

}  // namespace railwatch
