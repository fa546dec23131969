#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "collectors/ethtool_backend.h"

namespace railwatch {

// ethtool statistics from the kernel through the SIOCETHTOOL ioctl, the interface `ethtool -S`
// itself uses: ETHTOOL_GDRVINFO for the driver and ETHTOOL_GSSET_INFO + ETHTOOL_GSTRINGS for
// the names when a netdev is opened, then one ETHTOOL_GSTATS per Read() into a buffer
// allocated at open. None of these needs privileges.
//
// The socket, and so every netdev name, belongs to the network namespace of the thread that
// called Create().
class IoctlEthtoolBackend final : public EthtoolBackend {
 public:
  static absl::StatusOr<std::unique_ptr<IoctlEthtoolBackend>> Create();
  ~IoctlEthtoolBackend() override;

  absl::StatusOr<std::unique_ptr<EthtoolDevice>> Open(const std::string& netdev) override;

 private:
  struct Socket;
  explicit IoctlEthtoolBackend(std::shared_ptr<const Socket> socket);
  // Shared with every device opened, so a device never outlives its descriptor.
  std::shared_ptr<const Socket> socket_;
};

}  // namespace railwatch
