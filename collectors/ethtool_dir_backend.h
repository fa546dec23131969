#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "collectors/ethtool_backend.h"

namespace railwatch {

// An EthtoolBackend that reads `ethtool -S` dumps from a directory instead of asking the kernel
// (the agent's --ethtool_dumps=DIR, which the simulator writes):
//
//   DIR/<netdev>/stats    `ethtool -S <netdev>` output (parsed by ParseEthtoolStats)
//   DIR/<netdev>/driver   the driver as `ethtool -i` names it ("mlx5_core"), one line
//
// Both files are read again on every Read(), so a writer may rewrite them in place between
// cycles (replacing them with rename() keeps a reader from seeing half a file). A netdev whose
// directory or files are missing is NotFound, as a netdev that went away is for the ioctl
// backend; a different set of statistics (count, names or driver) is FailedPrecondition, so
// the collector maps the netdev again. Lines that are not "name: counter" are logged as
// "DIR/<netdev>/stats:N: ..." (once for as long as they stay the same) and skipped.
class DirEthtoolBackend final : public EthtoolBackend {
 public:
  explicit DirEthtoolBackend(std::string dir);

  absl::StatusOr<std::unique_ptr<EthtoolDevice>> Open(const std::string& netdev) override;

  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
};

}  // namespace railwatch
